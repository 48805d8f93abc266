package main

// The harness's own test of its peer proxies: a member cut off from its
// peers behaves as ZooKeeper does when partitioned, and heals.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// harnessRead is one Exists+Get on a member, as answered (or failed).
type harnessRead struct {
	at     time.Time // when answered
	exists bool
	err    error
}

// harnessReadLoop reads path on conn until stop is closed or a read fails,
// sending every result on the returned channel (buffered: a read blocked in
// the client ends with the connection at cleanup, so nothing leaks).
func harnessReadLoop(conn *zk.Conn, path string, stop <-chan struct{}) <-chan harnessRead {
	out := make(chan harnessRead, 10000)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			ok, _, err := conn.Exists(path)
			if err == nil && ok {
				_, _, err = conn.Get(path)
				if errors.Is(err, zk.ErrNoNode) {
					ok, err = false, nil
				}
			}
			out <- harnessRead{at: time.Now(), exists: ok, err: err}
			if err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return out
}

// harnessPeerConns inspects the established TCP connections to the
// members' quorum and election ports: proxied counts those whose other end
// is a socket of this process (a harness proxy); direct lists the others.
func harnessPeerConns(t *testing.T, c *zkCluster) (proxied int, direct []string) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("reading /proc/net/tcp: %v", err)
	}
	peerPorts := map[int]string{}
	for i, m := range c.members {
		peerPorts[m.quorumPort] = fmt.Sprintf("member %d quorum port", i)
		peerPorts[m.electionPort] = fmt.Sprintf("member %d election port", i)
	}
	type ends struct{ local, remote int }
	inode := map[ends]string{}
	port := func(hexAddr string) int {
		_, p, _ := strings.Cut(hexAddr, ":")
		n, _ := strconv.ParseInt(p, 16, 32)
		return int(n)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "01" { // 01 = ESTABLISHED
			continue
		}
		inode[ends{port(f[1]), port(f[2])}] = f[9]
	}
	ours := map[string]bool{}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil {
			if v, ok := strings.CutPrefix(l, "socket:["); ok {
				ours[strings.TrimSuffix(v, "]")] = true
			}
		}
	}
	for e := range inode {
		what, ok := peerPorts[e.local]
		if !ok {
			continue
		}
		if other, ok := inode[ends{e.remote, e.local}]; ok && ours[other] {
			proxied++
		} else {
			direct = append(direct, fmt.Sprintf("%s ← 127.0.0.1:%d", what, e.remote))
		}
	}
	return proxied, direct
}

// harnessCheckProxied fails the test if any member talks to another
// without crossing a harness proxy.
func harnessCheckProxied(t *testing.T, c *zkCluster, when string) {
	t.Helper()
	proxied, direct := harnessPeerConns(t, c)
	if len(direct) > 0 || proxied == 0 {
		t.Fatalf("%s: %d proxied peer connections; direct ones: %v", when, proxied, direct)
	}
	t.Logf("%s: %d peer connections, all through harness proxies", when, proxied)
}

// harnessWaitMode polls member i until ok(Mode) holds; it returns when.
func harnessWaitMode(t *testing.T, c *zkCluster, i int, what string, ok func(string) bool, timeout time.Duration) time.Time {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		if ok(c.Mode(i)) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d not %s within %v (Mode %q)", i, what, timeout, c.Mode(i))
		}
		time.Sleep(zkPollInterval)
	}
}

func serving(mode string) bool { return mode == "leader" || mode == "follower" }

