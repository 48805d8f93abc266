package main

// The keepers of one session shared by several elections (run crontab:
// Handoff.Shared, internal/keeper/keepershare.go), against a real
// ZooKeeper. A helper process plays ballot (sharedKeepersMain): one
// session, three elections on it, each leading with a command behind its
// own keeper, and the session's own idle keeper; the test SIGKILLs it.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/keeper"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// sharedKeepersT is the helper's session timeout; the on-demote hook of
// the first election lasts longer (sharedHookFor), so that the session
// outlives it only if the keeper keeps it alive while it runs.
const (
	sharedKeepersT = 2 * time.Second
	sharedHookFor  = sharedKeepersT * 5 / 4
)

// sharedKeepersMain is the helper (testChildMain's "sharedkeepers"):
// SERVERS ROOT DIR N RUNNING UNHELD. For each election i < N under ROOT: its
// proposal, baton and leader node (ephemeral) and handover record,
// taken; if i < RUNNING, a command ticking into DIR/tick-i behind a
// keeper told the shared session and the release (election 1's command
// ignores SIGTERM; election 0 has an on-demote hook that writes
// DIR/hook); the others rest between runs, their releases held by the
// session's own keeper, but for election UNHELD's, taken back (as
// before a run). It prints "ready", then waits to be killed.
func sharedKeepersMain(args []string) int {
	os.Unsetenv("BALLOT_TEST_CHILD")     // the keepers' commands get their own
	os.Setenv("BALLOT_TEST_KEEPER", "1") // this binary is their keeper (TestMain)
	servers, root, dir := strings.Split(args[0], ","), args[1], args[2]
	n, _ := strconv.Atoi(args[3])
	running, _ := strconv.Atoi(args[4])
	unheld, _ := strconv.Atoi(args[5])
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "sharedkeepers:", err); return 3 }
	log := newLogger(os.Stderr, "human", slog.LevelInfo)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: servers, ZooKeeperACL: aclOpen})
	if err != nil {
		return fail(err)
	}
	s, err := zookeeper.DialSession(log, acc, sharedKeepersT, 10*time.Second, nil)
	if err != nil {
		return fail(err)
	}
	s.ShareKeepers()
	if _, err := startSessionKeeper(s); err != nil {
		return fail(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	if _, err := s.Conn.Create(root, nil, 0, acl); err != nil {
		return fail(err)
	}
	for i := range n {
		base := fmt.Sprintf("%s/e%d", root, i)
		rec := handoverRecord{State: handoverTaken, Proposal: base + "/proposal", Session: zookeeper.SessionHex(s.ID())}
		taken, _ := json.Marshal(rec)
		rec.State = handoverReleased
		released, _ := json.Marshal(rec)
		for _, nd := range []struct {
			path  string
			data  []byte
			flags int32
		}{{base, nil, 0}, {base + "/proposal", nil, zk.FlagEphemeral}, {base + "/baton", nil, zk.FlagEphemeral},
			{base + "/leader", nil, zk.FlagEphemeral}, {base + "/handover", taken, 0}} {
			if _, err := s.Conn.Create(nd.path, nd.data, nd.flags, acl); err != nil {
				return fail(err)
			}
		}
		h := s.Handoff()
		if h == nil || !h.Shared {
			return fail(fmt.Errorf("handoff %+v: want a shared session's", h))
		}
		h.ReleasePath, h.ReleaseVersion, h.ReleaseData = base+"/handover", 0, released
		h.Proposal, h.Baton = base+"/proposal", base+"/baton"
		if i >= running {
			// At rest: no keeper of its own, its release held by the
			// session's keeper (as cron.go's keepIdle does).
			k, err := startIdleKeeper(h, nil, false)
			if err != nil || k == nil || k.held == "" {
				return fail(fmt.Errorf("election %d at rest: %+v, %v; want its release held", i, k, err))
			}
			if i == unheld {
				k.stop() // as before a run's start: taken back
			}
			continue
		}
		mode := "tick"
		if i == 1 {
			mode = "stubborn"
		}
		spec := childSpec{Argv: []string{os.Args[0], filepath.Join(dir, fmt.Sprintf("tick-%d", i))},
			Env: []string{"BALLOT_TEST_CHILD=" + mode}, Grace: 100 * time.Millisecond, Handoff: h}
		if i == 0 {
			spec.Demote = &keeper.DemoteHook{Argv: []string{os.Args[0], filepath.Join(dir, "hook"), "on-demote", sharedHookFor.String()},
				Env: []string{"BALLOT_TEST_CHILD=event"}, Timeout: 4 * sharedHookFor, LogFormat: "human"}
		}
		c, err := startChild(log, spec)
		if err != nil {
			return fail(err)
		}
		if c.pid == 0 {
			return fail(fmt.Errorf("election %d: %s", i, c.Exit().Reason))
		}
	}
	fmt.Println("ready")
	select {}
}

// TestSharedKeepersEndTheSessionLast: ballot, leading four elections on
// one session, three with a command running, is SIGKILLed. Each keeper
// kills its command's tree (one that ignores SIGTERM too), and no baton
// is given back before every tree is reaped (each record's release
// stamp, taken just before the release, is later than every tree's last
// tick): each running job's by its keeper, the job at rest's by the
// session's keeper, each withdrawing its proposal. The first election's
// on-demote hook outlasts the session timeout: its keeper keeps the
// session alive meanwhile by turns, so its release still commits after
// it. The session is closed once, after every release: the leader nodes
// (which only the session's end deletes) go in one transaction, later
// than every record's release, and before the session could have
// expired (T after the last keeper's connect, the last release's).
func TestSharedKeepersEndTheSessionLast(t *testing.T) {
	t.Parallel()
	const n, running = 4, 3
	zkc := sharedZK(t)
	dir := t.TempDir()
	root := fmt.Sprintf("/sharedkeepers-%d", time.Now().UnixNano())
	helper := startSharedKeepers(t, zkc, root, dir, n, running, -1)
	tickFile := func(i int) string { return filepath.Join(dir, fmt.Sprintf("tick-%d", i)) }
	for i := range running {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // a hang, not a measure
			if b, _ := os.ReadFile(tickFile(i)); len(b) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("election %d's command never ticked", i)
			}
		}
	}
	conn := zkConnect(t, zkc.Servers(), sharedKeepersT)
	killed, closedSeen := killSharedKeepers(t, conn, helper, root, n)

	// Every tree's last tick, before any release.
	var lastTick time.Time
	for i := range running {
		for _, tk := range readTicks(t, tickFile(i)) {
			lastTick = later(lastTick, tk)
		}
	}
	var lastRelease time.Time
	var lastReleaseZxid int64
	for i := range n {
		base := fmt.Sprintf("%s/e%d", root, i)
		b, st, err := conn.Get(base + "/handover")
		var rec handoverRecord
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil || rec.State != handoverReleased || st.Version != 1 {
			t.Fatalf("election %d's record: %s (version %d), %v; want it released by its keeper", i, b, st.Version, err)
		}
		for _, nd := range []string{"/proposal", "/baton"} {
			if ok, _, _ := conn.Exists(base + nd); ok {
				t.Errorf("election %d: %s outlived the release", i, nd)
			}
		}
		if !lastTick.Before(rec.At) {
			t.Errorf("election %d's baton was given back at %s, a command ticked at %s: before every tree was reaped",
				i, rec.At.Format(time.RFC3339Nano), lastTick.Format(time.RFC3339Nano))
		}
		t.Logf("election %d (running %v): released %s after the last tick of any tree, %s after the kill (stamps)", i, i < running,
			rec.At.Sub(lastTick).Round(time.Microsecond), rec.At.Sub(killed).Round(time.Microsecond))
		lastRelease, lastReleaseZxid = later(lastRelease, rec.At), max(lastReleaseZxid, st.Mzxid)
	}

	// The hook outlasted T and its election was still released: the
	// session was kept alive meanwhile, and that release came after it.
	hook, err := os.ReadFile(filepath.Join(dir, "hook"))
	f := strings.Fields(string(hook))
	if err != nil || len(f) < 2 {
		t.Fatalf("the on-demote hook did not run: %q, %v", hook, err)
	}
	hookEnd, _ := strconv.ParseInt(f[1], 10, 64)
	b, _, _ := conn.Get(root + "/e0/handover")
	var rec0 handoverRecord
	_ = json.Unmarshal(b, &rec0)
	if !time.Unix(0, hookEnd).Before(rec0.At) {
		t.Errorf("election 0 was released at %s, before its on-demote hook ended at %s", rec0.At.Format(time.RFC3339Nano), time.Unix(0, hookEnd).Format(time.RFC3339Nano))
	}

	// One close, after every release: the leader nodes went in one
	// transaction (each election's last change of children), later
	// than every record's release.
	var closeZxid int64
	for i := range n {
		_, st, err := conn.Get(fmt.Sprintf("%s/e%d", root, i))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && st.Pzxid != closeZxid {
			t.Errorf("election %d's leader node went in transaction %x, election 0's in %x: not one session end", i, st.Pzxid, closeZxid)
		}
		closeZxid = st.Pzxid
	}
	if closeZxid <= lastReleaseZxid {
		t.Errorf("the session ended in transaction %x, not after the last release (%x)", closeZxid, lastReleaseZxid)
	}
	// A close, not an expiry: the expiry comes T at least after the last
	// touch, the last release's connect, which its stamp follows.
	if !closedSeen.Before(lastRelease.Add(sharedKeepersT)) {
		t.Errorf("the session ended %s after the last release: expired (T = %s), not closed", closedSeen.Sub(lastRelease), sharedKeepersT)
	}
	t.Logf("session closed and seen %s after the last release", closedSeen.Sub(lastRelease).Round(time.Millisecond))
}

