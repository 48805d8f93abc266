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
	for {
		n, err := r.Read(buf)
		take(buf[:n])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			drainOutput(r, buf, take)
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
