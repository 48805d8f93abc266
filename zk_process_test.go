package main

// The harness's ZooKeeper processes: starting each member with java,
// killing it, waiting until it serves, and asking it what it is.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"ballot/internal/keeper"
)

func (m *zkMember) clientAddr() string { return fmt.Sprintf("127.0.0.1:%d", m.clientPort) }

func (m *zkMember) running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

func (c *zkCluster) javaArgs(m *zkMember) []string {
	cp := zkJar
	if _, err := os.Stat(zkSlf4jSimple); err == nil {
		cp += ":" + zkSlf4jSimple
	}
	for _, jar := range c.opts.ClassPath {
		cp += ":" + jar
	}
	args := []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
	}
	if c.links != nil {
		// Before JavaFlags: a later -D wins.
		args = append(args, fmt.Sprintf("-Dzookeeper.fastleader.maxNotificationInterval=%d", zkPeerMaxNotification.Milliseconds()))
	}
	args = append(args, c.opts.JavaFlags...)
	return append(args, "-cp", cp, zkMainClass, m.cfgPath)
}

// startProc launches member i's java process (no waiting). No-op if running.
func (c *zkCluster) startProc(i int) error {
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		select {
		case <-m.done:
		default:
			return nil // already running
		}
	}
	f, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close() // the child has its own copy
	fmt.Fprintf(f, "=== zk harness: starting member %d (client %d, quorum %d, election %d) at %s ===\n",
		m.id, m.clientPort, m.quorumPort, m.electionPort, time.Now().Format("15:04:05.000"))
	cmd := exec.Command("java", c.javaArgs(m)...)
	cmd.Dir = m.dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = keeper.NewGroupAttr(syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("member %d: starting java: %w", i, err)
	}
	done := make(chan struct{})
	m.cmd, m.done = cmd, done
	go func() {
		err := cmd.Wait()
		m.mu.Lock()
		m.waitErr = err
		m.mu.Unlock()
		close(done)
	}()
	return nil
}

// kill SIGKILLs member i's process group and waits for the exit.
func (c *zkCluster) kill(i int) error {
	m := c.members[i]
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("member %d (pid %d) did not exit 10s after SIGKILL", i, cmd.Process.Pid)
	}
}

func (c *zkCluster) killAll() error {
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range c.members {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := c.kill(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// close kills every server and closes the peer proxies. The directory is
// left to its owner.
func (c *zkCluster) close() {
	_ = c.killAll()
	c.closeLinks()
}

// start launches member i and, if wait, waits until it serves.
func (c *zkCluster) start(i int, wait bool) error {
	if err := c.startProc(i); err != nil {
		return err
	}
	if !wait {
		return nil
	}
	return c.waitMember(i, time.Now().Add(c.opts.ReadyTimeout))
}

func (c *zkCluster) startAll() error {
	for i := range c.members {
		if err := c.startProc(i); err != nil {
			return err
		}
	}
	return c.waitReady(c.opts.ReadyTimeout)
}

// waitReady waits until every running member serves.
func (c *zkCluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i := range c.members {
		if !c.members[i].running() {
			continue
		}
		if err := c.waitMember(i, deadline); err != nil {
			return err
		}
	}
	return nil
}

// waitMember polls srvr on member i until a Mode line appears, the process
// exits or the deadline passes.
func (c *zkCluster) waitMember(i int, deadline time.Time) error {
	m := c.members[i]
	for {
		m.mu.Lock()
		cmd, done := m.cmd, m.done
		m.mu.Unlock()
		if cmd == nil {
			return fmt.Errorf("member %d was never started", i)
		}
		select {
		case <-done:
			m.mu.Lock()
			werr := m.waitErr
			m.mu.Unlock()
			return fmt.Errorf("member %d (%s) exited before serving: %v\n%s", i, m.clientAddr(), werr, c.logTail(i, zkLogTailLines))
		default:
		}
		if mode, _ := c.mode(i); mode != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("member %d (%s) not serving after %v\n%s", i, m.clientAddr(), c.opts.ReadyTimeout, c.logTail(i, zkLogTailLines))
		}
		time.Sleep(zkPollInterval)
	}
}

// mode runs srvr on member i and returns its Mode ("" if not serving).
func (c *zkCluster) mode(i int) (string, error) {
	out, err := zkFourLetterWord(c.members[i].clientAddr(), "srvr", zkFourLetterTTL)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Mode:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", nil
}

// mntr runs mntr on member i and parses its "key\tvalue" lines.
func (c *zkCluster) mntr(i int) (map[string]string, error) {
	out, err := zkFourLetterWord(c.members[i].clientAddr(), "mntr", zkFourLetterTTL)
	if err != nil {
		return nil, err
	}
	res := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			res[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return res, nil
}

// zkFourLetterWord sends a four-letter command and returns the whole answer.
func zkFourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// logTail returns the last n lines of member i's server log.
func (c *zkCluster) logTail(i, n int) string {
	f, err := os.Open(c.members[i].logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 4*n {
			lines = append(lines[:0:0], lines[len(lines)-n:]...)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
