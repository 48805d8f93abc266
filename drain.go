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
	"ballot/internal/zookeeper"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// errDrained: a follower leaves the line, drained (followContext).
var errDrained = errors.New("drained (ballot drain)")

// awaitUndrained returns at once unless this candidate is drained; then it
// waits, on the watch, until it is undrained (nil), stopped (errStopped) or
// its session is lost (errSessionLost).
func (r *runner) awaitUndrained(s *zookeeper.Session) error {
	p := drainPath(r.set.BasePath, r.set.CandidateID)
	waited := false
	for {
		raw, ev, err := getOrWatch(s, p)
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
		if raw == nil {
			if waited {
				r.log.Info("undrained (ballot undrain): standing for election again", logEvUndrained.attr())
			}
			return nil
		}
		if !waited {
			d := parseDrain(raw)
			r.log.Info("drained (ballot drain): not standing for election until ballot undrain", logEvDrained.attr(),
				"reason", d.Reason, "by", d.By)
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

// watchDrain closes drained when this candidate's drain node appears,
// until quit: a follower leaves the line then.
func (c *candidate) watchDrain(id string) (drained <-chan struct{}, quit func()) {
	ch, stop := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			raw, ev, err := getOrWatch(c.s, drainPath(c.basePath, id))
			switch {
			case err == nil && raw != nil:
				close(ch)
				return
			case err != nil:
				if !zookeeper.Retryable(err) || c.s.WaitOnline(stop) != nil {
					return
				}
				continue
			}
			select {
			case <-ev:
			case <-stop:
				return
			case <-c.s.Lost():
				return
			}
		}
	}()
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
	rec, _ := json.Marshal(drainRecord{CandidateID: set.CandidateID, Reason: set.Reason, By: operator(), Since: time.Now().UTC()})
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
	fmt.Fprintf(out, "drained %s in %s\n", set.CandidateID, set.BasePath)
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
	conn := dialOperator(set, acc, log, "cannot reach ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	p := drainPath(set.BasePath, set.CandidateID)
	err := conn.Delete(p, -1)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		fmt.Fprintf(out, "%s was not drained\n", set.CandidateID)
	case err != nil:
		fmt.Fprintf(os.Stderr, "ballot: undrain: %v\n", zookeeper.Failed(err, "delete", p))
		return exitFailure
	default:
		fmt.Fprintf(out, "undrained %s in %s\n", set.CandidateID, set.BasePath)
	}
	return exitOK
}
