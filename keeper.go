package main

// The keeper is ballot re-executed as a tiny supervisor between ballot and
// the command. It exists for one reason: when ballot is killed with SIGKILL
// nothing in ballot can run, yet the command and every process it started
// must die with it. The keeper is a child subreaper, so orphaned
// grandchildren (even ones that called setsid) are reparented to it, and it
// learns of ballot's death twice over: the parent-death signal and EOF on its
// control pipe. It then kills the command's whole tree and reaps it.
//
// Protocol (file descriptors set up by startChild):
//   fd 3, keeper → ballot: "pid N" once the command runs, then
//         "exit CODE" when the command and all its descendants are gone,
//         or "error CODE message" if the command could not be started.
//   fd 4, ballot → keeper: one byte per signal to send to the whole tree
//         (SIGKILL: keep killing until it is all gone); EOF means ballot died.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const keeperArg = ".ballot-keeper"

const prSetChildSubreaper = 36

func keeperMain(args []string) int {
	// args: parentPID graceMillis -- command...
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "ballot: the keeper is internal to ballot")
		return 2
	}
	parent, _ := strconv.Atoi(args[0])
	graceMs, _ := strconv.Atoi(args[1])
	grace := time.Duration(graceMs) * time.Millisecond
	argv := args[3:]

	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	status := os.NewFile(3, "status")
	control := os.NewFile(4, "control")
	report := func(format string, a ...any) { fmt.Fprintf(status, format+"\n", a...) }

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if os.Getppid() != parent {
		return 0 // ballot died before we could watch it
	}

	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := 127
		if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
			code = 126
		}
		report("error %d %s", code, oneLine(err.Error()))
		return 0
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		code := 126
		if errors.Is(err, syscall.ENOENT) {
			code = 127
		}
		report("error %d %s: %s", code, argv[0], oneLine(err.Error()))
		return 0
	}
	report("pid %d", pid)

	t := &tree{pgid: pid}
	go func() {
		r := bufio.NewReader(control)
		for {
			b, err := r.ReadByte()
			switch {
			case err != nil:
				t.endAll(syscall.SIGKILL) // ballot is gone
				return
			case syscall.Signal(b) == syscall.SIGKILL:
				go t.endAll(syscall.SIGKILL)
			case b > 0:
				// ballot has already signalled the process group itself:
				// reach only what escaped it, so nothing gets it twice.
				t.signalEscaped(syscall.Signal(b))
			}
		}
	}()
	go func() {
		for range sigs {
			// While ballot lives, it stops the command itself (with the
			// grace period) and tells us through the control pipe: a
			// SIGTERM sent to every process at once (systemd's
			// KillMode=control-group, sysvinit's sendsigs) must not cut
			// that short. Once ballot is gone (the parent-death signal),
			// end it all.
			if os.Getppid() == parent {
				continue
			}
			t.endAll(syscall.SIGKILL)
		}
	}()

	code := -1
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: the whole tree is reaped
			break
		}
		if wpid == pid {
			code = exitCode(ws)
			// The command is done; whatever it left behind must not outlive
			// it, or a new leader's command would overlap with it.
			go t.endWithGrace(grace)
		}
	}
	report("exit %d", code)
	return 0
}

// tree is the command's process group plus any descendants that escaped it
// and were reparented to the keeper.
type tree struct {
	pgid int
	mu   sync.Mutex
	sig  syscall.Signal
}

func (t *tree) signal(sig syscall.Signal) {
	_ = syscall.Kill(-t.pgid, sig)
	t.signalEscaped(sig)
}

// signalEscaped signals the keeper's children that left the command's
// process group; those still in it get the group's signal, and a second
// delivery of, say, SIGHUP or SIGUSR1 would act twice.
func (t *tree) signalEscaped(sig syscall.Signal) {
	for _, p := range childrenOf(os.Getpid()) {
		if pg, err := syscall.Getpgid(p); err == nil && pg == t.pgid {
			continue
		}
		_ = syscall.Kill(p, sig)
	}
}

// endAll keeps signalling until the keeper has no children left.
func (t *tree) endAll(sig syscall.Signal) {
	t.mu.Lock()
	if t.sig == syscall.SIGKILL {
		t.mu.Unlock()
		return
	}
	t.sig = sig
	t.mu.Unlock()
	for {
		t.signal(sig)
		if len(childrenOf(os.Getpid())) == 0 && syscall.Kill(-t.pgid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (t *tree) endWithGrace(grace time.Duration) {
	if syscall.Kill(-t.pgid, 0) != nil && len(childrenOf(os.Getpid())) == 0 {
		return
	}
	t.signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if syscall.Kill(-t.pgid, 0) != nil && len(childrenOf(os.Getpid())) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.endAll(syscall.SIGKILL)
}

// childrenOf lists the live children of pid from /proc; empty when /proc is
// not mounted (then only the process group is signalled).
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if pp, _ := strconv.Atoi(f[1]); pp == pid {
			out = append(out, p)
		}
	}
	return out
}

func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
