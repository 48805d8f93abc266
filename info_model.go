package main

// ballot info's model: what is printed. `ballot info --output json` is one
// infoElection; the human format (info_human.go) prints the same fields.
// Field names are stable (docs/operating.md). Built from a snapshot in info.go.

import "time"

type infoElection struct {
	Election   string          `json:"election"`
	ZooKeeper  []string        `json:"zookeeper"`
	ReadAt     time.Time       `json:"readAt"` // "now", from ZooKeeper's clock unless clock is "local"
	Clock      string          `json:"clock"`  // "zookeeper" or "local"
	Exists     bool            `json:"exists"` // the base path exists
	ACL        []infoACL       `json:"acl,omitempty"`
	Leader     *infoCandidate  `json:"leader"` // the lowest proposal; null when there is none
	Candidates []infoCandidate `json:"allCandidates"`
	Cron       *infoCron       `json:"cron,omitempty"`
	Baton      *infoBaton      `json:"baton,omitempty"`
	// --slots N > 1: every slot's baton, slot 0's first (Baton is slot 0's).
	Slots      []*infoBaton    `json:"slots,omitempty"`
	Paused     *pauseRecord    `json:"paused,omitempty"` // ballot pause: reason, by, since
	StepDown   *stepDownRecord `json:"stepDown,omitempty"`
	OnceKeys   []infoOnceKey   `json:"onceKeys,omitempty"`
	LastRun    *historyItem    `json:"lastRun,omitempty"` // the newest run in the history (ballot history)
	LeaderNode *infoRawNode    `json:"leaderNode,omitempty"`
	OtherNodes []infoRawNode   `json:"otherNodes,omitempty"`
	Notes      []string        `json:"notes"`

	// ballot drain: the candidates kept out of the line; ballot trigger:
	// a run asked for and not yet taken by a leader.
	Drained []drainRecord  `json:"drained,omitempty"`
	Trigger *triggerRecord `json:"trigger,omitempty"`

	// Jobs: the path holds no election itself but this many one level
	// down (a crontab's jobs): ballot jobs lists them.
	Jobs int `json:"jobs,omitempty"`
}

// infoACL is one entry of the base path's ACL; perms as ZooKeeper's
// shell spells them (cdrwa).
type infoACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

type infoCandidate struct {
	Position     int    `json:"position"` // 1 = leader
	ID           string `json:"id"`       // "" when the data cannot be parsed
	Host         string `json:"host,omitempty"`
	PID          int    `json:"pid,omitempty"`
	ProposalNode string `json:"proposalNode"`
	Sequence     int64  `json:"sequence"`
	Priority     int    `json:"priority"`               // --priority, from the proposal's name
	Slot         *int   `json:"slot,omitempty"`         // --slots: the slot it holds, if any
	Czxid        int64  `json:"czxid"`                  // fact: the fencing token it has (or will have) as leader
	FencingToken int64  `json:"fencingToken,omitempty"` // the leader only: its czxid
	SessionID    string `json:"sessionId"`              // ephemeral owner, 0x…; "0x0": not ephemeral

	SessionTimeout   string     `json:"sessionTimeout,omitempty"`
	SessionTimeoutMs int64      `json:"sessionTimeoutMs,omitempty"`
	ProposalTime     *time.Time `json:"proposalTime,omitempty"` // as the candidate wrote it (its clock)
	ProposalAgeMs    int64      `json:"proposalAgeMs"`          // now - ctime
	LastWriteAgeMs   int64      `json:"lastWriteAgeMs"`         // now - mtime: its last state change
	DataVersion      int32      `json:"dataVersion"`            // writes since creation

	State    string       `json:"state,omitempty"` // as it says: following, leading, resigning
	Mode     string       `json:"mode,omitempty"`
	Version  string       `json:"version,omitempty"`
	Command  *infoCommand `json:"command,omitempty"`
	LastExit *infoExit    `json:"lastExit,omitempty"`
	NextRun  *infoNextRun `json:"nextRun,omitempty"`
	Health   *infoHealth  `json:"health,omitempty"` // with --health-check
	// The leader, while a candidate of higher --priority waits out
	// --preempt-after: whom it hands over to, and when.
	Preempt *preemptStatus `json:"preempt,omitempty"`
	// --rerun-limit: it handed over and sits out until then (its clock);
	// set only while that is ahead, by SitsOutForMs as of readAt.
	SitsOutUntil *time.Time `json:"sitsOutUntil,omitempty"`
	SitsOutForMs int64      `json:"sitsOutForMs,omitempty"`

	ParseError string   `json:"parseError,omitempty"` // the data cannot be parsed
	RawData    string   `json:"rawData,omitempty"`    // then: the data, cut at 300 bytes
	Notes      []string `json:"notes"`
}

