package keeper

// The keeper's protocol, both ends in one place: its command line, the
// orders ballot writes on the control pipe (child.go) and the keeper
// carries out (keeper.go), and the reports the keeper writes on the status
// pipe. Every line is written by an encoder here and read by parseOrder or
// ParseReport here; keeperpipe_test.go checks each round trip.
//
// One line each, space-separated fields, no field empty (binary data in
// hex, "-" for none). A line that does not parse as a whole is ignored:
// ballot cuts a long line short when the keeper does not read it in time
// (child.tell), and ends it before the next. The orders that can be
// longer than a pipe takes at once (PIPE_BUF; shorter writes are whole or
// nothing) end with a field "." (endMark), so that one cut in its last
// field is not read as whole with a shorter value.
//
//   argv, ballot → keeper: PARENT_PID GRACE_MS KILL BACKSTOP -- COMMAND...
//                          (no COMMAND: idle, until a run order; keeperidle.go)
//
//   control, ballot → keeper:
//     signal N                        signal the whole tree (9: until all is gone)
//     deadline KILL BACKSTOP          boot-clock ns; 0 0: none
//     session ID PASSWD TIMEOUT_MS SERVERS [shared] .   hex, hex, ms, a,b,c
//     access TLS NAME CA CHAIN KEY DIGEST .     (AccessOrder)
//     release PROPOSAL PATH VERSION DATA BATON .   DATA hex
//     demote FORMAT WRAP TIMEOUT_MS ARGV ENV .     (DemoteOrder)
//     bye                             ballot has read "exit"
//     forget                          drop the session and the demote hook: another run's keeper may outlive this one (--overlap allow)
//     hold PROPOSAL PATH VERSION DATA BATON .   a shared session's keeper: a job at rest's release
//     unhold BATON                    ... taken back, before that job's run starts
//     run GRACE_MS KILL BACKSTOP ARGV ENV .     an idle keeper: run this (hex of NUL-joined)
//
//   status, keeper → ballot:
//     idle           an idle keeper waits for orders
//     pid N          the command runs
//     exit CODE      the command and all its descendants are gone
//     error CODE WHY the command could not be started

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"ballot/internal/bootclock"
	"ballot/internal/zookeeper"
)

// KillTimes is what the keeper enforces, on the boot clock (0, 0: none).
type KillTimes struct {
	Kill     bootclock.Time // the tree must be dead: the keeper kills it
	Backstop bootclock.Time // later: the kernel kills the keeper, and so the command
}

// The orders of the control pipe.
const (
	orderSignal   = "signal"
	orderDeadline = "deadline"
	orderSession  = "session"
	orderAccess   = "access"
	orderRelease  = "release"
	orderDemote   = "demote"
	orderBye      = "bye"
	orderRun      = "run"
	orderForget   = "forget"
	orderHold     = "hold"
	orderUnhold   = "unhold"
)

// endMark ends the orders that may be cut short.
const endMark = "."

// sharedMark, last in a session order, says the session is shared
// (Handoff.Shared): the keeper has its pipes (keepershare.go).
const sharedMark = "shared"

// keeperOrder is one line of the control pipe, read.
type keeperOrder struct {
	kind     string
	signal   syscall.Signal // signal
	deadline KillTimes      // deadline
	// session: the session (Servers, SessionID, Passwd, TimeoutMs);
	// release: the release (Proposal, ReleasePath, ReleaseVersion,
	// ReleaseData, Baton).
	handoff *zookeeper.Handoff
	access  zookeeper.WireAccess // access
	demote  *DemoteHook          // demote
	run     *RunOrder            // run
}

func SignalOrder(sig syscall.Signal) string { return fmt.Sprintf("%s %d", orderSignal, int(sig)) }

func DeadlineOrder(d KillTimes) string {
	return fmt.Sprintf("%s %d %d", orderDeadline, int64(d.Kill), int64(d.Backstop))
}

