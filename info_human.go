package main

// ballot info's human format: YAML-like, the same fields as the JSON.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"ballot/internal/jsonlite"
)

// fmtMs prints a duration in ms the way people read ages: 850ms, 2.2s,
// 32s, 3m2s, 2h5m.
func fmtMs(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	var s string
	switch {
	case d < time.Second:
		s = d.String()
	case d < 10*time.Second:
		s = d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		s = d.Round(time.Second).String()
	default:
		s = strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	return sign + s
}

const humanTime = "2006-01-02T15:04:05.000Z07:00"

func fmtTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(humanTime)
}

// yq quotes a scalar when YAML would not read it back as the same string.
func yq(s string) string {
	if s == "" {
		return `""`
	}
	plain := !strings.ContainsAny(s, "\"'#{}[],&*!|>%@`\n\r\t\\") &&
		!strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") &&
		s == strings.TrimSpace(s) && !strings.HasPrefix(s, "- ") && !strings.HasPrefix(s, "?")
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~":
		plain = false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		plain = false
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		plain = false
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

type kv struct {
	k, v string
	list []string // a list value instead of v
}

// writeBlock prints kvs as a YAML mapping; first is the prefix of the first
// line ("" or "- "), indent the prefix of the others.
func writeBlock(w io.Writer, kvs []kv, first, indent string) {
	for i, p := range kvs {
		pre := indent
		if i == 0 {
			pre = first
		}
		if p.list != nil {
			if len(p.list) == 0 {
				fmt.Fprintf(w, "%s%s: []\n", pre, p.k)
				continue
			}
			fmt.Fprintf(w, "%s%s:\n", pre, p.k)
			for _, s := range p.list { // notes: plain text, as people read it
				if strings.ContainsAny(s, "\n\r") {
					s = strconv.Quote(s)
				}
				fmt.Fprintf(w, "%s- %s\n", indent, s)
			}
			continue
		}
		fmt.Fprintf(w, "%s%s: %s\n", pre, p.k, p.v)
	}
}

func candidateKVs(c *infoCandidate) []kv {
	id := yq(c.ID)
	if c.ID == "" {
		id = "null # unknown: the data cannot be parsed"
	}
	kvs := []kv{{k: "id", v: id}}
	add := func(k, v string) { kvs = append(kvs, kv{k: k, v: v}) }
	if c.Host != "" {
		add("host", yq(c.Host))
	}
	if c.PID != 0 {
		add("pid", strconv.Itoa(c.PID))
	}
	add("proposalNode", yq(c.ProposalNode))
	add("sequence", strconv.FormatInt(c.Sequence, 10))
	if c.FencingToken != 0 {
		add("fencingToken", strconv.FormatInt(c.FencingToken, 10))
	} else {
		add("czxid", strconv.FormatInt(c.Czxid, 10))
	}
	add("sessionId", c.SessionID)
	if c.SessionTimeout != "" {
		add("sessionTimeout", yq(c.SessionTimeout))
	}
	if c.ProposalTime != nil {
		add("proposalTime", fmtTime(c.ProposalTime))
	}
	add("proposalAge", fmtMs(c.ProposalAgeMs))
	add("lastStateChange", fmtMs(c.LastWriteAgeMs)+" ago")
	if c.ParseError == "" {
		state := c.State
		if state == "" {
			state = "null # not reported"
		}
		add("state", state)
	}
	if c.Mode != "" {
		add("mode", yq(c.Mode))
	}
	if c.Version != "" {
		add("version", yq(c.Version))
	}
	if m := c.Command; m != nil {
		v := fmt.Sprintf("{pid: %d, runningFor: %s", m.PID, fmtMs(m.RunningForMs))
		if m.ScheduledTime != "" {
			v += ", scheduledTime: " + m.ScheduledTime
		}
		add("command", v+"}")
	} else if c.State == "leading" {
		add("command", "null # not running")
	}
	if e := c.LastExit; e != nil {
		add("lastExit", fmt.Sprintf("{status: %d, ago: %s, duration: %s}", e.Code, fmtMs(e.AgoMs), fmtMs(e.DurationMs)))
	}
	if n := c.NextRun; n != nil {
		in := "in " + fmtMs(n.InMs)
		if n.InMs < 0 {
			in = "overdue by " + fmtMs(-n.InMs)
		}
		if n.StartsAt != "" { // --spread
			add("nextRun", fmt.Sprintf("{time: %s, startsAt: %s, %s}", n.Time, n.StartsAt, yq(in)))
		} else {
			add("nextRun", fmt.Sprintf("{time: %s, %s}", n.Time, yq(in)))
		}
	}
	if h := c.Health; h != nil {
		v := fmt.Sprintf("{healthy: %v, consecutiveFailures: %d", h.Healthy, h.ConsecutiveFailures)
		if h.LastCheckAgoMs >= 0 {
			v += ", lastCheck: " + fmtMs(h.LastCheckAgoMs) + " ago"
		}
		add("health", v+"}")
	}
	if c.ParseError != "" {
		add("data", rawData(c.RawData))
	}
	return append(kvs, kv{k: "notes", list: c.Notes})
}

func writeInfoHuman(w io.Writer, inf *infoElection) {
	fmt.Fprintf(w, "election: %s\n", yq(inf.Election))
	fmt.Fprintf(w, "zookeeper: %s\n", yq(strings.Join(inf.ZooKeeper, ",")))
	clock := "ZooKeeper's clock"
	if inf.Clock == "local" {
		clock = "this host's clock"
	}
	fmt.Fprintf(w, "readAt: %s # %s\n", inf.ReadAt.Format(humanTime), clock)
	if len(inf.ACL) > 0 {
		acl := make([]string, len(inf.ACL))
		for i, a := range inf.ACL {
			acl[i] = a.Scheme + ":" + a.ID + " " + a.Perms
		}
		writeBlock(w, []kv{{k: "acl", list: acl}}, "", "")
	}
	if inf.Leader == nil {
		fmt.Fprintln(w, "leader: null # no candidates")
	} else {
		fmt.Fprintln(w, "leader:")
		writeBlock(w, candidateKVs(inf.Leader), "  ", "  ")
	}
	if len(inf.Candidates) == 0 {
		fmt.Fprintln(w, "allCandidates: []")
	} else {
		fmt.Fprintln(w, "allCandidates:")
		for i := range inf.Candidates {
			c := &inf.Candidates[i]
			kvs := append([]kv{{k: "position", v: strconv.Itoa(c.Position)}}, candidateKVs(c)...)
			writeBlock(w, kvs, "- ", "  ")
		}
	}
	if c := inf.Cron; c != nil {
		fmt.Fprintln(w, "cron:")
		writeBlock(w, cronKVs(c), "  ", "  ")
	}
	if p := inf.Paused; p != nil {
		fmt.Fprintln(w, "paused:")
		writeBlock(w, []kv{{k: "reason", v: yq(p.Reason)}, {k: "by", v: yq(p.By)}, {k: "since", v: p.Since.UTC().Format(humanTime)}}, "  ", "  ")
	}
	if len(inf.Drained) > 0 {
		fmt.Fprintln(w, "drained:")
		for _, d := range inf.Drained {
			kvs := []kv{{k: "candidateId", v: yq(d.CandidateID)}, {k: "reason", v: yq(d.Reason)}, {k: "by", v: yq(d.By)},
				{k: "since", v: d.Since.UTC().Format(humanTime)}}
			if d.UntilReboot {
				kvs = append(kvs, kv{k: "untilReboot", v: "true"}, kv{k: "bootId", v: yq(d.BootID)})
			}
			writeBlock(w, kvs, "- ", "  ")
		}
	}
	if b := inf.Baton; b != nil {
		fmt.Fprintln(w, "baton:")
		writeBlock(w, batonKVs(b), "  ", "  ")
	}
	writeOnceKeys(w, inf.OnceKeys)
	if n := inf.LeaderNode; n != nil {
		fmt.Fprintln(w, "leaderNode:")
		writeBlock(w, rawKVs(n), "  ", "  ")
	}
	if len(inf.OtherNodes) > 0 {
		fmt.Fprintln(w, "otherNodes:")
		for i := range inf.OtherNodes {
			writeBlock(w, rawKVs(&inf.OtherNodes[i]), "- ", "  ")
		}
	}
	writeBlock(w, []kv{{k: "notes", list: inf.Notes}}, "", "")
}

func cronKVs(c *infoCron) []kv {
	kvs := []kv{{k: "path", v: yq(c.Path)}}
	if c.ParseError != "" {
		kvs = append(kvs, kv{k: "parseError", v: yq(c.ParseError)}, kv{k: "data", v: rawData(c.RawData)})
	} else {
		kvs = append(kvs,
			kv{k: "lastScheduledRun", v: fmtTime(c.ScheduledTime)},
			kv{k: "startedBy", v: yq(c.CandidateID)},
		)
		if c.Host != "" {
			kvs = append(kvs, kv{k: "host", v: yq(c.Host)})
		}
		kvs = append(kvs, kv{k: "startedAt", v: fmtTime(c.StartedAt)},
			kv{k: "fencingToken", v: strconv.FormatInt(c.FencingToken, 10)})
	}
	return append(kvs, kv{k: "recorded", v: fmtMs(c.RecordedAgoMs) + " ago"})
}

func batonKVs(b *infoBaton) []kv {
	kvs := []kv{{k: "state", v: b.State}}
	if b.CandidateID != "" {
		kvs = append(kvs, kv{k: "candidate", v: yq(b.CandidateID)})
	}
	if b.Proposal != "" {
		kvs = append(kvs, kv{k: "proposal", v: yq(b.Proposal)})
	}
	if b.SessionID != "" {
		kvs = append(kvs, kv{k: "session", v: b.SessionID})
	}
	if b.FencingToken != 0 {
		kvs = append(kvs, kv{k: "fencingToken", v: strconv.FormatInt(b.FencingToken, 10)})
	}
	kvs = append(kvs, kv{k: "since", v: fmtMs(b.SinceAgoMs) + " ago"})
	if b.SuccessorWaitMs > 0 {
		kvs = append(kvs, kv{k: "successorWaits", v: fmtMs(b.SuccessorWaitMs)})
	}
	if l := b.Lease; l != nil && l.LeaseLeftMs == 0 {
		// A run cron leader between runs lets it lapse (docs/design.md: Between runs).
		kvs = append(kvs, kv{k: "lease", v: fmt.Sprintf("renewed %s ago (round trip %s, largest %s); lapsed: nothing runs under it until it is renewed (a run cron leader renews only around its runs)",
			fmtMs(l.LastRenewalAgoMs), fmtMs(l.LastRenewalMs), fmtMs(l.LargestRenewalMs))})
	} else if l != nil {
		kvs = append(kvs, kv{k: "lease", v: fmt.Sprintf("renewed %s ago (round trip %s, largest %s); about %s left should renewals stop",
			fmtMs(l.LastRenewalAgoMs), fmtMs(l.LastRenewalMs), fmtMs(l.LargestRenewalMs), fmtMs(l.LeaseLeftMs))})
	}
	return kvs
}

// writeOnceKeys shows the ten newest; JSON has them all.
func writeOnceKeys(w io.Writer, keys []infoOnceKey) {
	if len(keys) == 0 {
		return
	}
	fmt.Fprintf(w, "onceKeys: # newest first, %d kept at most\n", onceKeep)
	for i, k := range keys {
		if i == 10 {
			fmt.Fprintf(w, "# … %d more (--output json lists them all)\n", len(keys)-10)
			break
		}
		kvs := []kv{{k: "key", v: yq(k.Key)}, {k: "state", v: k.State}, {k: "by", v: yq(k.CandidateID)},
			{k: "started", v: k.StartedAt.UTC().Format(humanTime)}}
		if k.ExitCode != nil {
			kvs = append(kvs, kv{k: "exitCode", v: strconv.Itoa(*k.ExitCode)})
		}
		writeBlock(w, kvs, "- ", "  ")
	}
}

// rawData shows node data: JSON as it is (YAML reads it as flow style),
// anything else quoted.
func rawData(s string) string {
	if jsonlite.IsObject([]byte(s)) && !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return yq(s)
}

func rawKVs(n *infoRawNode) []kv {
	return []kv{{k: "name", v: yq(n.Name)}, {k: "path", v: yq(n.Path)}, {k: "data", v: rawData(n.Data)},
		{k: "lastWrite", v: fmtMs(n.AgeMs) + " ago"}, {k: "note", v: yq(n.Note)}}
}

func writeInfo(w io.Writer, format string, inf *infoElection) error {
	if format == "json" {
		return writeJSON(w, inf)
	}
	writeInfoHuman(w, inf)
	return nil
}

// writeJSON is a reader's --output json: indented, "<" and ">" as they are.
func writeJSON(w io.Writer, v any) error {
	return jsonlite.Encode(w, v, "  ", false)
}
