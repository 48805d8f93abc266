package main

// The harness's faults on members, beyond Kill and CutOff:
//
//	c.Pause(i); c.Resume(i)    // SIGSTOP / SIGCONT member i's JVM (a GC pause)
//	c.Restart(i)               // SIGTERM (as an upgrade does), start, wait until whole
//	c.RollingRestart()         // every member in turn, the ZooKeeper leader last
//	c.SetMemberConfig(i, "syncLimit=2")  // member i's own zoo.cfg lines, from its next start
//	c.Depose(l)                // the leader's followers get a reset, the leader silence
//
// Depose is the asymmetric failure that lets a deposed ZooKeeper leader
// answer its clients while the others have already elected a new one: the
// followers' quorum connections to it are reset on their side only, so they
// re-elect among themselves at once, while the leader hears nothing until
// its own syncLimit × tickTime check. Members with a shorter syncLimit or
// tickTime than their leader (SetMemberConfig, during a rolling
// configuration change) do the same on a plain CutOff.

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// zkTermTimeout bounds a member's exit after SIGTERM (it takes about 2 s).
const zkTermTimeout = 30 * time.Second

// Pause stops member i's JVM with SIGSTOP, as a long garbage collection
// would: its sockets stay open, nothing is answered until Resume.
func (c *zkCluster) Pause(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.signal(i, syscall.SIGSTOP); err != nil {
		c.fatalf("%v", err)
	}
	// kill(2) returns before the JVM's threads have stopped (each stops
	// when it next runs): on a busy machine a thread already running can
	// still answer a request. Paused means every thread stopped.
	if err := c.awaitStopped(i, 10*time.Second); err != nil {
		c.fatalf("%v", err)
	}
}

// awaitStopped waits until every thread of member i's JVM is stopped
// (state T in /proc/PID/task/TID/stat).
func (c *zkCluster) awaitStopped(i int, timeout time.Duration) error {
	pid, err := c.runningPid(i)
	if err != nil {
		return err
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	for deadline := time.Now().Add(timeout); ; time.Sleep(time.Millisecond) {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("member %d: %v", i, err)
		}
		running := 0
		for _, task := range tasks {
			stat, err := os.ReadFile(dir + "/" + task.Name() + "/stat")
			if err != nil {
				continue // a thread that ended
			}
			// pid (comm) STATE ...: comm may hold spaces and parentheses.
			if j := bytes.LastIndexByte(stat, ')'); j < 0 || j+2 >= len(stat) || (stat[j+2] != 'T' && stat[j+2] != 't') {
				running++
			}
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("member %d: %d threads still running %v after SIGSTOP", i, running, timeout)
		}
	}
}

// Resume continues a member stopped by Pause.
func (c *zkCluster) Resume(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.signal(i, syscall.SIGCONT); err != nil {
		c.fatalf("%v", err)
	}
}

// Restart stops member i with SIGTERM, as an upgrade would, starts it
// again and waits until it serves and the ensemble is whole: every member
// that runs serves, one of them as the leader.
func (c *zkCluster) Restart(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.restart(i); err != nil {
		c.fatalf("%v", err)
	}
}

// RollingRestart restarts every member with Restart, one at a time, the
// followers first and the ZooKeeper leader last, and returns the order.
func (c *zkCluster) RollingRestart() []int {
	if c.tb != nil {
		c.tb.Helper()
	}
	order, err := c.rollingRestart()
	if err != nil {
		c.fatalf("%v", err)
	}
	return order
}

// SetMemberConfig sets zoo.cfg lines of member i's own ("key=value"),
// written after every other line (a later key wins), from its next start
// on. zkOptions.MemberConfig sets them for the first start.
func (c *zkCluster) SetMemberConfig(i int, lines ...string) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.setMemberConfig(i, lines); err != nil {
		c.fatalf("%v", err)
	}
}

// Depose deposes member l, the ZooKeeper leader, asymmetrically (needs
// PeerProxies): every peer link of l is silenced as by CutOff(l), and the
// followers' side of their quorum connections to l is reset. They re-elect
// among themselves at once; l hears only silence and goes on answering its
// clients until its own syncLimit × tickTime check. Heal(l) lifts it.
func (c *zkCluster) Depose(l int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.depose(l); err != nil {
		c.fatalf("%v", err)
	}
}

