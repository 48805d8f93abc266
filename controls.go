package main

// Operators' controls, through ZooKeeper rather than signals or ssh, from
// any host that reaches the ensemble:
//
//   <base>/step-down  persistent: asks the leader whose proposal it names
//                     to hand over (ballot step-down)
//   <base>/pause      persistent: while it exists the leader runs nothing
//                     (ballot pause / resume); it survives every restart
//   <base>/drain-<id> persistent: that candidate never leads (drain.go)
//   <base>/trigger    persistent: a run asked for now (trigger.go)
//
// Only the leader reads them (a session that led keeps its one watch on
// each until it fires), so an idle election pays nothing for them.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// controls is what a leader is asked to do, kept current by a watcher.
type controls struct {
	mu       sync.Mutex
	pause    *pauseRecord // nil: not paused
	stepDown bool         // a step-down names this leadership's proposal
	drained  bool         // ballot drain names this candidate
	// run cron: a run asked for by ballot trigger; nil: none
	trigger *triggerRequest
	// preemptTo: the leader itself decided to hand over to this preferred
	// candidate (preempt.go).
	preemptTo string
	// spreading: that handover spreads run crontab's leaderships over the
	// hosts, the successor's priority no lower (crontabspread.go).
	spreading bool
	changed   chan struct{}
}

// PreemptTo is the preferred candidate this leadership hands over to; "":
// none.
func (s *controls) PreemptTo() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preemptTo
}

func (s *controls) preempt(proposal string) {
	s.mu.Lock()
	s.preemptTo = proposal
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// spread hands over to proposal between runs, as preempt does, to spread
// leaderships.
func (s *controls) spread(proposal string) {
	s.mu.Lock()
	s.spreading = true
	s.mu.Unlock()
	s.preempt(proposal)
}

// handoverLine is the log line's message and event of a handover the
// leader decided on itself (preempt, spread).
func (s *controls) handoverLine() (string, logEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spreading {
		return "handing over between runs to spread the jobs' leaderships over the hosts (run crontab)", logEvSpreading
	}
	return "handing over to a candidate of higher priority (--preempt-after)", logEvPreempting
}

func (s *controls) Paused() *pauseRecord {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pause
}

func (s *controls) SteppingDown() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stepDown
}

// Drained says whether ballot drain names this candidate: it hands over
// as on step-down.
func (s *controls) Drained() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drained
}

// Trigger is the run asked for by ballot trigger; nil: none.
func (s *controls) Trigger() *triggerRequest {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trigger
}

// Changed is pinged whenever the controls change.
func (s *controls) Changed() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.changed
}

