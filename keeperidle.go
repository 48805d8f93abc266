package main

// The idle keeper: a keeper with no command, which a cron leader keeps
// between runs. Should ballot die then (SIGKILL, OOM), the keeper does at
// once what it does after a command (keeperend.go): the on-demote hook,
// then the baton given back and the session closed. The next leader then
// starts in milliseconds instead of after the session's expiry and the
// dropped baton's wait (T + W, 8.75 s at T = 5 s).
//
// At most one keeper exists for a leader at any time: the idle one is
// told "bye", and gone, before a run's keeper starts, so that a release
// never comes while a command may still run.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// idleKeeperLine is the idle keeper's first report.
const idleKeeperLine = "idle"

// standIdle is the keeper's side: report, carry out orders until "bye"
// or EOF (ballot died: the demote hook and the release).
func (k *keeper) standIdle(control *os.File) int {
	k.tree = &tree{reaped: true} // nothing to signal
	k.dl.end()                   // nor any deadline to keep
	k.report(idleKeeperLine)
	go k.obey(control)
	<-k.over
	k.mu.Lock()
	died := !k.bye
	k.mu.Unlock()
	if died {
		k.afterBallot()
	}
	return 0
}

// idleKeeper is ballot's side.
type idleKeeper struct {
	c    *child // its control pipe (tell, bye); no command
	done chan struct{}
}

// startIdleKeeper starts an idle keeper that knows h (the session and
// the release) and demote (nil: none).
func startIdleKeeper(h *handoff, demote *demoteHook) (*idleKeeper, error) {
	self, err := keeperExecutable()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer statusR.Close()
	controlR, controlW, err := os.Pipe()
	if err != nil {
		statusW.Close()
		return nil, err
	}
	cmd := exec.Command(self, keeperArg, strconv.Itoa(os.Getpid()), "0", "0", "0", "--")
	cmd.Args[0] = "ballot-keeper"
	// The on-demote hook, should it run, writes where the command would.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{statusW, controlR, os.Stderr}
	cmd.SysProcAttr = newGroupAttr(syscall.SIGTERM)
	err = cmd.Start()
	statusW.Close()
	controlR.Close()
	if err != nil {
		controlW.Close()
		return nil, fmt.Errorf("cannot start the keeper: %w", err)
	}
	k := &idleKeeper{c: &child{keeper: cmd, control: controlW}, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(k.done)
	}()
	_ = statusR.SetReadDeadline(time.Now().Add(keeperStartLimit))
	first, _ := bufio.NewReader(statusR).ReadString('\n')
	if strings.TrimSpace(first) != idleKeeperLine {
		k.stop()
		return nil, fmt.Errorf("the idle keeper did not start: %q", strings.TrimSpace(first))
	}
	if h != nil {
		k.c.tellHandoff(h)
	}
	if demote != nil {
		k.c.tell(demote.line())
	}
	return k, nil
}

// stop says "bye" and waits for the keeper to be gone.
func (k *idleKeeper) stop() {
	if k == nil {
		return
	}
	k.c.bye()
	select {
	case <-k.done:
	case <-time.After(keeperUnresponsive):
		_ = k.c.keeper.Process.Kill()
		<-k.done
	}
}