// SessionOrder and ReleaseOrder tell the keeper what ending ballot's
// session takes (zkwire.go): the password is the session, so it goes over
// the private pipe, never in arguments or the environment.
func SessionOrder(h *zookeeper.Handoff) string {
	// The id as unsigned: a member with myid 128 or more hands out ids
	// with the top bit set.
	shared := ""
	if h.Shared {
		shared = " " + sharedMark
	}
	return fmt.Sprintf("%s %x %x %d %s%s %s", orderSession, uint64(h.SessionID), h.Passwd, h.TimeoutMs, strings.Join(h.Servers, ","), shared, endMark)
}

func ReleaseOrder(h *zookeeper.Handoff) string { return releaseLine(orderRelease, h) }

func releaseLine(kind string, h *zookeeper.Handoff) string {
	return fmt.Sprintf("%s %s %s %d %x %s %s", kind, h.Proposal, h.ReleasePath, h.ReleaseVersion, h.ReleaseData, h.Baton, endMark)
}

// HoldOrder gives a shared session's own keeper (keepershare.go) the
// release of a job at rest, keyed by its baton; UnholdOrder takes it
// back before that job's next run starts (or its leadership ends).
func HoldOrder(h *zookeeper.Handoff) string { return releaseLine(orderHold, h) }

func UnholdOrder(baton string) string { return orderUnhold + " " + baton }

// AccessOrder is how ballot reaches ZooKeeper (TLS, credentials):
// "access TLS NAME CA CHAIN KEY DIGEST", each field hex ("-": none), the
// chain's certificates DER, comma-separated, and the key PKCS #8.
func AccessOrder(a zookeeper.WireAccess) string {
	field := func(b []byte) string {
		if len(b) == 0 {
			return "-"
		}
		return hex.EncodeToString(b)
	}
	mode := "plain"
	if a.TLS {
		mode = "tls"
	}
	chain, key := a.CertFields()
	return strings.Join([]string{orderAccess, mode, field([]byte(a.ServerName)), field(a.CA), chain, key, field(a.Digest), endMark}, " ")
}

// DemoteOrder is the on-demote hook (keeperend.go): "demote FORMAT WRAP
// TIMEOUT_MS ARGV ENV .", ARGV and ENV each the hex of their items joined
// by NUL bytes ("-": no ENV).
func DemoteOrder(d *DemoteHook) string {
	wrap := "plain"
	if d.Wrap {
		wrap = "wrap"
	}
	format := d.LogFormat
	if format == "" {
		format = "human"
	}
	env := "-"
	if len(d.Env) > 0 {
		env = hex.EncodeToString([]byte(strings.Join(d.Env, "\x00")))
	}
	return strings.Join([]string{orderDemote, format, wrap, strconv.FormatInt(d.Timeout.Milliseconds(), 10),
		hex.EncodeToString([]byte(strings.Join(d.Argv, "\x00"))), env, endMark}, " ")
}

const ByeOrder = orderBye

// ForgetOrder: runs side by side (--overlap allow): drop the session and
// the demote hook, since another run's keeper may outlive this one.
const ForgetOrder = orderForget

