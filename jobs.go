package main

// ballot jobs: every election one level under the base path (a crontab's
// jobs, each a run cron election at <base>/<job>) on one line each, read
// in one session. Each job is read as info reads an election (readSource,
// buildInfo) and shown through info's model; the list itself is
// jobs_list.go's.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// jobsInFlight is how many elections are read at once. go-zookeeper has
// no asynchronous calls, but the calls of several goroutines share the
// session's connection and are answered in order: their round trips
// overlap instead of adding up.
const jobsInFlight = 32

// jobEntry is one job of `ballot jobs --output json`. Field names are
// stable (docs/operating.md).
type jobEntry struct {
	Job      string    `json:"job"`      // its name: the child of the base path
	Election string    `json:"election"` // its path
	ReadAt   time.Time `json:"readAt"`   // this host's clock, as info's
	// Leader: the first in line, as info's leader (fencingToken, state,
	// nextRun, lastExit, …); null when nobody leads.
	Leader *infoCandidate `json:"leader"`
	// Marks: what the LEADER column adds: paused, stepping-down, drained.
	Marks []string `json:"marks"`
	// Last: the newest entry of its history (a run, or times skipped),
	// as ballot history shows it; null when it has none.
	Last *historyItem `json:"last"`
	// NextRun: the leader's next scheduled time; null without a run cron
	// leader.
	NextRun    *infoNextRun    `json:"nextRun"`
	Candidates []infoCandidate `json:"candidates"` // in line, the leader first
	Cron       *infoCron       `json:"cron,omitempty"`
	Paused     *pauseRecord    `json:"paused,omitempty"`
	StepDown   *stepDownRecord `json:"stepDown,omitempty"`
	Drained    []drainRecord   `json:"drained,omitempty"`
}

// Marks of the LEADER column (jobEntry.Marks).
const (
	markPaused   = "paused"
	markStepping = "stepping-down"
	markDrained  = "drained"
)

// jobRead is one election under the base path, as read.
type jobRead struct {
	name string
	s    *electionSnapshot
}

// holdsElection: the snapshot has something of an election of its own.
func (s *electionSnapshot) holdsElection() bool {
	return len(s.proposals) > 0 || s.baton != nil || s.handover != nil || s.cron != nil || s.history != nil ||
		s.once != nil || s.ackNode != nil
}

// eachJob calls read(i) for i in [0, n), jobsInFlight at once, and is
// the error of the first i that failed (one line, not one per job when
// the session is gone).
func eachJob(n int, read func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, jobsInFlight)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = read(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// electionAt lists path's children and says whether path holds an
// election (holdsElectionAt).
func electionAt(conn *zk.Conn, path string) (names []string, ok bool, err error) {
	names, exists, err := readSource(conn, path).children()
	if err != nil || !exists {
		return nil, false, err
	}
	ok, err = holdsElectionAt(conn, path, names)
	return names, ok, err
}

// holdsElectionAt says whether path, whose children are names, holds an
// election: a proposal in line, or the record the first leader's take
// wrote on the path itself (nodes.go). Other nodes are not ballot's.
func holdsElectionAt(conn *zk.Conn, path string, names []string) (bool, error) {
	for _, n := range names {
		if isProposal(n) {
			return true, nil
		}
	}
	raw, _, err := conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, zookeeper.Error(err, "read", path)
	}
	rec, ok := parseElectionRecord(raw)
	return ok && rec.BatonWaitMs > 0, nil
}

// readJob reads the election at path, and its newest history entry; nil
// if path holds no election. Round trips: one listing (and a read of the
// path when no proposal is in line), one read per child, and with a
// history two more.
func readJob(conn *zk.Conn, path string) (*electionSnapshot, error) {
	names, ok, err := electionAt(conn, path)
	if err != nil || !ok {
		return nil, err
	}
	src := readSource(conn, path)
	src.children = func() ([]string, bool, error) { return names, true, nil }
	s, err := readSnapshot(src)
	if err == nil && s.history != nil {
		s.runs, err = readHistory(conn, path, 1, nil)
	}
	return s, err
}