// startSharedKeepers starts the helper (sharedKeepersMain) and waits
// until its elections lead.
func startSharedKeepers(t *testing.T, zkc *zkCluster, root, dir string, n, running, unheld int) *exec.Cmd {
	t.Helper()
	helper := exec.Command(os.Args[0], strings.Join(zkc.Servers(), ","), root, dir, strconv.Itoa(n), strconv.Itoa(running), strconv.Itoa(unheld))
	helper.Env = append(os.Environ(), "BALLOT_TEST_CHILD=sharedkeepers")
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("the helper did not start its elections: %q", line)
	}
	return helper
}

// killSharedKeepers SIGKILLs the helper and waits for the session's end
// (a close, or an expiry, which the tests tell apart): every leader node
// deleted. It returns when it killed and when it saw the last go.
func killSharedKeepers(t *testing.T, conn *zk.Conn, helper *exec.Cmd, root string, n int) (killed, ended time.Time) {
	t.Helper()
	var leaderGone []<-chan zk.Event
	for i := range n {
		ok, _, ev, err := conn.ExistsW(fmt.Sprintf("%s/e%d/leader", root, i))
		if err != nil || !ok {
			t.Fatalf("election %d's leader node: %v, %v", i, ok, err)
		}
		leaderGone = append(leaderGone, ev)
	}
	killed = time.Now()
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	for i, ev := range leaderGone {
		select {
		case e := <-ev:
			if e.Type != zk.EventNodeDeleted {
				t.Fatalf("election %d's leader node: %v", i, e)
			}
		case <-time.After(time.Minute): // a hang, not a measure
			t.Fatalf("election %d's leader node outlived the session", i)
		}
	}
	return killed, time.Now()
}

