package main

// What ballot keeps in ZooKeeper: the name of every node under the
// election path and the format of each node's data. Other tools read these
// (ballot info and watch, monitoring scripts), so the JSON field names are
// stable; docs/ (operating.md, design.md) documents them.
//
//	<base>/_c_<guid>-proposal-<seq>   a candidate's proposal (proposalData);
//	                                  -priority+N-proposal-<seq> with --priority N
//	<base>/baton                      ephemeral: the leader holds it (baton.go)
//	<base>/handover                   who last took or gave back the baton
//	<base> itself                     the longest batonWait used (electionRecord)
//	<base>/leader                     the leader's acknowledgement (leader.go)
//	<base>/cron                       run cron: the last scheduled run
//	<base>/once/<key>                 run once --once-key: one keyed run
//	<base>/history/run-<seq>          every run and skipped time (history.go)
//	<base>/pause, <base>/step-down    the operators' controls (controls.go)
//	<base>/trigger                    ballot trigger: a run asked for (trigger.go)
//	<base>/drain-<candidate-id>       ballot drain: that candidate never leads (drain.go)
//	<base>/released/<proposal>        a note: that proposal's leadership ended,
//	                                  its command gone (release.go)

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
)

// ---------------------------------------------------------------------------
// Names.

// A proposal's name ends with this and a 10-digit sequence number.
const proposalPrefix = "proposal-"

// A proposal of a candidate with a --priority other than 0 carries it in
// its name, before proposalPrefix: "_c_<guid>-priority+5-proposal-<seq>".
// Every candidate orders the line from the names alone (one listing).
const priorityMark = "priority"

// A proposal of a candidate with --slots N above 1 carries N in its name,
// "_c_<guid>-slots2-proposal-<seq>": candidates that disagree on N see it
// in one listing, and the later one refuses (slots.go).
const slotsMark = "slots"

// Children of the base path that are not proposals but belong to ballot.
const (
	batonName    = "baton"    // slot 0's; slot k > 0: baton-k (slots.go)
	handoverName = "handover" // slot 0's; slot k > 0: handover-k
	cronName     = "cron"     // run cron: the last scheduled run (cron.go)
	leaderName   = "leader"   // the acknowledged leader (leader.go)
	onceDirName  = "once"     // run once --once-key (once.go)
	stepDownName = "step-down"
	pauseName    = "pause"

	// releasedDirName holds the notes of leaders whose proposal was
	// deleted under them, once their command is gone (release.go).
	releasedDirName = "released"
)

// handoverRecord.State values.
const (
	handoverTaken    = "taken"
	handoverReleased = "released"
	// handoverHanded: released to the successor the record names, which
	// may start before its own take is answered (baton.go, "handed over").
	handoverHanded = "handed-over"
	// handoverRevoked: a handed-over record whose successor did not take
	// the baton within W, closed by the first in line (baton.go,
	// waitForNamed); read as a dropped take of the record's holder.
	handoverRevoked = "revoked"
)

// ---------------------------------------------------------------------------
// Data.

// proposalData is what a candidate says about itself in its proposal node,
// for `ballot info` and `ballot watch`. Times are the candidate's own clock;
// the *Ms fields are ages at the moment of the write, so a reader can add
// the age of the write (from ZooKeeper's mtime) and need not trust clocks.
type proposalData struct {
	CandidateID      string    `json:"candidateId"`
	Host             string    `json:"host"`
	PID              int       `json:"pid"`
	ProposalTime     time.Time `json:"proposalTime"`
	SessionTimeout   string    `json:"sessionTimeout"`
	SessionTimeoutMs int64     `json:"sessionTimeoutMs"`
	Version          string    `json:"version,omitempty"`
	Mode             string    `json:"mode,omitempty"`   // "run once" or "run cron"
	BootID           string    `json:"bootId,omitempty"` // the host's boot id (drain --until-reboot)

	// Updated when the candidate's state changes (publisher).
	State        string         `json:"state,omitempty"` // following, waiting-for-baton, leading, resigning
	WrittenAt    time.Time      `json:"writtenAt,omitempty"`
	FencingToken int64          `json:"fencingToken,omitempty"` // set while leading
	Child        *childStatus   `json:"child,omitempty"`        // the command running now
	LastExit     *exitStatus    `json:"lastExit,omitempty"`     // how the last run ended
	NextRun      *scheduledNext `json:"nextRun,omitempty"`      // run cron: the next scheduled time
	Health       *healthStatus  `json:"health,omitempty"`       // with --health-check
	Standby      bool           `json:"standby,omitempty"`      // first in line after the leader, proving it (standby.go)
	Preempt      *preemptStatus `json:"preempt,omitempty"`      // the leader: whom it hands over to, when (preempt.go)
	// The leader: a handover may come (a run cron command runs; a stop,
	// a step-down or a preemption is under way): its next in line proves
	// its place meanwhile (standby.go), and only then.
	HandoverMayCome bool `json:"handoverMayCome,omitempty"`
	// --rerun-limit handed the leadership over: until then no leader that
	// reaches its own limit hands over to this candidate.
	SitsOutUntil *time.Time `json:"sitsOutUntil,omitempty"`
}