// readJobs reads every election one level under base, by name; exists
// is false if base does not exist, own true if base holds an election
// itself. Every child is looked at, whatever its name: a job may be
// called "cron" or "history". alive is called as each child is read.
func readJobs(conn *zk.Conn, base string, alive func()) (jobs []jobRead, exists, own bool, err error) {
	names, exists, err := readSource(conn, base).children()
	if err != nil || !exists {
		return nil, exists, false, err
	}
	if own, err = holdsElectionAt(conn, base, names); err != nil {
		return nil, true, false, err
	}
	sortStrings(names)
	snaps := make([]*electionSnapshot, len(names))
	err = eachJob(len(names), func(i int) (err error) {
		snaps[i], err = readJob(conn, base+"/"+names[i])
		alive()
		return err
	})
	if err != nil {
		return nil, true, own, err
	}
	for i, s := range snaps {
		if s != nil {
			jobs = append(jobs, jobRead{names[i], s})
		}
	}
	return jobs, true, own, nil
}

// countJobs is how many of names, children of base, hold an election.
func countJobs(conn *zk.Conn, base string, names []string) (int, error) {
	found := make([]bool, len(names))
	err := eachJob(len(names), func(i int) (err error) {
		_, found[i], err = electionAt(conn, base+"/"+names[i])
		return err
	})
	n := 0
	for _, f := range found {
		if f {
			n++
		}
	}
	return n, err
}

// buildJob is one job, from info's model of its election.
func buildJob(name, base string, s *electionSnapshot, now time.Time) jobEntry {
	inf := buildInfo(base+"/"+name, nil, s, now)
	j := jobEntry{Job: name, Election: inf.Election, ReadAt: inf.ReadAt, Leader: inf.Leader, Marks: []string{},
		Candidates: inf.Candidates, Cron: inf.Cron, Paused: inf.Paused, Drained: inf.Drained}
	if len(s.runs) > 0 {
		j.Last = s.runs[0] // buildInfo settled it
	}
	l := inf.Leader
	if l != nil {
		j.NextRun = l.NextRun
	}
	if inf.Paused != nil {
		j.Marks = append(j.Marks, markPaused)
	}
	if sd := inf.StepDown; l != nil && (sd != nil && sd.Proposal == l.ProposalNode || l.State == stateResigning) {
		j.StepDown = sd
		j.Marks = append(j.Marks, markStepping)
	}
	for _, d := range inf.Drained {
		if l == nil || d.CandidateID == l.ID {
			j.Marks = append(j.Marks, markDrained) // why nobody leads, or why it hands over
			break
		}
	}
	return j
}

// runJobs is `ballot jobs`: 0, 1 when the base path holds no election
// (as info without a candidate), 125 when ZooKeeper cannot be read.
func runJobs(set *Settings, acc *zookeeper.Access, log *slog.Logger, w io.Writer) int {
	base := set.BasePath
	var reads []jobRead
	var exists, own bool
	now, err := readWith(set, acc, log, "the jobs under "+base, func(conn *zk.Conn, alive func()) (err error) {
		reads, exists, own, err = readJobs(conn, base, alive)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: jobs: "+err.Error())
		return exitFailure
	}
	jobs := make([]jobEntry, len(reads))
	for i, r := range reads {
		jobs[i] = buildJob(r.name, base, r.s, now)
	}
	if set.Output == "json" {
		if err := writeJSON(w, jobs); err != nil {
			fmt.Fprintln(os.Stderr, "ballot: jobs: "+err.Error())
			return exitFailure
		}
	} else {
		writeJobs(w, jobs, base, exists, own, now)
	}
	if len(jobs) == 0 {
		return exitNo
	}
	return exitOK
}

// othersNames is the names of the nodes a snapshot found not ballot's.
func othersNames(s *electionSnapshot) []string {
	names := make([]string, len(s.others))
	for i, n := range s.others {
		names[i] = n.name
	}
	return names
}
