package main

// ballot drain / undrain: take a host out of the running from anywhere,
// across its reboots and ballot's restarts (Patroni's nofailover, pcs node
// standby):
//
//   <base>/drain-<candidate-id>  persistent: that candidate never leads
//
// Beside the proposals, not in a directory of their own: info and watch
// read them in the listing they already make.
//
// Each candidate keeps one watch on its own node and writes nothing. A
// drained candidate withdraws its proposal (a leader hands over first, as
// on step-down) and waits without one, its session kept, until ballot
// undrain; then it stands again at the back of the line. Were it to stay in
// line, every other candidate would have to skip it when deciding who leads.

import (
	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// errDrained: a follower leaves the line, drained (followContext).
var errDrained = errors.New("drained (ballot drain)")

// awaitUndrained returns at once unless this candidate is drained; then it
// waits, on the watch, until it is undrained (nil), stopped (errStopped) or
// its session is lost (errSessionLost). A drain until a reboot that this
// host has had since (another boot id) is over: it deletes that node, once
// (its version: a drain given meanwhile stays), and stands.
func (r *runner) awaitUndrained(s *zookeeper.Session) error {
	p := drainPath(r.set.BasePath, r.set.CandidateID)
	waited := false
	for {
		raw, st, ev, err := getOrWatchStat(s, p)
		d := parseDrain(raw)
		holds, expired := drainHolds(d, hostBootID())
		if err == nil && expired {
			err = s.Conn.Delete(p, st.Version)
			switch {
			case err == nil || errors.Is(err, zk.ErrNoNode):
				r.log.Info("the drain until reboot is over: this host rebooted since (ballot drain --until-reboot); standing for election",
					logEvUndrained.attr(), "reason", "rebooted", "by", d.By, "drained_boot_id", d.BootID, "boot_id", hostBootID())
				return nil
			case errors.Is(err, zk.ErrBadVersion):
				continue // drained again meanwhile: read that
			case !zookeeper.Retryable(err):
				r.log.Warn("the drain until reboot is over (this host rebooted since), but its node cannot be deleted; standing for election",
					"error", zookeeper.Failed(err, "delete", p), "by", d.By)
				return nil
			}
		}
		if err != nil {
			if !zookeeper.Retryable(err) {
				return err
			}
			if s.WaitOnline(r.stopping) != nil {
				if r.stopRequested() {
					return errStopped
				}
				return errSessionLost
			}
			continue
		}
		if !holds {
			if waited {
				r.log.Info("undrained (ballot undrain): standing for election again", logEvUndrained.attr())
			}
			return nil
		}
		if !waited {
			if d.UntilReboot {
				r.log.Info("drained (ballot drain --until-reboot): not standing for election until this host reboots or ballot undrain",
					logEvDrained.attr(), "reason", d.Reason, "by", d.By, "until", "reboot")
			} else {
				r.log.Info("drained (ballot drain): not standing for election until ballot undrain", logEvDrained.attr(),
					"reason", d.Reason, "by", d.By)
			}
			r.notify.Ready("drained")
			waited = true
		}
		select {
		case <-ev:
		case <-r.stopping:
			return errStopped
		case <-s.Lost():
			return errSessionLost
		}
	}
}

// watchDrain closes drained when the drain node of candidate id, in the
// election at basePath, appears, until quit: a follower leaves the line
// then.
func watchDrain(zs *zookeeper.Session, basePath, id string) (drained <-chan struct{}, quit func()) {
	ch, stop := make(chan struct{}), make(chan struct{})
	// Each read, then a wait on its watch that takes no goroutine while
	// nothing changes (whenFirst): the next read runs on the goroutine the
	// wait's end starts.
	var look func()
	look = func() {
		for {
			raw, ev, err := getOrWatch(zs, drainPath(basePath, id))
			switch {
			case err == nil && raw != nil:
				// One until a reboot this host has had since is no drain
				// (awaitUndrained deletes it at the next start).
				if holds, _ := drainHolds(parseDrain(raw), hostBootID()); holds {
					close(ch)
					return
				}
			case err != nil:
				if !zookeeper.Retryable(err) || zs.WaitOnline(stop) != nil {
					return
				}
				continue
			}
			whenFirst(func(i int) {
				if i == 0 {
					look()
				}
			}, ev, stop, zs.Lost())
			return
		}
	}
	go look()
	done := false
	return ch, func() {
		if !done {
			done = true
			close(stop)
		}
	}
}

// runDrain is `ballot drain --candidate-id ID`: that candidate never leads
// until ballot undrain; if it leads, it hands over.
func runDrain(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	conn := dialOperator(set, acc, log, "cannot reach ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	p := drainPath(set.BasePath, set.CandidateID)
	d := drainRecord{CandidateID: set.CandidateID, Reason: set.Reason, By: operator(), Since: time.Now().UTC()}
	if set.UntilReboot {
		boot, code := drainBootID(conn, set)
		if code != exitOK {
			return code
		}
		d.UntilReboot, d.BootID = true, boot
	}
	rec, _ := jsonlite.Marshal(d)
	_, err := conn.Create(p, rec, 0, acc.ACL)
	if errors.Is(err, zk.ErrNoNode) {
		if err = zookeeper.CreateParents(conn, set.BasePath, acc.ACL); err == nil {
			_, err = conn.Create(p, rec, 0, acc.ACL)
		}
	}
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = conn.Set(p, rec, -1)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballot: drain: %v\n", zookeeper.Failed(err, "write", p))
		return exitFailure
	}
	if d.UntilReboot {
		fmt.Fprintf(out, "drained %s in %s until its host reboots (boot id %s) or ballot undrain\n", set.CandidateID, set.BasePath, d.BootID)
	} else {
		fmt.Fprintf(out, "drained %s in %s\n", set.CandidateID, set.BasePath)
	}
	if set.Wait <= 0 {
		return exitOK
	}
	deadline := time.Now().Add(set.Wait)
	for time.Now().Before(deadline) {
		s, err := readElection(conn, set.BasePath)
		if err == nil && !s.hasCandidate(set.CandidateID) {
			fmt.Fprintf(out, "%s is out of the line\n", set.CandidateID)
			return exitOK
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "ballot: drain: %s is still in line in %s after %s\n", set.CandidateID, set.BasePath, set.Wait)
	return exitNo
}

// drainBootID is the boot id a drain --until-reboot of set.CandidateID
// lasts for: the one its proposal published (the newest, if it has two),
// or, out of the line, the one of its drain until reboot in place. Else
// exit 1 with one line: nobody knows which boot to outlast, and a drain
// that never ends would be worse than none asked for.
func drainBootID(conn *zk.Conn, set *Settings) (string, int) {
	s, err := readElection(conn, set.BasePath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballot: drain: %v\n", err)
		return "", exitFailure
	}
	inLine := false
	boot, seq := "", int64(-1)
	for _, n := range s.proposals {
		if n.data != nil && n.data.CandidateID == set.CandidateID && n.seq > seq {
			inLine, boot, seq = true, n.data.BootID, n.seq
		}
	}
	if boot != "" {
		return boot, exitOK
	}
	if !inLine {
		for _, d := range drainedOf(s) {
			if d.CandidateID == set.CandidateID && d.BootID != "" {
				return d.BootID, exitOK
			}
		}
		fmt.Fprintf(os.Stderr, "ballot: drain: --until-reboot: %s is not in line in %s, so its host's boot id is unknown; "+
			"drain it while it stands, or without --until-reboot (until undrain)\n", set.CandidateID, set.BasePath)
		return "", exitNo
	}
	fmt.Fprintf(os.Stderr, "ballot: drain: --until-reboot: %s published no boot id (a ballot older than drain --until-reboot, "+
		"or no /proc/sys/kernel/random/boot_id); drain it without --until-reboot (until undrain)\n", set.CandidateID)
	return "", exitNo
}

// hasCandidate says whether a proposal of candidate id is in line.
func (s *electionSnapshot) hasCandidate(id string) bool {
	for _, n := range s.proposals {
		if n.data != nil && n.data.CandidateID == id {
			return true
		}
	}
	return false
}

// runUndrain is `ballot undrain --candidate-id ID`.
func runUndrain(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	return removeControl(set, acc, log, out, "undrain", drainPath(set.BasePath, set.CandidateID),
		set.CandidateID+" was not drained", "undrained "+set.CandidateID+" in "+set.BasePath)
}
