//go:build bench

package main

// What the benchmark reads: ZooKeeper's counters (four-letter words),
// ballot's processes in /proc, and ballot's own JSON logs.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ---------------------------------------------------------------------------
// ZooKeeper counters

var (
	benchSidRe    = regexp.MustCompile(`sid=(0x[0-9a-f]+)`)
	benchRecvdRe  = regexp.MustCompile(`recved=(\d+)`)
	benchLcxidRe  = regexp.MustCompile(`lcxid=(0x[0-9a-f]+)`)
	benchSessLog  = regexp.MustCompile(`"msg":"ZooKeeper session established","session":"(0x[0-9a-f]+)"`)
	benchZxidLine = regexp.MustCompile(`(?m)^Zxid: (0x[0-9a-f]+)`)
)

type benchConn struct{ recved, lcxid int64 }

// cons returns, per session id, the packets received and the last client
// request id (lcxid: go-zookeeper numbers each request 1, 2, 3…; pings do
// not count) over every member.
func benchCons(c *zkCluster) map[string]benchConn {
	out := map[string]benchConn{}
	for _, addr := range c.Servers() {
		s, err := zkFourLetterWord(addr, "cons", 2*time.Second)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(s, "\n") {
			sid := benchSidRe.FindStringSubmatch(l)
			if sid == nil {
				continue
			}
			var bc benchConn
			if m := benchRecvdRe.FindStringSubmatch(l); m != nil {
				bc.recved, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if m := benchLcxidRe.FindStringSubmatch(l); m != nil {
				v, _ := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
				bc.lcxid = int64(v)
				if v == 0xffffffffffffffff {
					bc.lcxid = 0
				}
			}
			out[sid[1]] = bc
		}
	}
	return out
}

// packets is zk_packets_received summed over the members.
func benchPackets(c *zkCluster) int64 {
	var sum int64
	for i := 0; i < c.Size(); i++ {
		v, _ := strconv.ParseInt(c.Mntr(i)["zk_packets_received"], 10, 64)
		sum += v
	}
	return sum
}

// zxid is the highest Zxid any member reports (srvr).
func benchZxid(c *zkCluster) int64 {
	var best int64
	for _, addr := range c.Servers() {
		s, err := zkFourLetterWord(addr, "srvr", 2*time.Second)
		if err != nil {
			continue
		}
		if m := benchZxidLine.FindStringSubmatch(s); m != nil {
			v, _ := strconv.ParseInt(strings.TrimPrefix(m[1], "0x"), 16, 64)
			if v > best {
				best = v
			}
		}
	}
	return best
}

// benchMemberOf is the member (index) whose `cons` lists session sid; -1
// if none does.
func benchMemberOf(c *zkCluster, sid string) int {
	if sid == "" {
		return -1
	}
	for i, addr := range c.Servers() {
		s, err := zkFourLetterWord(addr, "cons", 2*time.Second)
		if err == nil && strings.Contains(s, "sid="+sid+",") {
			return i
		}
	}
	return -1
}

// benchZKMarks are the sizes of the members' server logs: where what
// happens next starts (the logs are appended to across restarts).
func benchZKMarks(c *zkCluster) []int64 {
	marks := make([]int64, c.Size())
	for i := range marks {
		if fi, err := os.Stat(c.LogPath(i)); err == nil {
			marks[i] = fi.Size()
		}
	}
	return marks
}

// benchZKLooking counts, since marks, the times a member went LOOKING (it
// lost its leader or its quorum: its clients lose their connections) by
// the members' own logs.
func benchZKLooking(c *zkCluster, marks []int64) int {
	n := 0
	for i, m := range marks {
		f, err := os.Open(c.LogPath(i))
		if err != nil {
			continue
		}
		if _, err := f.Seek(m, 0); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "Peer state changed: looking") {
					n++
				}
			}
		}
		f.Close()
	}
	return n
}

// benchZKPids are the members' JVM pids (0 for a member not running).
func benchZKPids(c *zkCluster) []int {
	pids := make([]int, c.Size())
	for i, m := range c.members {
		if !m.running() {
			continue
		}
		m.mu.Lock()
		if m.cmd != nil && m.cmd.Process != nil {
			pids[i] = m.cmd.Process.Pid
		}
		m.mu.Unlock()
	}
	return pids
}