// A candidate's states, as its proposal node says.
const (
	stateFollowing       = "following"
	stateWaitingForBaton = "waiting-for-baton" // lowest proposal, the baton not yet free
	stateLeading         = "leading"
	stateResigning       = "resigning"
)

type healthStatus struct {
	Healthy             bool      `json:"healthy"`
	ConsecutiveFailures int       `json:"consecutiveFailures"`
	LastCheck           time.Time `json:"lastCheck"`
	LastCheckAgoMs      int64     `json:"lastCheckAgoMs"`
}

type childStatus struct {
	PID           int       `json:"pid"`
	Since         time.Time `json:"since"`
	RunningForMs  int64     `json:"runningForMs"`
	ScheduledTime string    `json:"scheduledTime,omitempty"`
}

type exitStatus struct {
	Code       int       `json:"code"`
	At         time.Time `json:"at"`
	AgoMs      int64     `json:"agoMs"`
	DurationMs int64     `json:"durationMs"`
}

type scheduledNext struct {
	Time     string `json:"time"`               // RFC 3339
	InMs     int64  `json:"inMs"`               // at the moment of the write; until StartsAt when set
	StartsAt string `json:"startsAt,omitempty"` // --spread: when its run starts, RFC 3339
}

// handoverRecord is the data of the handover node.
type handoverRecord struct {
	State            string    `json:"state"` // taken, released or handed-over
	CandidateID      string    `json:"candidateId"`
	Host             string    `json:"host"`
	PID              int       `json:"pid"`
	Proposal         string    `json:"proposal"`
	Session          string    `json:"session"`
	SessionTimeoutMs int64     `json:"sessionTimeoutMs"`
	BatonWaitMs      int64     `json:"batonWaitMs,omitempty"` // W: what a successor waits if this take is dropped
	FencingToken     int64     `json:"fencingToken"`
	At               time.Time `json:"at"`
	Successor        string    `json:"successor,omitempty"` // handed-over: the proposal it went to
	Slot             int       `json:"slot,omitempty"`      // --slots: the slot of this baton
	// NoCredit: the successor may not start before its take is answered
	// (it was not the oldest proposal in line: baton.go, successor).
	NoCredit  bool   `json:"noCredit,omitempty"`
	RevokedBy string `json:"revokedBy,omitempty"` // revoked: the candidate that closed it
}

// batonRecord is the data of the baton: the take's record, and how the
// leader's lease renewals go (each renewal rewrites it, so the node's
// mtime is the last renewal on ZooKeeper's clock).
type batonRecord struct {
	handoverRecord
	LastRenewalMs    int64 `json:"lastRenewalMs"`    // round trip of the previous renewal
	LargestRenewalMs int64 `json:"largestRenewalMs"` // the largest of this leadership
	LeaseMs          int64 `json:"leaseMs"`          // a renewal's lease: the kill comes this long after it was sent
	RenewEveryMs     int64 `json:"renewEveryMs"`
}

// electionRecord is the data of the election path itself.
type electionRecord struct {
	// BatonWaitMs is the longest W any leader of this election has used:
	// a successor that finds the handover record deleted waits that long.
	BatonWaitMs int64 `json:"batonWaitMs"`
}