// TestHarnessPeerCutOff: a member cut off from its peers by the proxies
// keeps serving its clients from a stale copy for about syncLimit × tickTime
// while the quorum expires their sessions; it rejoins after the heal. A cut
// leader is replaced by the other two.
func TestHarnessPeerCutOff(t *testing.T) {
	// Serial: (i) wants reads answered 2 s into a cut whose member serves
	// for 2.5 s, half a second that load on the JVM could eat.
	const (
		tick      = 500 * time.Millisecond
		syncLimit = 5
		stale     = syncLimit * tick // how long a cut-off follower goes on serving
		session   = 2 * time.Second
	)
	t0 := time.Now()
	c := startZKWith(t, zkOptions{N: 3, TickTime: tick, SyncLimit: syncLimit, PeerProxies: true})
	t.Logf("3 members with peer proxies serving in %v", time.Since(t0).Round(time.Millisecond))
	harnessCheckProxied(t, c, "after start")

	// a. A follower m, cut off from its peers.
	m := -1
	for i := 0; i < 3 && m < 0; i++ {
		if c.Mode(i) == "follower" {
			m = i
		}
	}
	if m < 0 {
		t.Fatalf("no follower: modes %q %q %q", c.Mode(0), c.Mode(1), c.Mode(2))
	}
	var others []string
	for i, s := range c.Servers() {
		if i != m {
			others = append(others, s)
		}
	}
	mc, mevents := harnessConnect(t, []string{c.Servers()[m]}, session)
	const eph = "/cutoff-eph"
	if _, err := mc.Create(eph, []byte("m"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral via member %d: %v", m, err)
	}
	// A second reader on m (its own session): its reads are never held
	// behind the sync below, so it shows how long m keeps serving.
	rc, _ := harnessConnect(t, []string{c.Servers()[m]}, session)
	oc, _ := harnessConnect(t, others, session)
	if _, err := oc.Sync(eph); err != nil {
		t.Fatalf("sync on the other members: %v", err)
	}
	if ok, _, err := oc.Exists(eph); err != nil || !ok {
		t.Fatalf("ephemeral not seen by the other members: %v, %v", ok, err)
	}

	cut := time.Now()
	c.CutOff(m)
	since := func(at time.Time) time.Duration { return at.Sub(cut).Round(10 * time.Millisecond) }
	t.Logf("member %d (follower) cut off from its peers", m)
	stop := make(chan struct{})
	defer close(stop)
	mstop := make(chan struct{})
	mreads := harnessReadLoop(mc, eph, mstop)
	rreads := harnessReadLoop(rc, eph, stop)

	// The quorum expires m's client's session and deletes its node.
	gone := make(chan time.Time, 1)
	go func() {
		for deadline := cut.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case <-stop:
				return
			default:
			}
			if ok, _, err := oc.Exists(eph); err == nil && !ok {
				gone <- time.Now()
				return
			}
		}
	}()

	// (i) m's client's reads are answered, from the stale copy, for 2 s.
	var lastStale time.Time
	for lastStale.Sub(cut) < 2*time.Second {
		select {
		case r := <-mreads:
			if r.err != nil {
				t.Fatalf("read on cut-off member %d failed %v after the cut (want answers for 2s): %v", m, since(r.at), r.err)
			}
			if !r.exists {
				t.Fatalf("cut-off member %d reports the node gone %v after the cut: not a stale copy?", m, since(r.at))
			}
			lastStale = r.at
		case <-time.After(2 * time.Second):
			t.Fatalf("no read answered by cut-off member %d for 2s (last %v after the cut)", m, since(lastStale))
		}
	}
	t.Logf("(i) member %d answered its client's Exists/Get (node present) until %v after the cut", m, since(lastStale))

	// (iii) A sync from the same client must not succeed: m cannot reach
	// the leader. (Issued only now: it holds the session's later requests.)
	type syncResult struct {
		at  time.Time
		err error
	}
	close(mstop)
	syncDone := make(chan syncResult, 1)
	syncAt := time.Now()
	go func() {
		_, err := mc.Sync(eph)
		syncDone <- syncResult{time.Now(), err}
	}()

	// Watch it all until m drops out and the sync is settled.
	var goneAt, droppedAt, rLast, rLastAfterGone time.Time
	var syncRes *syncResult
	rDone := false
	for deadline := cut.Add(stale + 6*time.Second); time.Now().Before(deadline); time.Sleep(zkPollInterval) {
		select {
		case g := <-gone:
			goneAt = g
		default:
		}
		select {
		case r := <-syncDone:
			syncRes = &r
		default:
		}
	drain:
		for !rDone {
			select {
			case r := <-rreads:
				if r.err != nil || !r.exists {
					rDone = true
					break drain
				}
				rLast = r.at
				if !goneAt.IsZero() && r.at.After(goneAt) {
					rLastAfterGone = r.at
				}
			default:
				break drain
			}
		}
		if droppedAt.IsZero() && c.Mode(m) == "" {
			droppedAt = time.Now()
		}
		if !goneAt.IsZero() && !droppedAt.IsZero() && syncRes != nil && rDone {
			break
		}
	}
	if goneAt.IsZero() {
		t.Fatalf("(ii) the quorum did not delete the ephemeral node of member %d's client within 10s", m)
	}
	t.Logf("(ii) the other members saw the ephemeral node deleted (session expired at the quorum) %v after the cut", since(goneAt))
	if droppedAt.IsZero() {
		t.Fatalf("cut-off member %d still serves %v after the cut (syncLimit × tickTime = %v)", m, stale+6*time.Second, stale)
	}
	t.Logf("member %d stopped serving (Mode \"\") %v after the cut; a second client's reads on it were answered until %v", m, since(droppedAt), since(rLast))
	if !rLastAfterGone.IsZero() {
		t.Logf("member %d still said the node exists %v after the quorum had deleted it", m, rLastAfterGone.Sub(goneAt).Round(10*time.Millisecond))
	}
	switch {
	case syncRes == nil:
		t.Logf("(iii) sync issued %v after the cut: still pending when member %d dropped out", since(syncAt), m)
	case syncRes.err == nil:
		t.Fatalf("(iii) sync issued %v after the cut succeeded %v after the cut on cut-off member %d", since(syncAt), since(syncRes.at), m)
	default:
		t.Logf("(iii) sync issued %v after the cut failed %v after the cut: %v", since(syncAt), since(syncRes.at), syncRes.err)
	}

	// b. Heal: m serves again, and its client learns the session expired.
	healed := time.Now()
	c.Heal(m)
	back := harnessWaitMode(t, c, m, "serving", serving, 20*time.Second)
	t.Logf("b. member %d serves again (%s) %v after the heal", m, c.Mode(m), back.Sub(healed).Round(10*time.Millisecond))
	harnessWaitState(t, mevents, zk.StateExpired, 10*time.Second)
	t.Logf("b. member %d's client told its session expired %v after the heal", m, time.Since(healed).Round(10*time.Millisecond))

	// c. Cut off the leader: the other two elect a new one; it steps down.
	l := c.Leader()
	if l < 0 {
		t.Fatalf("no leader after the heal")
	}
	lcut := time.Now()
	c.CutOff(l)
	var newLeader int
	var elected, stepped time.Time
	for deadline := lcut.Add(stale + 10*time.Second); elected.IsZero() || stepped.IsZero(); time.Sleep(zkPollInterval) {
		if time.Now().After(deadline) {
			t.Fatalf("after cutting off leader %d: new leader at %v, old one stepped down at %v (zero = not yet)", l, elected, stepped)
		}
		for i := 0; i < 3 && elected.IsZero(); i++ {
			if i != l && c.Mode(i) == "leader" {
				newLeader, elected = i, time.Now()
			}
		}
		if stepped.IsZero() && c.Mode(l) != "leader" {
			stepped = time.Now()
		}
	}
	t.Logf("c. leader %d cut off: member %d elected leader %v after the cut; member %d stopped leading %v after the cut (syncLimit × tickTime = %v)",
		l, newLeader, elected.Sub(lcut).Round(10*time.Millisecond), l, stepped.Sub(lcut).Round(10*time.Millisecond), stale)
	if d := stepped.Sub(lcut); d > stale+3*time.Second {
		t.Errorf("cut-off leader %d went on leading for %v", l, d)
	}
	for i := 0; i < 3; i++ {
		if i != l && i != newLeader {
			// It may still be syncing with the new leader.
			harnessWaitMode(t, c, i, fmt.Sprintf("a follower of %d", newLeader), func(m string) bool { return m == "follower" }, 10*time.Second)
		}
	}
	lhealed := time.Now()
	c.Heal(l)
	var whole time.Time
	for i := 0; i < 3; i++ {
		if w := harnessWaitMode(t, c, i, "serving", serving, 20*time.Second); w.After(whole) {
			whole = w
		}
	}
	if c.Leader() < 0 {
		t.Fatalf("no leader after healing member %d", l)
	}
	t.Logf("c. member %d healed: 3 members serving again %v later (member %d is %s)", l, whole.Sub(lhealed).Round(10*time.Millisecond), l, c.Mode(l))
	harnessCheckProxied(t, c, "after the heals")

	// d. Restarts keep the proxies (same ports in every zoo.cfg).
	t1 := time.Now()
	c.Kill(l)
	c.Start(l)
	c.StopAll()
	c.StartAll()
	if c.Leader() < 0 {
		t.Fatalf("no leader after StopAll/StartAll")
	}
	t.Logf("d. Kill/Start and StopAll/StartAll with peer proxies: %v", time.Since(t1).Round(10*time.Millisecond))
	harnessCheckProxied(t, c, "after the restarts")
	t.Logf("total %v", time.Since(t0).Round(time.Millisecond))
}