// set records what the control nodes say now, and pings Changed if the
// election was paused or resumed, or a step-down came or went; a pause
// record rewritten (a new reason) changes nothing for the leader.
func (s *controls) set(p *pauseRecord, stepDown, drained bool, trig *triggerRequest) {
	s.mu.Lock()
	changed := (p == nil) != (s.pause == nil) || stepDown != s.stepDown || drained != s.drained ||
		(trig == nil) != (s.trigger == nil) || (trig != nil && (trig.version != s.trigger.version || trig.czxid != s.trigger.czxid))
	s.pause, s.stepDown, s.drained, s.trigger = p, stepDown, drained, trig
	s.mu.Unlock()
	if changed {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

// parsePause reads the pause node's data; nil raw: no pause node. A pause
// node that cannot be read pauses all the same: it exists.
func parsePause(raw []byte) *pauseRecord {
	if raw == nil {
		return nil
	}
	p := &pauseRecord{}
	if jsonlite.Unmarshal(raw, p) != nil {
		p = &pauseRecord{Reason: "(unreadable pause record)"}
	}
	return p
}

// namesUs says whether the step-down node's data (nil raw: no node) asks
// the leadership of proposal to step down; one that cannot be read names
// nobody.
func namesUs(raw []byte, proposal string) bool {
	var sd stepDownRecord
	return raw != nil && jsonlite.Unmarshal(raw, &sd) == nil && sd.Proposal == proposal
}

// watchControls keeps the controls of the leadership of proposal f, on
// session zs, current until quit; the first state is read before it
// returns, so a leader elected into a paused election starts nothing.
func watchControls(zs *zookeeper.Session, f *proposalFacts, quit <-chan struct{}) *controls {
	s := &controls{changed: make(chan struct{}, 1)}
	paths := []string{f.basePath + "/" + pauseName, f.basePath + "/" + stepDownName, drainPath(f.basePath, f.id)}
	if f.triggers {
		paths = append(paths, f.basePath+"/"+triggerName)
	}
	type got struct {
		raw []byte
		st  *zk.Stat
		ev  <-chan zk.Event
		err error
	}
	read := func() ([]got, error) {
		// All at once: they are on the way from the take to the command.
		g := make([]got, len(paths))
		var wg sync.WaitGroup
		for i, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g[i].raw, g[i].st, g[i].ev, g[i].err = getOrWatchStat(zs, p)
			}()
		}
		wg.Wait()
		var errs []error
		for _, x := range g {
			errs = append(errs, x.err)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		var trig *triggerRequest
		if f.triggers {
			trig = parseTrigger(g[3].raw, g[3].st)
		}
		drained, _ := drainHolds(parseDrain(g[2].raw), hostBootID())
		s.set(parsePause(g[0].raw), namesUs(g[1].raw, f.node), drained, trig)
		return g, nil
	}
	// Each read, then a wait on its watches that takes no goroutine while
	// nothing changes (whenFirst): the next read runs on the goroutine the
	// wait's end starts.
	var after func(g []got, err error)
	after = func(g []got, err error) {
		for err != nil {
			if !zookeeper.Retryable(err) || zs.WaitOnline(quit) != nil {
				return
			}
			g, err = read()
		}
		chans := []any{quit, zs.Lost()}
		for i := range g {
			chans = append(chans, g[i].ev)
		}
		whenFirst(func(i int) {
			if i >= 2 { // a watch fired
				after(read())
			}
		}, chans...)
	}
	g, err := read()
	go after(g, err)
	return s
}

// getOrWatch reads path with a watch, or watches for its creation; raw is
// nil when it does not exist. It asks whether the node exists first: it
// usually does not, and then one round trip is all a new leader spends.
// The watch is the session's one on path (existsWatch): it fires at the
// node's creation, change or deletion.
func getOrWatch(s *zookeeper.Session, path string) ([]byte, <-chan zk.Event, error) {
	raw, _, ev, err := getOrWatchStat(s, path)
	return raw, ev, err
}

// getOrWatchStat is getOrWatch with the node's stat (nil: no node).
func getOrWatchStat(s *zookeeper.Session, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	for {
		ok, ev, err := s.ExistsWatch(path)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			return nil, nil, ev, nil
		}
		raw, st, err := s.Conn.Get(path)
		if err == nil {
			if raw == nil {
				raw = []byte{}
			}
			return raw, st, ev, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, nil, nil, err
		}
	}
}

// clearStepDown removes a step-down request that named proposal f, once
// it has been acted on.
func clearStepDown(zs *zookeeper.Session, f *proposalFacts) {
	p := f.basePath + "/" + stepDownName
	raw, st, err := zs.Conn.Get(p)
	if err == nil && namesUs(raw, f.node) {
		_ = zs.Conn.Delete(p, st.Version)
	}
}

func operator() string {
	host, _ := os.Hostname()
	name := "unknown"
	if u, ok := userName(); ok {
		name = u
	}
	return name + "@" + host
}

