package keeper

// The command's process tree as the keeper sees it: its process group and
// any descendants that escaped the group and were reparented to the keeper
// (a subreaper); signalling all of it, reaping it, and the exit code that
// reaping yields.

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// reapTree reaps every child of the keeper, which are t's processes; once
// there are none, t is retired.
func reapTree(t *tree, pid int, grace time.Duration) int {
	code := -1
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: the whole tree is reaped
			t.retire()
			return code
		}
		if wpid == pid {
			code = ExitCode(ws)
			// The command is done; whatever it left behind must not outlive
			// it, or a new leader's command would overlap with it.
			go t.endWithGrace(grace)
		}
	}
}

// tree is the command's process group plus any descendants that escaped it
// and were reparented to the keeper.
type tree struct {
	pgid int
	mu   sync.Mutex
	sig  syscall.Signal
	// Every process of the tree is reaped: nothing may be signalled any
	// more, as the keeper's children now are the on-demote hook's, and
	// the group's id may be a new process's.
	reaped bool
}

func (t *tree) retire() {
	t.mu.Lock()
	t.reaped = true
	t.mu.Unlock()
}

// gone: nothing of the tree is left.
func (t *tree) gone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reaped || (syscall.Kill(-t.pgid, 0) != nil && len(childrenOf(os.Getpid())) == 0)
}

func (t *tree) signal(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reaped {
		return
	}
	_ = syscall.Kill(-t.pgid, sig)
	t.escaped(sig)
}

// signalEscaped signals the keeper's children that left the command's
// process group; those still in it get the group's signal, and a second
// delivery of, say, SIGHUP or SIGUSR1 would act twice.
func (t *tree) signalEscaped(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.reaped {
		t.escaped(sig)
	}
}

func (t *tree) escaped(sig syscall.Signal) {
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
		if t.gone() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (t *tree) endWithGrace(grace time.Duration) {
	if t.gone() {
		return
	}
	t.signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if t.gone() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.endAll(syscall.SIGKILL)
}

// DescendantsOf lists every live process below pid, from /proc
// (listProcs, proc_linux.go).
func DescendantsOf(pid int) []int {
	parent := map[int]int{}
	for _, p := range listProcs() {
		parent[p.pid] = p.ppid
	}
	var out []int
	for p := range parent {
		for q, hops := parent[p], 0; q > 1 && hops < 64; q, hops = parent[q], hops+1 {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// childrenOf lists the live children of pid from /proc; empty when /proc is
// not mounted (then only the process group is signalled).
func childrenOf(pid int) []int {
	var out []int
	for _, p := range listProcs() {
		if p.ppid == pid {
			out = append(out, p.pid)
		}
	}
	return out
}

// ExitCode is the exit code a wait status means, 128+N for signal N as
// shells report it.
func ExitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