// TestSharedSessionKeeperClosesAtRest: ballot leads three elections on one
// session, all at rest between runs: no keeper of their own, only the
// session's (startSessionKeeper), which holds their releases, but for
// the last one's, taken back (unhold, as before a run). SIGKILLed, it
// leaves that keeper to give the batons it holds back, and only those,
// and close the session at once, well before the session could have expired: 2T/3 at the
// earliest after the kill (the last ping, up to T/3 before it, counts
// from then on).
func TestSharedSessionKeeperClosesAtRest(t *testing.T) {
	t.Parallel()
	const n, unheld = 3, 2
	zkc := sharedZK(t)
	root := fmt.Sprintf("/sharedrest-%d", time.Now().UnixNano())
	helper := startSharedKeepers(t, zkc, root, t.TempDir(), n, 0, unheld)
	conn := zkConnect(t, zkc.Servers(), sharedKeepersT)
	killed, ended := killSharedKeepers(t, conn, helper, root, n)
	for i := range n {
		base := fmt.Sprintf("%s/e%d", root, i)
		if ok, _, _ := conn.Exists(base + "/baton"); ok {
			t.Errorf("election %d's baton outlived the session", i)
		}
		var rec handoverRecord
		b, st, err := conn.Get(base + "/handover")
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		switch {
		case err != nil:
			t.Errorf("election %d's record: %v", i, err)
		case i == unheld && (st.Version != 0 || rec.State != handoverTaken):
			t.Errorf("election %d's record: %s: its release was taken back, want it left taken (dropped by the close)", i, b)
		case i != unheld && (st.Version != 1 || rec.State != handoverReleased):
			t.Errorf("election %d's record: %s: want it released by the session's keeper", i, b)
		}
	}
	if !ended.Before(killed.Add(2 * sharedKeepersT / 3)) {
		t.Errorf("the session ended %s after the kill: expired (T = %s), not closed by the session's keeper", ended.Sub(killed), sharedKeepersT)
	}
	t.Logf("session closed and seen %s after the kill", ended.Sub(killed).Round(time.Millisecond))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// readTicks reads a tick file's times (testChildMain's tick lines).
func readTicks(t *testing.T, file string) []time.Time {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []time.Time
	r := bufio.NewReader(io.Reader(f))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break // the end, or a line cut by the kill
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(fields[len(fields)-1], 10, 64); err == nil {
			out = append(out, time.Unix(0, ns))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no ticks", file)
	}
	return out
}