// parseOrder reads one line of the control pipe; ok is false for a line
// that is not a whole, known order.
func parseOrder(line string) (o keeperOrder, ok bool) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return o, false
	}
	o.kind = f[0]
	args := f[1:]
	switch o.kind {
	case orderSession, orderAccess, orderRelease, orderHold, orderDemote, orderRun:
		if len(args) == 0 || args[len(args)-1] != endMark {
			return o, false // cut short
		}
		args = args[:len(args)-1]
	}
	switch {
	case o.kind == orderSignal && len(args) == 1:
		n, err := strconv.Atoi(args[0])
		o.signal = syscall.Signal(n)
		return o, err == nil && n > 0
	case o.kind == orderDeadline && len(args) == 2:
		kill, err1 := strconv.ParseInt(args[0], 10, 64)
		backstop, err2 := strconv.ParseInt(args[1], 10, 64)
		o.deadline = KillTimes{Kill: bootclock.Time(kill), Backstop: bootclock.Time(backstop)}
		return o, err1 == nil && err2 == nil
	case o.kind == orderSession && (len(args) == 4 || len(args) == 5 && args[4] == sharedMark):
		o.handoff = parseSession(args[:4])
		if o.handoff != nil {
			o.handoff.Shared = len(args) == 5
		}
		return o, o.handoff != nil
	case o.kind == orderAccess && len(args) == 6:
		o.access, ok = parseAccess(args)
		return o, ok
	case (o.kind == orderRelease || o.kind == orderHold) && len(args) == 5:
		v, err1 := strconv.ParseInt(args[2], 10, 32)
		data, err2 := hex.DecodeString(args[3])
		o.handoff = &zookeeper.Handoff{Proposal: args[0], ReleasePath: args[1], ReleaseVersion: int32(v), ReleaseData: data, Baton: args[4]}
		return o, err1 == nil && err2 == nil
	case o.kind == orderDemote && len(args) == 5:
		o.demote = parseDemote(args)
		return o, o.demote != nil
	case (o.kind == orderBye || o.kind == orderForget) && len(args) == 0:
		return o, true
	case o.kind == orderUnhold && len(args) == 1:
		o.handoff = &zookeeper.Handoff{Baton: args[0]}
		return o, true
	case o.kind == orderRun && len(args) == 5:
		o.run = parseRun(args)
		return o, o.run != nil
	}
	return o, false
}

// parseSession reads "ID PASSWD TIMEOUT SERVERS" (hex, hex, ms, a,b,c).
func parseSession(f []string) *zookeeper.Handoff {
	id, err1 := strconv.ParseUint(f[0], 16, 64)
	pw, err2 := hex.DecodeString(f[1])
	ms, err3 := strconv.ParseInt(f[2], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || f[3] == "" {
		return nil
	}
	return &zookeeper.Handoff{SessionID: int64(id), Passwd: pw, TimeoutMs: int32(ms), Servers: strings.Split(f[3], ",")}
}

// parseAccess reads the fields after "access"; ok is false if any is bad.
func parseAccess(f []string) (a zookeeper.WireAccess, ok bool) {
	if len(f) != 6 || (f[0] != "tls" && f[0] != "plain") {
		return a, false
	}
	field := func(s string) ([]byte, error) {
		if s == "-" {
			return nil, nil
		}
		return hex.DecodeString(s)
	}
	a.TLS = f[0] == "tls"
	name, err1 := field(f[1])
	ca, err2 := field(f[2])
	digest, err3 := field(f[5])
	if err := errors.Join(err1, err2, err3); err != nil {
		return a, false
	}
	a.ServerName, a.CA, a.Digest = string(name), ca, digest
	if f[3] != "-" && !a.SetCertFields(f[3], f[4]) {
		return a, false
	}
	return a, true
}

// parseDemote reads the fields after "demote"; nil if any is bad.
func parseDemote(f []string) *DemoteHook {
	ms, err1 := strconv.ParseInt(f[2], 10, 64)
	argv, err2 := hex.DecodeString(f[3])
	var env []byte
	var err3 error
	if f[4] != "-" {
		env, err3 = hex.DecodeString(f[4])
	}
	if errors.Join(err1, err2, err3) != nil || len(argv) == 0 || (f[1] != "wrap" && f[1] != "plain") {
		return nil
	}
	d := &DemoteHook{Argv: strings.Split(string(argv), "\x00"), Timeout: time.Duration(ms) * time.Millisecond,
		Wrap: f[1] == "wrap", LogFormat: f[0]}
	if len(env) > 0 {
		d.Env = strings.Split(string(env), "\x00")
	}
	return d
}

// The reports of the status pipe.
const (
	ReportPid   = "pid"
	ReportExit  = "exit"
	ReportError = "error"
)

// Report is one line of the status pipe, read.
type Report struct {
	Kind   string
	Pid    int    // pid
	Code   int    // exit, error
	Reason string // error
}

func pidReport(pid int) string   { return fmt.Sprintf("%s %d", ReportPid, pid) }
func exitReport(code int) string { return fmt.Sprintf("%s %d", ReportExit, code) }

// ErrorReport says why the command could not be started, on one line.
func ErrorReport(code int, why string) string {
	return fmt.Sprintf("%s %d %s", ReportError, code, oneLine(why))
}

// ParseReport reads one line of the status pipe; ok is false for a line
// that is not a whole, known report.
func ParseReport(line string) (r Report, ok bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return r, false
	}
	r.Kind = f[0]
	n, err := strconv.Atoi(f[1])
	switch {
	case err != nil:
		return r, false
	case r.Kind == ReportPid && len(f) == 2 && n > 0:
		r.Pid = n
		return r, true
	case r.Kind == ReportExit && len(f) == 2:
		r.Code = n
		return r, true
	case r.Kind == ReportError:
		r.Code, r.Reason = n, strings.Join(f[2:], " ")
		return r, true
	}
	return r, false
}

