package main

// ballot info: one look at an election, read from ZooKeeper in one session.
//
// Facts come from ZooKeeper: which proposals exist, their order (the lowest
// leads), their czxid (the leader's fencing token), their owner session and
// their ctime/mtime. Everything else is what each candidate says about
// itself in its proposal data (proposalData in publisher.go), and is shown
// as such. "Now" is this host's clock (readers never write, not even a
// throwaway node whose ctime would tell ZooKeeper's), compared only with
// ZooKeeper's ctime/mtime; the *Ms fields a candidate writes are ages at
// the moment of its write, to which the age of that write (now - mtime)
// is added, so no candidate's clock is trusted.

import (
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// infoRawLimit caps raw node data shown for unparsable or foreign nodes.
const infoRawLimit = 300

// readClock is a reader's "now": this host's clock. Readers never write,
// and ZooKeeper tells its time only in the stat of a write.
func readClock() time.Time { return time.Now().UTC() }

func ageMs(now time.Time, zkMs int64) int64 {
	if d := now.UnixMilli() - zkMs; d > 0 {
		return d
	}
	return 0
}

func cut(b []byte) string {
	if len(b) > infoRawLimit {
		return string(b[:infoRawLimit]) + "…"
	}
	return string(b)
}

// buildInfo turns a snapshot into what is printed. now is this host's
// clock (readClock).
func buildInfo(base string, servers []string, s *electionSnapshot, now time.Time) *infoElection {
	inf := &infoElection{
		Election:   base,
		ZooKeeper:  servers,
		ReadAt:     now.UTC(),
		Clock:      "local",
		Exists:     s.exists,
		Candidates: []infoCandidate{},
		Notes:      []string{},
	}
	for _, a := range s.acl {
		inf.ACL = append(inf.ACL, infoACL{Scheme: a.Scheme, ID: a.ID, Perms: zookeeper.PermString(a.Perms)})
	}
	if s.aclErr != nil {
		inf.Notes = append(inf.Notes, "the ACL of "+base+" cannot be read: "+s.aclErr.Error())
	}
	switch {
	case !s.exists:
		inf.Notes = append(inf.Notes, "no candidates: "+base+" does not exist")
	case len(s.proposals) == 0:
		inf.Notes = append(inf.Notes, "no candidates")
	}

	var dups []string
	inf.Candidates, dups = buildCandidates(base, s, now)
	inf.Notes = append(inf.Notes, dups...)
	if len(inf.Candidates) > 0 {
		inf.Leader = &inf.Candidates[0]
	}
	inf.Notes = append(inf.Notes, electionNotes(s, inf)...)
	for _, v := range s.vanished {
		inf.Notes = append(inf.Notes, "node "+v+" went away while being read")
	}

	if n := s.cron; n != nil {
		inf.Cron = buildCron(base, n, now)
	}
	inf.Baton = buildBaton(s, now)
	if n := s.slotCount(); n > 1 {
		for k := 0; k < n; k++ {
			sk := *s
			sk.baton, sk.handover = s.slotBatons[k], s.slotHandovers[k]
			if k == 0 {
				sk.baton, sk.handover = s.baton, s.handover
			}
			b := buildBaton(&sk, now)
			if b == nil {
				b = &infoBaton{State: "never taken"}
			}
			inf.Slots = append(inf.Slots, b)
		}
	}
	addControls(inf, base, s)
	inf.OnceKeys = buildOnceKeys(s)
	settleHistory(s.runs, batonTokens(s), now)
	inf.LastRun = lastRun(s.runs)
	if b := inf.Baton; b != nil && b.Note != "" {
		inf.Notes = append(inf.Notes, b.Note)
	}
	if n := s.ackNode; n != nil {
		inf.LeaderNode = &infoRawNode{Name: n.name, Path: base + "/" + n.name, Data: cut(n.raw),
			AgeMs: ageMs(now, n.stat.Mtime), Note: "the leader node (see ballot leader); shown raw"}
	}
	for _, n := range s.others {
		inf.OtherNodes = append(inf.OtherNodes, infoRawNode{Name: n.name, Path: base + "/" + n.name, Data: cut(n.raw),
			AgeMs: ageMs(now, n.stat.Mtime), Note: "not a proposal, not ballot's: ignored by the election"})
	}
	return inf
}

// buildCandidates lists the proposals in election order, and notes, for
// each and for the election, candidate ids that more than one shares.
func buildCandidates(base string, s *electionSnapshot, now time.Time) (cands []infoCandidate, dups []string) {
	cands = []infoCandidate{}
	ids := map[string]int{}
	for i, n := range s.proposals {
		c := buildCandidate(base, n, i, now)
		if k, ok := s.holderSlot(n); ok && s.slotCount() > 1 {
			c.Slot = &k
		}
		if c.ID != "" {
			ids[c.ID]++
		}
		cands = append(cands, c)
	}
	for i := range cands {
		if k := ids[cands[i].ID]; k > 1 {
			cands[i].Notes = append(cands[i].Notes, fmt.Sprintf("%d candidates share the id %s", k, cands[i].ID))
		}
	}
	for id, k := range ids {
		if k > 1 {
			dups = append(dups, fmt.Sprintf("%d candidates share the id %s", k, id))
		}
	}
	sortStrings(dups)
	return cands, dups
}

// addControls shows the operators' pause and step-down (controls.go).
func addControls(inf *infoElection, base string, s *electionSnapshot) {
	if n := s.pause; n != nil {
		inf.Paused = &pauseRecord{}
		if jsonlite.Unmarshal(n.raw, inf.Paused) != nil {
			inf.Paused.Reason = "(unreadable pause record)"
		}
		inf.Notes = append(inf.Notes, fmt.Sprintf("the election is paused (%s, by %s): its leader runs nothing until ballot resume",
			orNone(inf.Paused.Reason), orNone(inf.Paused.By)))
	}
	inf.Drained = drainedOf(s)
	for _, d := range inf.Drained {
		inf.Notes = append(inf.Notes, fmt.Sprintf("%s is drained (%s, by %s): it never leads until %s",
			d.CandidateID, orNone(d.Reason), orNone(d.By), d.untilWhat()))
	}
	if len(inf.Drained) > 0 && len(s.proposals) == 0 {
		inf.Notes = append(inf.Notes, "nobody leads: no candidate is in line, and drained candidates stay out of it")
	}
	if n := s.trigger; n != nil {
		var t triggerRecord
		if jsonlite.Unmarshal(n.raw, &t) == nil {
			inf.Trigger = &t
			inf.Notes = append(inf.Notes, fmt.Sprintf("a run was asked for by %s (ballot trigger) at %s; no leader has taken it yet",
				orNone(t.By), t.At.UTC().Format(time.RFC3339)))
		}
	}
	if n := s.stepDown; n != nil {
		var sd stepDownRecord
		if jsonlite.Unmarshal(n.raw, &sd) == nil {
			inf.StepDown = &sd
			if l := s.lowestProposal(); l != nil && base+"/"+l.name == sd.Proposal {
				inf.Notes = append(inf.Notes, fmt.Sprintf("the leader was asked to step down by %s", orNone(sd.By)))
			}
		}
	}
}

// buildOnceKeys shows run once --once-key records, newest first.
func buildOnceKeys(s *electionSnapshot) []infoOnceKey {
	var keys []infoOnceKey
	for _, r := range s.onceKeys {
		k := infoOnceKey{Key: r.Key, State: "finished", CandidateID: r.CandidateID, Host: r.Host, FencingToken: r.FencingToken,
			Attempt: r.Attempt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, ExitCode: r.ExitCode}
		switch {
		case r.FinishedAt != nil:
		case s.onceBusy[r.Key]:
			k.State = "running"
		default:
			k.State = "unfinished"
		}
		keys = append(keys, k)
	}
	return keys
}

func buildCandidate(base string, n *snapNode, i int, now time.Time) infoCandidate {
	c := infoCandidate{
		Position:       i + 1,
		ProposalNode:   base + "/" + n.name,
		Sequence:       n.seq,
		Priority:       proposalPriority(n.name),
		Czxid:          n.stat.Czxid,
		SessionID:      zookeeper.SessionHex(n.stat.EphemeralOwner),
		ProposalAgeMs:  ageMs(now, n.stat.Ctime),
		LastWriteAgeMs: ageMs(now, n.stat.Mtime),
		DataVersion:    n.stat.Version,
		Notes:          []string{},
	}
	note := func(f string, a ...any) { c.Notes = append(c.Notes, fmt.Sprintf(f, a...)) }
	switch i {
	case 0:
		c.FencingToken = n.stat.Czxid
		note("is leader")
	case 1:
		note("next in line")
	}
	d := n.data
	if d == nil {
		c.ParseError = n.parseErr
		c.RawData = cut(n.raw)
		note("proposal data cannot be parsed (another tool or a bad write): %s", n.parseErr)
	} else {
		c.ID, c.Host, c.PID = d.CandidateID, d.Host, d.PID
		c.SessionTimeout, c.SessionTimeoutMs = d.SessionTimeout, d.SessionTimeoutMs
		c.ProposalTime = timePtr(d.ProposalTime)
		c.State, c.Mode, c.Version = d.State, d.Mode, d.Version
		write := c.LastWriteAgeMs // the *Ms fields were true at the write
		if ch := d.Child; ch != nil {
			c.Command = &infoCommand{PID: ch.PID, Since: timePtr(ch.Since), RunningForMs: ch.RunningForMs + write, ScheduledTime: ch.ScheduledTime}
		}
		if ex := d.LastExit; ex != nil {
			c.LastExit = &infoExit{Code: ex.Code, At: timePtr(ex.At), AgoMs: ex.AgoMs + write, DurationMs: ex.DurationMs}
		}
		if nr := d.NextRun; nr != nil {
			c.NextRun = &infoNextRun{Time: nr.Time, InMs: nr.InMs - write, StartsAt: nr.StartsAt}
		}
		c.Preempt = d.Preempt
		if u := d.SitsOutUntil; u != nil && u.After(d.WrittenAt.Add(time.Duration(write)*time.Millisecond)) {
			// Its own clock both ways: the write's time plus its age.
			c.SitsOutUntil, c.SitsOutForMs = u, u.Sub(d.WrittenAt).Milliseconds()-write
			note("sits out until %s (--rerun-limit: it handed over; no leader that reaches its limit hands over to it before)", u.Format(time.RFC3339))
		}
		if h := d.Health; h != nil {
			c.Health = &infoHealth{Healthy: h.Healthy, ConsecutiveFailures: h.ConsecutiveFailures, LastCheckAgoMs: -1}
			if !h.LastCheck.IsZero() {
				c.Health.LastCheckAgoMs = h.LastCheckAgoMs + write
			}
			if !h.Healthy {
				note("says it is unhealthy (%d failed health checks in a row)", h.ConsecutiveFailures)
			}
		}
		if d.State == "resigning" {
			note("possibly resigning (it says resigning)")
		}
		if d.State != "" {
			// Candidates write only when their state changes; their
			// session, not their data, says they live.
			note("state last changed %s ago", fmtMs(write))
		}
		if d.FencingToken != 0 && d.FencingToken != n.stat.Czxid {
			note("says fencing token %d, but its node's czxid is %d", d.FencingToken, n.stat.Czxid)
		}
	}
	if n.stat.EphemeralOwner == 0 {
		note("not ephemeral: no session owns it; it stays until deleted by hand")
	}
	note("proposal node created %s ago", fmtMs(c.ProposalAgeMs))
	return c
}

// electionNotes are guesses about the election as a whole, worded as such.
func electionNotes(s *electionSnapshot, inf *infoElection) []string {
	var notes []string
	if len(inf.Candidates) == 0 {
		return nil
	}
	l := inf.Candidates[0]
	switch {
	case s.proposals[0].data == nil:
		notes = append(notes, "the lowest proposal's data cannot be parsed: ballot candidates follow it as their leader all the same")
	case l.State == stateResigning:
		notes = append(notes, "election may be in progress: the leader says it is resigning")
	case l.State == stateWaitingForBaton:
		notes = append(notes, fmt.Sprintf("the lowest proposal (%s) waits for the baton before it starts anything", l.ID))
	case l.State != "" && l.State != stateLeading:
		notes = append(notes, fmt.Sprintf("election may be in progress: the lowest proposal (%s) does not say it is leading yet (it says %s)", l.ID, orNone(l.State)))
	}
	for _, c := range inf.Candidates[1:] {
		if c.State == "leading" {
			notes = append(notes, fmt.Sprintf("election may be in progress: %s says it is leading but is not the lowest proposal (its data may predate a handover)", c.ID))
		}
	}
	if s.proposals[0].stat.EphemeralOwner == 0 {
		notes = append(notes, "the lowest proposal is not ephemeral: it holds the leadership until someone deletes it")
	}
	return notes
}

// buildBaton reads the baton and the handover record; nil when the
// election never had a leader (or predates the baton).
func buildBaton(s *electionSnapshot, now time.Time) *infoBaton {
	var rec handoverRecord
	var b *infoBaton
	switch {
	case s.baton != nil:
		var br batonRecord
		_ = jsonlite.Unmarshal(s.baton.raw, &br)
		rec = br.handoverRecord
		b = &infoBaton{State: "held", SessionID: zookeeper.SessionHex(s.baton.stat.EphemeralOwner), SinceAgoMs: ageMs(now, s.baton.stat.Ctime)}
		if br.LeaseMs > 0 {
			age := ageMs(now, s.baton.stat.Mtime)
			b.Lease = &infoLease{LastRenewalAgoMs: age, LastRenewalMs: br.LastRenewalMs, LargestRenewalMs: br.LargestRenewalMs,
				LeaseLeftMs: max(br.LeaseMs-age, 0), RenewEveryMs: br.RenewEveryMs}
		}
		if l := s.lowestProposal(); l == nil || l.stat.EphemeralOwner != s.baton.stat.EphemeralOwner {
			b.Note = fmt.Sprintf("the baton is held by %s, which is not the lowest proposal: the next leader starts only once that candidate's command is gone and it gives the baton back, or its session ends", orNone(rec.CandidateID))
		}
	case s.handover != nil:
		if jsonlite.Unmarshal(s.handover.raw, &rec) != nil {
			return &infoBaton{State: "unknown", SinceAgoMs: ageMs(now, s.handover.stat.Mtime), Note: "the handover record cannot be parsed"}
		}
		b = &infoBaton{State: rec.State, SessionID: rec.Session, SinceAgoMs: ageMs(now, s.handover.stat.Mtime)}
		switch rec.State {
		case handoverReleased:
		case handoverHanded:
			b.HandedTo = rec.Successor
			b.SuccessorWaitMs = rec.holderWait(0).Milliseconds()
			b.Note = fmt.Sprintf("given back by %s and handed over to %s, which may start at once and takes the baton; should it leave the line first, the next leader waits %s",
				orNone(rec.CandidateID), rec.Successor, fmtMs(b.SuccessorWaitMs))
		default:
			b.State = "dropped"
			b.SuccessorWaitMs = rec.holderWait(0).Milliseconds()
			b.Note = fmt.Sprintf("the baton was dropped by %s without being given back (its session ended, or someone deleted it): the next leader waits %s after seeing it gone, for anything %s may still run to be stopped by its own lease",
				orNone(rec.CandidateID), fmtMs(b.SuccessorWaitMs), orNone(rec.CandidateID))
		}
	default:
		return nil
	}
	b.CandidateID, b.Host, b.Proposal, b.FencingToken = rec.CandidateID, rec.Host, rec.Proposal, rec.FencingToken
	return b
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func buildCron(base string, n *snapNode, now time.Time) *infoCron {
	c := &infoCron{Path: base + "/" + n.name, RecordedAgoMs: ageMs(now, n.stat.Mtime)}
	var rec cronRecord
	switch {
	case len(n.raw) == 0:
		c.ParseError = "no data"
	default:
		if err := jsonlite.Unmarshal(n.raw, &rec); err != nil {
			c.ParseError = err.Error()
			c.RawData = cut(n.raw)
			return c
		}
		c.ScheduledTime, c.StartedAt = timePtr(rec.ScheduledTime), timePtr(rec.StartedAt)
		c.CandidateID, c.Host, c.Proposal, c.FencingToken = rec.CandidateID, rec.Host, rec.Proposal, rec.FencingToken
	}
	return c
}

// ---------------------------------------------------------------------------
// Connecting, and `ballot info` itself.

// runInfo is `ballot info`: 0 when there is a leader, 1 when there is none,
// 125 when ZooKeeper cannot be read.
func runInfo(set *Settings, acc *zookeeper.Access, log *slog.Logger) int {
	jobs := 0
	s, now, err := readElectionWith(set, acc, log, func(conn *zk.Conn, s *electionSnapshot) (err error) {
		if !s.holdsElection() && len(s.others) > 0 { // a crontab's base path?
			jobs, err = countJobs(conn, set.BasePath, othersNames(s))
		}
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: info: "+err.Error())
		return exitFailure
	}
	inf := buildInfo(set.BasePath, set.ZooKeeperServers, s, now)
	if inf.Jobs = jobs; jobs > 0 {
		inf.Notes = append(inf.Notes, fmt.Sprintf("%s holds no election itself, but %s one level down: ballot jobs lists them",
			set.BasePath, countOf(jobs, "election")))
	}
	if set.Output != "json" {
		writeInfoSummary(os.Stdout, inf)
		if set.Verbose {
			fmt.Fprintln(os.Stdout)
		}
	}
	if set.Output == "json" || set.Verbose {
		err = writeInfo(os.Stdout, set.Output, inf)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: info: "+err.Error())
		return exitFailure
	}
	if inf.Leader == nil {
		return 1
	}
	return 0
}