func benchZKVersion(c *zkCluster) string {
	s, _ := zkFourLetterWord(c.Servers()[0], "srvr", 2*time.Second)
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, "Zookeeper version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// sessionOf reads the (last) session id a ballot log reports.
func benchSessionOf(p *ballotProc) string {
	m := benchSessLog.FindAllStringSubmatch(p.out.String(), -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

var benchTimeoutLog = regexp.MustCompile(`"session_timeout":(\d+)`)

// benchNegotiated reads the negotiated session timeout a ballot log reports.
func benchNegotiated(p *ballotProc) string {
	m := benchTimeoutLog.FindStringSubmatch(p.out.String())
	if m == nil {
		return "?"
	}
	ns, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Duration(ns).String()
}

// ---------------------------------------------------------------------------
// /proc

func benchRSS(pid int) (rssKiB, pssKiB int64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				rssKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				pssKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	return
}

// benchCPU is utime+stime of pid in clock ticks (USER_HZ, 100 on Linux).
func benchCPU(pid int) int64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	// after the comm: state(0) ppid(1) … utime(11) stime(12)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// benchRuntime is the time pid's threads have spent on a CPU, in ns, from
// /proc/PID/task/*/schedstat (precise, but without exited threads; an idle
// Go process keeps its threads).
func benchRuntime(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			v, _ := strconv.ParseInt(fs[0], 10, 64)
			sum += v
		}
	}
	return sum
}

// ---------------------------------------------------------------------------
// ballot's logs

// benchLogEvent is one timestamped line of a ballot log (JSON, nanosecond
// resolution).
type benchLogEvent struct {
	t    time.Time
	cand string
	msg  string
}

// benchLogEvents reads the events named msgs off the logs of every
// incarnation of each candidate (benchElection.runs).
func benchLogEvents(runs map[string][]*ballotProc, msgs ...string) []benchLogEvent {
	want := map[string]bool{}
	for _, m := range msgs {
		want[m] = true
	}
	var out []benchLogEvent
	for cand, ps := range runs {
		for _, p := range ps {
			sc := bufio.NewScanner(strings.NewReader(p.out.String()))
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				var rec struct {
					Time time.Time `json:"time"`
					Msg  string    `json:"msg"`
				}
				if json.Unmarshal(sc.Bytes(), &rec) != nil || !want[rec.Msg] {
					continue
				}
				out = append(out, benchLogEvent{t: rec.Time, cand: cand, msg: rec.Msg})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.Before(out[j].t) })
	return out
}

type benchStep struct{ cand, msg string }

// benchSteps finds, in order, the first event of each step at or after the
// previous one, within [from, to]; ok is false if one is missing.
func benchSteps(ev []benchLogEvent, from, to time.Time, steps []benchStep) ([]time.Time, bool) {
	var out []time.Time
	at := from
	for _, st := range steps {
		found := false
		for _, x := range ev {
			if x.t.Before(at) || x.t.After(to) || x.cand != st.cand || x.msg != st.msg {
				continue
			}
			out, at, found = append(out, x.t), x.t, true
			break
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// benchLogDur returns the duration field key (slog's JSON handler logs a
// duration as nanoseconds) of the first line of log whose msg starts with
// msg; 0 if none.
func benchLogDur(log, msg, key string) time.Duration {
	for _, r := range benchLogRecords(log, msg) {
		if d, ok := r.dur(key); ok {
			return d
		}
	}
	return 0
}

type benchLogRecord struct {
	t      time.Time
	msg    string
	fields map[string]string // as written: strings, numbers
}

func (r benchLogRecord) dur(key string) (time.Duration, bool) {
	v, ok := r.fields[key]
	if !ok {
		return 0, false
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	return time.Duration(ns), err == nil
}

// benchLogRecords parses the JSON lines of log whose msg starts with msg.
func benchLogRecords(log, msg string) []benchLogRecord {
	var out []benchLogRecord
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var rec map[string]any
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		if d.Decode(&rec) != nil {
			continue
		}
		m, _ := rec["msg"].(string)
		if !strings.HasPrefix(m, msg) {
			continue
		}
		r := benchLogRecord{msg: m, fields: map[string]string{}}
		if ts, ok := rec["time"].(string); ok {
			r.t, _ = time.Parse(time.RFC3339Nano, ts)
		}
		for k, v := range rec {
			r.fields[k] = fmt.Sprint(v)
		}
		out = append(out, r)
	}
	return out
}
