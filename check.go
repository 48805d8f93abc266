package main

// ballot check: a monitoring plugin by the Nagios/Icinga/Sensu convention.
// One status line on stdout, perfdata after "|", and the exit code is the
// verdict: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. Bad flags are UNKNOWN
// too (3), so a typo in a service definition never reads as CRITICAL.
// It needs nothing but ballot on the host: ssh host ballot check --max-age 26h.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

const (
	checkOK       = 0
	checkWarning  = 1
	checkCritical = 2
	exitUnknown   = 3 // check: UNKNOWN, also for bad flags
)

var checkNames = [...]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}

// checkFacts is what check judges, read from ZooKeeper.
type checkFacts struct {
	inf     *infoElection
	items   []*historyItem // newest first, down to the last success
	created time.Time      // the election path's creation (ZooKeeper's clock)
}

// checkResult is a verdict and its line.
type checkResult struct {
	status   int
	problems []string
	summary  []string
	perf     []string
}

func (r *checkResult) raise(status int, problem string) {
	r.status = max(r.status, status)
	r.problems = append(r.problems, problem)
}

func (r *checkResult) line(base string) string {
	parts := append(append([]string{}, r.problems...), r.summary...)
	s := fmt.Sprintf("BALLOT %s - %s: %s", checkNames[r.status], base, strings.Join(parts, "; "))
	if len(r.perf) > 0 {
		s += " | " + strings.Join(r.perf, " ")
	}
	return s
}

// judge applies check's rules to facts. neverRun is true when the
// election has no run and no --max-age: check cannot say anything useful.
func judge(set *Settings, f *checkFacts) (res checkResult, neverRun bool) {
	inf := f.inf
	if !inf.Exists {
		res.raise(exitUnknown, "the election does not exist (no candidate has ever run with this --zookeeper-base-path)")
		return res, false
	}
	last, lastOK := lastEnded(f.items)
	if last == nil && set.MaxAge == 0 {
		return res, true
	}
	res.judgeLeader(inf, f.items)
	if p := inf.Paused; p != nil {
		res.raise(checkWarning, fmt.Sprintf("paused by %s: %s", orNone(p.By), orNone(p.Reason)))
	}
	res.perf = append(res.perf, fmt.Sprintf("candidates=%d;;;0", len(inf.Candidates)))
	res.judgeLastRun(set, last)
	res.judgeLastSuccess(set, lastOK, f.created, inf.ReadAt)
	if len(res.problems) == 0 && len(res.summary) == 0 {
		res.summary = append(res.summary, "all well")
	}
	return res, false
}

// lastEnded finds the last run that ended and the last that succeeded
// (nil if none): a run going on is not judged.
func lastEnded(items []*historyItem) (last, lastOK *historyItem) {
	for _, it := range items {
		if it.ParseError != "" || it.Kind == historySkip || it.State != "ended" {
			continue
		}
		if last == nil {
			last = it
		}
		if it.succeeded() {
			return last, it
		}
	}
	return last, nil
}

// judgeLeader: who leads. --once-key jobs have no candidate between runs:
// every host's ballot exits after the key's run.
func (r *checkResult) judgeLeader(inf *infoElection, items []*historyItem) {
	switch l := inf.Leader; {
	case l == nil && onceJob(items):
		r.summary = append(r.summary, "no candidate in line (as between --once-key runs)")
	case l == nil:
		r.raise(checkCritical, "no leader: no candidate is in line")
	default:
		r.summary = append(r.summary, fmt.Sprintf("leader %s (token %d)", candidateName(l.ID, l.Host), l.Czxid))
		if b := inf.Baton; b != nil && b.State == "dropped" {
			r.raise(checkWarning, fmt.Sprintf("%s waits on a baton dropped by %s (up to %s)", orNone(l.ID), orNone(b.CandidateID), fmtMs(b.SuccessorWaitMs)))
		}
	}
}