// WaitWhole waits until every running member serves as leader or follower
// and one of them leads.
func (c *zkCluster) WaitWhole(timeout time.Duration) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.waitWhole(time.Now().Add(timeout)); err != nil {
		c.fatalf("%v", err)
	}
}

// ---------------------------------------------------------------------------

// signal sends sig to member i's process group.
func (c *zkCluster) signal(i int, sig syscall.Signal) error {
	pid, err := c.runningPid(i)
	if err != nil {
		return err
	}
	return syscall.Kill(-pid, sig)
}

// runningPid is member i's JVM (its process group's leader).
func (c *zkCluster) runningPid(i int) (int, error) {
	m := c.members[i]
	m.mu.Lock()
	cmd := m.cmd
	m.mu.Unlock()
	if cmd == nil || !m.running() {
		return 0, fmt.Errorf("member %d is not running", i)
	}
	return cmd.Process.Pid, nil
}

// terminate stops member i with SIGTERM (and SIGCONT, should it be paused)
// and waits for it to exit; past zkTermTimeout it is killed, and that is an
// error.
func (c *zkCluster) terminate(i int) error {
	m := c.members[i]
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil || !m.running() {
		return nil
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	select {
	case <-done:
		return nil
	case <-time.After(zkTermTimeout):
		_ = c.kill(i)
		return fmt.Errorf("member %d (pid %d) did not exit %v after SIGTERM", i, cmd.Process.Pid, zkTermTimeout)
	}
}

func (c *zkCluster) restart(i int) error {
	t0 := time.Now()
	was := c.Mode(i)
	if err := c.terminate(i); err != nil {
		return err
	}
	stopped := time.Now()
	deadline := time.Now().Add(c.opts.ReadyTimeout)
	if err := c.startProc(i); err != nil {
		return err
	}
	if err := c.waitMember(i, deadline); err != nil {
		return err
	}
	if err := c.waitWhole(deadline); err != nil {
		return fmt.Errorf("after restarting member %d: %w", i, err)
	}
	c.logf("zk harness: member %d (%s) restarted: down after %v, whole again %v later (now %s)",
		i, was, stopped.Sub(t0).Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond), c.Mode(i))
	return nil
}

func (c *zkCluster) rollingRestart() ([]int, error) {
	var order []int
	done := make([]bool, len(c.members))
	for len(order) < len(c.members) {
		// The next follower not yet restarted; the leader once none is left.
		next := -1
		for i := range c.members {
			if !done[i] && c.Mode(i) == "follower" {
				next = i
				break
			}
		}
		for i := range c.members {
			if next < 0 && !done[i] {
				next = i
			}
		}
		if err := c.restart(next); err != nil {
			return order, err
		}
		done[next] = true
		order = append(order, next)
	}
	return order, nil
}

// waitWhole polls until every running member serves as leader or follower
// and exactly one leads.
func (c *zkCluster) waitWhole(deadline time.Time) error {
	for {
		serving, leaders := 0, 0
		var modes []string
		running := 0
		for i := range c.members {
			if !c.members[i].running() {
				modes = append(modes, "down")
				continue
			}
			running++
			m := c.Mode(i)
			modes = append(modes, fmt.Sprintf("%q", m))
			switch m {
			case "leader":
				leaders++
				serving++
			case "follower":
				serving++
			}
		}
		if serving == running && leaders == 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the ensemble is not whole: modes %v", modes)
		}
		time.Sleep(zkPollInterval)
	}
}

func (c *zkCluster) setMemberConfig(i int, lines []string) error {
	m := c.members[i]
	m.mu.Lock()
	m.extra = append([]string(nil), lines...)
	m.mu.Unlock()
	return os.WriteFile(m.cfgPath, []byte(c.config(m)), 0o644)
}

func (c *zkCluster) depose(l int) error {
	if err := c.setCut(l, true); err != nil {
		return err
	}
	for j := range c.links {
		if j != l {
			c.links[j][l].quorum.ResetClientSides()
		}
	}
	return nil
}