// parseElectionRecord reads the election path's data; ok only if it is
// ballot's record and nothing else (other data is another tool's).
func parseElectionRecord(raw []byte) (rec electionRecord, ok bool) {
	return rec, jsonlite.Decode(raw, &rec, true) == nil // a json.Decoder with DisallowUnknownFields, as before
}

// leaderRecord is the data of the leader node.
type leaderRecord struct {
	Data         string    `json:"data"`
	CandidateID  string    `json:"candidateId"`
	Host         string    `json:"host"`
	PID          int       `json:"pid"`
	FencingToken int64     `json:"fencingToken"`
	Proposal     string    `json:"proposal"`
	Since        time.Time `json:"since"`
	Slot         int       `json:"slot,omitempty"` // --slots: the holder's slot
}

// cronRecord is the data of <base>/cron: the last scheduled time a leader
// started.
type cronRecord struct {
	ScheduledTime time.Time `json:"scheduledTime"`
	StartedAt     time.Time `json:"startedAt"`
	CandidateID   string    `json:"candidateId"`
	Host          string    `json:"host,omitempty"`
	Proposal      string    `json:"proposal"`
	FencingToken  int64     `json:"fencingToken"`
	// With --retries: the attempt at ScheduledTime (1, 2, …) out of
	// Attempts, and how it ended ("": running, or lost with its leader).
	Attempt  int        `json:"attempt,omitempty"`
	Attempts int        `json:"attempts,omitempty"`
	Ended    string     `json:"ended,omitempty"` // succeeded, failed
	EndedAt  *time.Time `json:"endedAt,omitempty"`
}

// onceRecord is the data of <base>/once/<key>.
type onceRecord struct {
	Key          string     `json:"key"`
	CandidateID  string     `json:"candidateId"`
	Host         string     `json:"host"`
	PID          int        `json:"pid"`
	Proposal     string     `json:"proposal"`
	Session      string     `json:"session"`
	FencingToken int64      `json:"fencingToken"`
	Attempt      int        `json:"attempt"`            // 1, more with --once-retry-unfinished or --retries
	Attempts     int        `json:"attempts,omitempty"` // --retries + 1 as its runner had it; 0 without --retries
	StartedAt    time.Time  `json:"startedAt"`
	FinishedAt   *time.Time `json:"finishedAt,omitempty"`
	ExitCode     *int       `json:"exitCode,omitempty"`
	TimedOut     bool       `json:"timedOut,omitempty"` // stopped by --timeout
}

func (r *onceRecord) String() string {
	s := fmt.Sprintf("run by %s on %s (fencing token %d), started %s", r.CandidateID, r.Host, r.FencingToken,
		r.StartedAt.Format(time.RFC3339))
	if r.FinishedAt != nil && r.ExitCode != nil {
		s += fmt.Sprintf(", finished %s with exit status %d", r.FinishedAt.Format(time.RFC3339), *r.ExitCode)
		if r.TimedOut {
			s += " (timed out)"
		}
		return s
	}
	return s + ", not finished"
}

type stepDownRecord struct {
	Proposal    string    `json:"proposal"` // the leadership asked to hand over
	CandidateID string    `json:"candidateId"`
	By          string    `json:"by"` // user@host that asked
	At          time.Time `json:"at"`
}

type pauseRecord struct {
	Reason string    `json:"reason"`
	By     string    `json:"by"`
	Since  time.Time `json:"since"`
}

// preemptStatus is what a leader publishes while a preferred candidate
// waits out --preempt-after (ballot info, watch).
type preemptStatus struct {
	Proposal    string    `json:"proposal"`
	CandidateID string    `json:"candidateId,omitempty"`
	Priority    int       `json:"priority"`
	At          time.Time `json:"at"` // when the leader hands over, if it is ready then
}

// infoClockPrefix names the throwaway nodes whose ctime told ZooKeeper's
// time to readers before they stopped writing; another ballot's may still
// be seen.
const infoClockPrefix = ".ballot-clock-"

func onceDir(base string) string { return base + "/" + onceDirName }

// onceKeep is how many keys the election remembers; older finished keys
// are deleted when a new one is recorded (a daily job: 100 days).
const onceKeep = 100