// judgeLastRun: a failed last run warns (or is critical with
// --fail-critical).
func (r *checkResult) judgeLastRun(set *Settings, last *historyItem) {
	if last == nil {
		return
	}
	what := "last run " + summaryRun(last)
	if !last.succeeded() {
		if l := lastLine(last.Output); l != "" {
			what += ": " + strconv.Quote(strings.ReplaceAll(l, "|", "¦")) // "|" starts a plugin's performance data
		}
		status := checkWarning
		if set.FailCritical {
			status = checkCritical
		}
		r.raise(status, what)
	} else {
		r.summary = append(r.summary, what)
	}
	if last.DurationMs != nil {
		r.perf = append(r.perf, fmt.Sprintf("last_duration=%.3fs;;;0", float64(*last.DurationMs)/1000))
	}
	if last.ExitCode != nil {
		r.perf = append(r.perf, fmt.Sprintf("last_exit=%d", *last.ExitCode))
	}
}

// judgeLastSuccess: with --max-age, no success for that long is critical;
// an election younger than that with no success yet is not.
func (r *checkResult) judgeLastSuccess(set *Settings, lastOK *historyItem, created, now time.Time) {
	maxAge := ""
	if set.MaxAge > 0 {
		maxAge = fmt.Sprintf("%.0f", set.MaxAge.Seconds())
	}
	switch {
	case lastOK != nil:
		age := time.Duration(*lastOK.EndedAgoMs) * time.Millisecond
		r.perf = append(r.perf, fmt.Sprintf("last_success_age=%.0fs;;%s;0", age.Seconds(), maxAge))
		if set.MaxAge > 0 && age > set.MaxAge {
			r.raise(checkCritical, fmt.Sprintf("no run succeeded for %s (--max-age %s)", fmtMs(age.Milliseconds()), set.MaxAge))
		}
	case set.MaxAge > 0 && !created.IsZero() && now.Sub(created) <= set.MaxAge:
		r.summary = append(r.summary, fmt.Sprintf("no successful run yet; the election is %s old (--max-age %s)", fmtMs(now.Sub(created).Milliseconds()), set.MaxAge))
	case set.MaxAge > 0:
		r.raise(checkCritical, fmt.Sprintf("no successful run recorded (--max-age %s)", set.MaxAge))
	}
}

func candidateName(id, host string) string {
	if host == "" || host == id {
		return orNone(id)
	}
	return id + "@" + host
}

// onceJob reports whether the election's newest run is a --once-key run.
func onceJob(items []*historyItem) bool {
	for _, it := range items {
		if it.ParseError == "" && it.Kind != historySkip {
			return it.Kind == historyOnce
		}
	}
	return false
}

// runCheck is `ballot check`.
func runCheck(set *Settings, acc *zookeeper.Access, log *slog.Logger, w io.Writer) int {
	f := &checkFacts{}
	s, now, err := readElectionWith(set, acc, log, func(conn *zk.Conn, _ *electionSnapshot) (err error) {
		f.items, err = readHistory(conn, set.BasePath, historyKeep, func(it *historyItem) bool { return it.succeeded() })
		if err != nil {
			return err
		}
		if ok, st, err := conn.Exists(set.BasePath); err == nil && ok {
			f.created = time.UnixMilli(st.Ctime).UTC()
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(w, "BALLOT UNKNOWN - %s: %s\n", set.BasePath, err)
		return exitUnknown
	}
	settleHistory(f.items, batonTokens(s), now)
	f.inf = buildInfo(set.BasePath, set.ZooKeeperServers, s, now)
	res, neverRun := judge(set, f)
	if neverRun {
		fmt.Fprintf(w, "BALLOT UNKNOWN - %s: no run recorded yet; give --max-age (e.g. --max-age 26h for a daily job) so that check knows when that is wrong\n", set.BasePath)
		return exitUnknown
	}
	fmt.Fprintln(w, res.line(set.BasePath))
	return res.status
}