// Args is the keeper's command line after Arg: ballot's pid,
// the grace for what the command leaves behind, the first kill times
// (deadline's), and the command.
func Args(parent int, grace time.Duration, first KillTimes, argv []string) []string {
	return append([]string{strconv.Itoa(parent), strconv.FormatInt(grace.Milliseconds(), 10),
		strconv.FormatInt(int64(first.Kill), 10), strconv.FormatInt(int64(first.Backstop), 10), "--"}, argv...)
}

// keeperStart is the keeper's command line, read.
type keeperStart struct {
	parent int
	grace  time.Duration
	first  KillTimes
	argv   []string
}

// parseKeeperArgs reads what keeperArgs wrote; ok is false for anything
// else (the keeper is internal to ballot).
func parseKeeperArgs(args []string) (s keeperStart, ok bool) {
	if len(args) < 5 || args[4] != "--" { // no command: idle (keeperidle.go)
		return s, false
	}
	parent, err1 := strconv.Atoi(args[0])
	graceMs, err2 := strconv.ParseInt(args[1], 10, 64)
	kill, err3 := strconv.ParseInt(args[2], 10, 64)
	backstop, err4 := strconv.ParseInt(args[3], 10, 64)
	if errors.Join(err1, err2, err3, err4) != nil {
		return s, false
	}
	return keeperStart{parent: parent, grace: time.Duration(graceMs) * time.Millisecond,
		first: KillTimes{Kill: bootclock.Time(kill), Backstop: bootclock.Time(backstop)}, argv: args[5:]}, true
}

// Line is the order as sent (keeperpipe.go): run GRACE_MS K K2 ARGV ENV .,
// the lists hex of NUL-joined strings.
func (o *RunOrder) Line() string {
	env := "-" // no field is empty
	if len(o.Env) > 0 {
		env = hex.EncodeToString([]byte(strings.Join(o.Env, "\x00")))
	}
	return fmt.Sprintf("%s %d %d %d %x %s %s", orderRun, o.Grace.Milliseconds(), o.Kill, o.Backstop,
		strings.Join(o.Argv, "\x00"), env, endMark)
}

func parseRun(f []string) *RunOrder {
	grace, err1 := strconv.ParseInt(f[0], 10, 64)
	kill, err2 := strconv.ParseInt(f[1], 10, 64)
	backstop, err3 := strconv.ParseInt(f[2], 10, 64)
	argv, err4 := hex.DecodeString(f[3])
	var env []byte
	var err5 error
	if f[4] != "-" {
		env, err5 = hex.DecodeString(f[4])
	}
	if errors.Join(err1, err2, err3, err4, err5) != nil || len(argv) == 0 {
		return nil
	}
	o := &RunOrder{Grace: time.Duration(grace) * time.Millisecond, Kill: bootclock.Time(kill), Backstop: bootclock.Time(backstop),
		Argv: strings.Split(string(argv), "\x00"), started: make(chan struct{})}
	if len(env) > 0 {
		o.Env = strings.Split(string(env), "\x00")
	}
	return o
}
