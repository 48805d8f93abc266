package main

// The command's output with --wrap-child-logs: pipes whose lines become
// ballot's log lines, read to the end of what the command's tree wrote.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// wrapOutput, with --wrap-child-logs, pipes the command's stdout and
// stderr into log lines: it returns the pipes' write ends, to close once
// the keeper has them, and the relays, to start once the pid is known.
// Without it, the command writes to ballot's own stdout and stderr.
func (c *child) wrapOutput(wrap bool, streams *sync.WaitGroup) (out, errw *os.File, closeAfterStart []io.Closer, relays []func(), err error) {
	if !wrap {
		return os.Stdout, os.Stderr, nil, nil, nil
	}
	for _, name := range []string{"stdout", "stderr"} {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if name == "stdout" {
			out = w
		} else {
			errw = w
		}
		closeAfterStart = append(closeAfterStart, w)
		c.outputs = append(c.outputs, r)
		relays = append(relays, func() {
			streams.Add(1)
			go func() {
				defer streams.Done()
				c.relay(name, r)
			}()
		})
	}
	return out, errw, closeAfterStart, relays, nil
}

// relay turns each line the command writes into a log line. A read
// deadline (set by await once the tree is reaped) makes it read what is
// left in the pipe without waiting, then stop: the keeper, which holds the
// write end until it exits, writes nothing there.
func (c *child) relay(stream string, r *os.File) {
	defer r.Close()
	buf := make([]byte, 64*1024)
	var line []byte
	emit := func(b []byte) {
		text := strings.TrimRight(string(b), "\r\n")
		c.log.Info(text, "stream", stream, "pid", c.pid)
		if strings.TrimSpace(text) != "" {
			c.mu.Lock()
			c.lastLine = cutLastLine(text)
			c.mu.Unlock()
		}
	}
	take := func(b []byte) {
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				line = append(line, b...)
				if len(line) >= len(buf) { // as long a line as bufio would hold: cut
					emit(line)
					line = line[:0]
				}
				return
			}
			line = append(line, b[:i+1]...)
			emit(line)
			line, b = line[:0], b[i+1:]
		}
	}
	keep := take
	if c.tail != nil {
		keep = func(b []byte) { c.tail.Write(b); take(b) }
	}
	for {
		n, err := r.Read(buf)
		keep(buf[:n])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			drainOutput(r, buf, keep)
		}
		if err != nil {
			if len(line) > 0 {
				emit(line)
			}
			return
		}
	}
}

// drainOutput reads r until it is empty, without waiting for more.
func drainOutput(r *os.File, buf []byte, take func([]byte)) {
	_ = r.SetReadDeadline(time.Time{})
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), buf)
			return true // never wait in the poller
		}); err != nil || rerr != nil || n <= 0 {
			return
		}
		take(buf[:n])
	}
}

// outputTail keeps the last max bytes written to it (both streams, in the
// order they were read): what the history keeps of a run's output.
type outputTail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool // bytes before buf were dropped
}

// newOutputTail is the tail spec asks for; nil without one, or without
// pipes to read it from (--wrap-child-logs=false: the command writes to
// ballot's own stdout and stderr).
func newOutputTail(spec childSpec) *outputTail {
	if spec.Tail <= 0 || !spec.Wrap {
		return nil
	}
	return &outputTail{max: spec.Tail}
}

func (t *outputTail) Write(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
}

// String is the tail as valid UTF-8: a character cut at the start is
// dropped, invalid bytes become U+FFFD (never more bytes than kept).
func (t *outputTail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.cut {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	for len(s) > t.max { // replacement characters may be longer than the bytes they replace
		_, n := utf8.DecodeRuneInString(s)
		s = s[n:]
	}
	return s
}

// lastLineMax bounds the last line quoted in a failing run's WARN.
const lastLineMax = 200

func cutLastLine(s string) string {
	if len(s) <= lastLineMax {
		return s
	}
	cut := lastLineMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