// runStepDown is `ballot step-down`: ask the leader (with --candidate-id,
// that candidate if it leads) to hand over; with --wait, wait until a
// different candidate leads. Exit 0 done, 1 not possible or not in time.
func runStepDown(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	conn := dialOperator(set, acc, log, "cannot read ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	s, err := readElection(conn, set.BasePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: cannot read ZooKeeper: "+err.Error())
		return exitFailure
	}
	l := s.lowestProposal()
	if set.CandidateID != "" {
		// With --slots, any holder may be the one named.
		for _, n := range s.proposals {
			if _, ok := s.holderSlot(n); ok && n.data != nil && n.data.CandidateID == set.CandidateID {
				l = n
			}
		}
	}
	switch {
	case l == nil:
		fmt.Fprintf(os.Stderr, "ballot: step-down: no candidate leads %s\n", set.BasePath)
		return exitNo
	case l.data == nil:
		fmt.Fprintf(os.Stderr, "ballot: step-down: the lowest proposal under %s is not ballot's\n", set.BasePath)
		return exitNo
	case set.CandidateID != "" && l.data.CandidateID != set.CandidateID:
		fmt.Fprintf(os.Stderr, "ballot: step-down: --candidate-id %s does not lead %s (%s does)\n", set.CandidateID, set.BasePath, l.data.CandidateID)
		return exitNo
	case len(s.proposals) < 2:
		fmt.Fprintf(os.Stderr, "ballot: step-down: %s leads %s and no other candidate is in line to take over\n", l.data.CandidateID, set.BasePath)
		return exitNo
	}
	old := l.data.CandidateID
	rec, _ := jsonlite.Marshal(stepDownRecord{Proposal: set.BasePath + "/" + l.name, CandidateID: old, By: operator(), At: time.Now().UTC()})
	p := set.BasePath + "/" + stepDownName
	_, err = conn.Create(p, rec, 0, acc.ACL)
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = conn.Set(p, rec, -1)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballot: step-down: %v\n", zookeeper.Failed(err, "write", p))
		return exitFailure
	}
	fmt.Fprintf(out, "asked %s to step down\n", old)
	if set.Wait <= 0 {
		return exitOK
	}
	deadline := time.Now().Add(set.Wait)
	for time.Now().Before(deadline) {
		s, err := readElection(conn, set.BasePath)
		if err == nil {
			if l := s.lowestProposal(); l != nil && l.data != nil && l.data.CandidateID != old && l.data.State == stateLeading {
				fmt.Fprintf(out, "%s leads\n", l.data.CandidateID)
				return exitOK
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "ballot: step-down: no other candidate leads %s within %s\n", set.BasePath, set.Wait)
	return exitNo
}

// dialOperator connects for an operator's command; on failure it prints
// "ballot: <failed>: why" and returns nil.
func dialOperator(set *Settings, acc *zookeeper.Access, log *slog.Logger, failed string) *zk.Conn {
	conn, err := zookeeper.DialReader(acc, set.SessionTimeout, log, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+failed+": "+err.Error())
		return nil
	}
	return conn
}

// runResume is `ballot resume`: the leader starts its command again.
func runResume(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	return removeControl(set, acc, log, out, "resume", set.BasePath+"/"+pauseName,
		set.BasePath+" was not paused", "resumed "+set.BasePath)
}

// removeControl is an operator's command that takes a control node away
// (resume, undrain): absent and done are what it prints either way.
func removeControl(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer, cmd, p, absent, done string) int {
	conn := dialOperator(set, acc, log, "cannot reach ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	err := conn.Delete(p, -1)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		fmt.Fprintln(out, absent)
	case err != nil:
		fmt.Fprintf(os.Stderr, "ballot: %s: %v\n", cmd, zookeeper.Failed(err, "delete", p))
		return exitFailure
	default:
		fmt.Fprintln(out, done)
	}
	return exitOK
}

// runPause is `ballot pause`: the leader stops its command and holds the
// lead running nothing until `ballot resume`.
func runPause(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	conn := dialOperator(set, acc, log, "cannot reach ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	p := set.BasePath + "/" + pauseName
	rec, _ := jsonlite.Marshal(pauseRecord{Reason: set.Reason, By: operator(), Since: time.Now().UTC()})
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
		fmt.Fprintf(os.Stderr, "ballot: pause: %v\n", zookeeper.Failed(err, "write", p))
		return exitFailure
	}
	fmt.Fprintf(out, "paused %s\n", set.BasePath)
	return exitOK
}