const drainPrefix = "drain-"

type drainRecord struct {
	CandidateID string    `json:"candidateId"`
	Reason      string    `json:"reason,omitempty"`
	By          string    `json:"by"` // user@host that drained it
	Since       time.Time `json:"since"`
	// drain --until-reboot: the drain lasts while the candidate's host
	// runs the boot of BootID (its proposal published it); a candidate
	// whose host has another boot id finds it expired (drainHolds).
	UntilReboot bool   `json:"untilReboot,omitempty"`
	BootID      string `json:"bootId,omitempty"`
}

// untilWhat says, for info and watch, what ends the drain.
func (d drainRecord) untilWhat() string {
	if d.UntilReboot {
		return "its host reboots or ballot undrain"
	}
	return "ballot undrain"
}

// label is the candidate, and "until reboot" for drain --until-reboot.
func (d drainRecord) label() string {
	if d.UntilReboot {
		return d.CandidateID + " until reboot"
	}
	return d.CandidateID
}

// drainHolds says whether drain record d (nil: none) keeps a candidate
// whose host has boot id boot out of the line, and whether it is an
// until-reboot drain that the host's reboot ended (expired). A drain
// without a boot id holds until undrain; so does one on a host that cannot
// read its own boot id (boot ""): it cannot tell whether it rebooted.
func drainHolds(d *drainRecord, boot string) (holds, expired bool) {
	switch {
	case d == nil:
		return false, false
	case d.BootID == "" || boot == "" || d.BootID == boot:
		return true, false
	}
	return false, true
}

// drainNodeName is a candidate's drain node: "/" and "%" escaped, and
// "proposal-" too, so that it never reads as a proposal.
func drainNodeName(id string) string {
	return drainPrefix + strings.NewReplacer("%", "%25", "/", "%2F", proposalPrefix, "%70"+proposalPrefix[1:]).Replace(id)
}

func drainPath(base, id string) string {
	return base + "/" + drainNodeName(id)
}

// parseDrain reads a drain node's data; nil raw: not drained. A node that
// cannot be read drains all the same: it exists.
func parseDrain(raw []byte) *drainRecord {
	if raw == nil {
		return nil
	}
	d := &drainRecord{}
	if jsonlite.Unmarshal(raw, d) != nil {
		d = &drainRecord{Reason: "(unreadable drain record)"}
	}
	return d
}

const triggerName = "trigger"

// triggerValidity is how long a request waits for a leader: a trigger
// sent while nobody leads runs when someone does, within this (ZooKeeper's
// clock: the node's ctime), or is recorded as skipped. `trigger --wait`
// withdraws its request at its deadline instead.
const triggerValidity = time.Hour

// triggerRecord is the request's data, and the history entry's trigger.
type triggerRecord struct {
	ID string    `json:"id"` // random: the entry `trigger --wait` looks for
	By string    `json:"by"` // user@host that asked
	At time.Time `json:"at"` // its clock
}

// triggerRequest is the request as the leader read it.
type triggerRequest struct {
	rec     triggerRecord
	version int32
	czxid   int64 // which request: a new one is a new node
	ctime   time.Time
}

func parseTrigger(raw []byte, st *zk.Stat) *triggerRequest {
	if raw == nil || st == nil {
		return nil
	}
	t := &triggerRequest{version: st.Version, czxid: st.Czxid, ctime: time.UnixMilli(st.Ctime)}
	if jsonlite.Unmarshal(raw, &t.rec) != nil {
		t.rec = triggerRecord{By: "(unreadable trigger request)"}
	}
	return t
}

// ballotNodeName reports whether name is, or may become, one of ballot's
// own nodes under an election (a proposal, baton-k, drain-<id>, …): run
// crontab refuses it as a job's name, whose election is <base>/<name>.
func ballotNodeName(name string) bool {
	switch name {
	case batonName, handoverName, cronName, leaderName, onceDirName, stepDownName, pauseName,
		releasedDirName, historyName, triggerName:
		return true
	}
	for _, prefix := range []string{"_c_", drainPrefix, batonName + "-", handoverName + "-", infoClockPrefix} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