type infoCommand struct {
	PID           int        `json:"pid"`
	Since         *time.Time `json:"since,omitempty"` // the candidate's clock
	RunningForMs  int64      `json:"runningForMs"`    // as of readAt
	ScheduledTime string     `json:"scheduledTime,omitempty"`
}

type infoExit struct {
	Code       int        `json:"code"`
	At         *time.Time `json:"at,omitempty"` // the candidate's clock
	AgoMs      int64      `json:"agoMs"`        // as of readAt
	DurationMs int64      `json:"durationMs"`
}

type infoNextRun struct {
	Time     string `json:"time"`               // RFC 3339, as the candidate computed it
	InMs     int64  `json:"inMs"`               // until its start, as of readAt; negative: overdue
	StartsAt string `json:"startsAt,omitempty"` // --spread: when its run starts
}

type infoHealth struct {
	Healthy             bool  `json:"healthy"`
	ConsecutiveFailures int   `json:"consecutiveFailures"`
	LastCheckAgoMs      int64 `json:"lastCheckAgoMs"` // as of readAt; -1: no check yet
}

type infoCron struct {
	Path          string     `json:"path"`
	ScheduledTime *time.Time `json:"scheduledTime,omitempty"`
	StartedAt     *time.Time `json:"startedAt,omitempty"` // the leader's clock
	CandidateID   string     `json:"candidateId,omitempty"`
	Host          string     `json:"host,omitempty"`
	Proposal      string     `json:"proposal,omitempty"`
	FencingToken  int64      `json:"fencingToken,omitempty"`
	RecordedAgoMs int64      `json:"recordedAgoMs"` // now - mtime
	ParseError    string     `json:"parseError,omitempty"`
	RawData       string     `json:"rawData,omitempty"`
}

// infoOnceKey is one key of run once --once-key, as recorded.
type infoOnceKey struct {
	Key          string     `json:"key"`
	State        string     `json:"state"` // finished, running, unfinished (its runner's session ended)
	CandidateID  string     `json:"candidateId"`
	Host         string     `json:"host,omitempty"`
	FencingToken int64      `json:"fencingToken"`
	Attempt      int        `json:"attempt"`
	StartedAt    time.Time  `json:"startedAt"` // the runner's clock
	FinishedAt   *time.Time `json:"finishedAt,omitempty"`
	ExitCode     *int       `json:"exitCode,omitempty"`
}

// infoBaton is the baton (baton.go): who holds it, or who had it last.
type infoBaton struct {
	State        string `json:"state"` // held, released, handed-over, dropped
	CandidateID  string `json:"candidateId,omitempty"`
	Host         string `json:"host,omitempty"`
	Proposal     string `json:"proposal,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	FencingToken int64  `json:"fencingToken,omitempty"`
	// SinceAgoMs: held, now - the baton's ctime; otherwise now - the last
	// change of the handover record.
	SinceAgoMs int64 `json:"sinceAgoMs"`
	// SuccessorWaitMs: dropped, how long the next leader waits after
	// seeing the baton gone.
	SuccessorWaitMs int64 `json:"successorWaitMs,omitempty"`
	// HandedTo: handed-over, the proposal the baton was given to.
	HandedTo string `json:"handedTo,omitempty"`
	// Held: the leader's lease, from the baton's data and its mtime (each
	// renewal rewrites it). LeaseLeftMs is about how long the leader's
	// command may still run should no renewal succeed from now on.
	Lease *infoLease `json:"lease,omitempty"`
	Note  string     `json:"note,omitempty"`
}

type infoLease struct {
	LastRenewalAgoMs int64 `json:"lastRenewalAgoMs"` // now - the baton's mtime
	LastRenewalMs    int64 `json:"lastRenewalMs"`    // round trip of a recent renewal
	LargestRenewalMs int64 `json:"largestRenewalMs"` // the largest of this leadership
	LeaseLeftMs      int64 `json:"leaseLeftMs"`
	RenewEveryMs     int64 `json:"renewEveryMs"`
}

type infoRawNode struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Data  string `json:"data"` // cut at 300 bytes
	AgeMs int64  `json:"ageMs"`
	Note  string `json:"note"`
}
