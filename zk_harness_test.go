package main

// Test harness: real ZooKeeper servers (Debian's `zookeeper` package, run
// directly with java) for the tests and benchmarks of this package.
//
//	c := startZK(t, 1)                                  // standalone
//	c := startZKWith(t, zkOptions{N: 3})                // 3-member ensemble
//	conn := zkConnect(t, c.Servers(), time.Second)     // a plain client (harness_test.go)
//	c.Kill(0); c.Start(0); c.StopAll(); c.StartAll(); c.Mode(1); c.Mntr(2)
//
// Partitioning one member from its peers (quorum and election traffic)
// while its clients still reach it:
//
//	c := startZKWith(t, zkOptions{N: 3, PeerProxies: true})
//	c.CutOff(1)  // member 1 hears no peer; for SyncLimit × TickTime it still
//	             // answers its clients' reads and pings from its stale copy
//	c.Heal(1)    // or c.HealAll(); member 1 rejoins within a few seconds
//
// Pauses, graceful and rolling restarts, per-member configuration and the
// asymmetric deposition of a ZooKeeper leader are in zk_faults_test.go.
//
// If ZooKeeper or java is missing, run scripts/ensure-zookeeper.sh; the
// harness fails the test (it never skips).
//
// The ballot binary: this file does NOT build it. The end-to-end test file
// (e2e) builds the binary once and hands its path to the tests that need it;
// use that, do not add another `go build` here.
//
// Layering: launchZK and the lower-case, error-returning methods (start,
// kill, waitReady, close, ...) need no testing.TB, so a benchmark program can
// reuse them; startZK/startZKWith and the capitalised methods are thin
// wrappers that call t.Fatal on error and register t.Cleanup.
//
// Every server runs in its own process group with Pdeathsig=SIGKILL, so a
// test binary that crashes does not leave java processes behind.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	zkJar           = "/usr/share/java/zookeeper.jar" // pulls its dependencies via the manifest Class-Path
	zkSlf4jSimple   = "/usr/share/java/slf4j-simple.jar"
	zkMainClass     = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	zkPollInterval  = 50 * time.Millisecond
	zkDefaultTick   = 200 * time.Millisecond
	zkDefaultReady  = 30 * time.Second
	zkLogTailLines  = 40
	zkFourLetterTTL = time.Second
	// zkPeerMaxNotification caps a LOOKING member's back-off between
	// election rounds (ZooKeeper doubles it up to 60 s), so a member cut off
	// for long still rejoins within about a second of Heal.
	zkPeerMaxNotification = time.Second
	// zkPeerDialRetry: how long a peer proxy retries a refused dial, as
	// ZooKeeper would retry the connect itself (e.g. a follower racing its
	// new leader's listener), instead of resetting an accepted connection.
	zkPeerDialRetry = time.Second
)

// zkOptions configures launchZK / startZKWith. The zero value is a
// standalone server with tickTime 200 ms.
type zkOptions struct {
	N            int           // members: 1 = standalone (default), 3 = ensemble (any N >= 2 is an ensemble)
	TickTime     time.Duration // default 200ms; session timeouts are clamped to [2, 20] × TickTime
	ReadyTimeout time.Duration // per start/wait; default 30s
	Fsync        bool          // false (default): forceSync=no, faster; true for realistic benchmarks
	SyncLimit    int           // ticks a follower may go unheard by its leader (and vice versa); default 5
	InitLimit    int           // ticks a follower may take to connect and sync to a leader; default 10
	ExtraConfig  []string      // extra "key=value" lines appended to every zoo.cfg
	JavaFlags    []string      // extra JVM flags
	ClassPath    []string      // extra jars (TLS: zkNettyJars)
	// MemberConfig: extra lines for member i's zoo.cfg only, after
	// ExtraConfig (a later key wins), e.g. {0: {"syncLimit=2"}}; see
	// SetMemberConfig to change them between restarts.
	MemberConfig map[int][]string
	// SecurePort also serves TLS on a secureClientPort (SecureServers);
	// the ssl.* lines and the Netty factory go in ExtraConfig. The plain
	// clientPort stays, for readiness checks and plain clients.
	SecurePort bool
	// PeerProxies (N >= 2): every member reaches every other member's quorum
	// and election ports through its own pair of harness proxies, so CutOff
	// can silence a member's peer links while its client port stays direct.
	// It also caps the election back-off (zkPeerMaxNotification).
	PeerProxies bool
	// Logf, if set, receives progress lines (startZK sets it to t.Logf).
	Logf func(format string, args ...any)
}

func (o *zkOptions) defaults() {
	if o.N <= 0 {
		o.N = 1
	}
	if o.TickTime <= 0 {
		o.TickTime = zkDefaultTick
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = zkDefaultReady
	}
	if o.SyncLimit <= 0 {
		o.SyncLimit = 5
	}
	if o.InitLimit <= 0 {
		o.InitLimit = 10
	}
}

// zkCluster is a set of ZooKeeper servers on 127.0.0.1. Member indexes are
// 0-based (member i has myid i+1).
type zkCluster struct {
	opts    zkOptions
	dir     string
	tb      testing.TB // nil when created by launchZK directly
	members []*zkMember

	// links[i][j] carries what member i sends to member j (PeerProxies;
	// nil otherwise). Made by configure, so they outlive member restarts.
	links [][]zkPeerLink
	cutMu sync.Mutex
	cut   []bool // members cut off from their peers
}

// zkPeerLink is the pair of proxies one member dials to reach another.
type zkPeerLink struct {
	quorum, election *tcpProxy
}

type zkMember struct {
	id                                   int // myid, 1-based
	clientPort, quorumPort, electionPort int
	securePort                           int // 0: none
	dir, dataDir, cfgPath, logPath       string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	waitErr error         // valid after done is closed
	extra   []string      // own zoo.cfg lines: zkOptions.MemberConfig, SetMemberConfig
}

// ---------------------------------------------------------------------------
// testing.TB wrappers

// startZK starts n servers (1 = standalone, 3 = ensemble) with default
// options and waits until every one serves.
func startZK(t testing.TB, n int) *zkCluster {
	t.Helper()
	return startZKWith(t, zkOptions{N: n})
}

// startZKWith starts servers with the given options in a fresh t.TempDir().
// It fails the test if java or ZooKeeper is missing or a server does not come
// up; t.Cleanup kills every server (and prints the server log tails if the
// test failed); the directory is removed by the testing package.
func startZKWith(t testing.TB, opts zkOptions) *zkCluster {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	dir := t.TempDir() // registered before our cleanup, so removed after it
	c, err := launchZK(dir, opts)
	if err != nil {
		t.Fatalf("zk harness: %v", err)
	}
	c.tb = t
	t.Cleanup(func() {
		if t.Failed() {
			for i := range c.members {
				t.Logf("zk harness: last %d lines of %s:\n%s", zkLogTailLines, c.members[i].logPath, c.logTail(i, zkLogTailLines))
			}
		}
		c.close()
	})
	return c
}

func (c *zkCluster) fatalf(format string, args ...any) {
	if c.tb != nil {
		c.tb.Helper()
		c.tb.Fatalf("zk harness: "+format, args...)
	}
	panic(fmt.Sprintf("zk harness: "+format, args...))
}

// Servers returns the client addresses ("127.0.0.1:port") of all members,
// running or not.
func (c *zkCluster) Servers() []string {
	s := make([]string, len(c.members))
	for i, m := range c.members {
		s[i] = m.clientAddr()
	}
	return s
}

// SecureServers returns the TLS client addresses ("127.0.0.1:port") of
// all members (zkOptions.SecurePort).
func (c *zkCluster) SecureServers() []string {
	s := make([]string, len(c.members))
	for i, m := range c.members {
		s[i] = fmt.Sprintf("127.0.0.1:%d", m.securePort)
	}
	return s
}

// ConnString returns the client addresses joined with commas.
func (c *zkCluster) ConnString() string { return strings.Join(c.Servers(), ",") }

// TickTime returns the configured tickTime.
func (c *zkCluster) TickTime() time.Duration { return c.opts.TickTime }

// Dir is the directory holding each member's zk<id>/{zoo.cfg,data,server.log}.
func (c *zkCluster) Dir() string { return c.dir }

// LogPath returns member i's server log file.
func (c *zkCluster) LogPath(i int) string { return c.members[i].logPath }

// Size returns the number of members.
func (c *zkCluster) Size() int { return len(c.members) }

// Kill sends SIGKILL to member i and waits for it to exit. No-op if it is not running.
func (c *zkCluster) Kill(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.kill(i); err != nil {
		c.fatalf("%v", err)
	}
}

// Stop is Kill (SIGTERM would take ~2 s and gains nothing for the tests).
func (c *zkCluster) Stop(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	c.Kill(i)
}

// Start restarts member i (same ports, config and data) and waits until it
// serves. A lone member of an ensemble cannot serve without a quorum: use
// StartNoWait and then WaitReady.
func (c *zkCluster) Start(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.start(i, true); err != nil {
		c.fatalf("%v", err)
	}
}

// StartNoWait restarts member i without waiting for it to serve.
func (c *zkCluster) StartNoWait(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.start(i, false); err != nil {
		c.fatalf("%v", err)
	}
}

// WaitReady waits until every running member serves (srvr prints a Mode).
func (c *zkCluster) WaitReady(timeout time.Duration) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.waitReady(timeout); err != nil {
		c.fatalf("%v", err)
	}
}

// StopAll kills every member.
func (c *zkCluster) StopAll() {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.killAll(); err != nil {
		c.fatalf("%v", err)
	}
}

// StartAll starts every member that is not running (same ports and data)
// and waits until all serve.
func (c *zkCluster) StartAll() {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.startAll(); err != nil {
		c.fatalf("%v", err)
	}
}

// CutOff silences every link between member i and its peers, both ways
// (needs PeerProxies). Bytes are dropped, nothing is closed; the client port
// stays reachable. A follower notices after SyncLimit × TickTime without its
// leader (a leader, without a quorum of followers) and stops serving; until
// then it answers its clients' reads and pings from its stale copy, while
// the quorum may already expire their sessions.
func (c *zkCluster) CutOff(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.setCut(i, true); err != nil {
		c.fatalf("%v", err)
	}
}

// Heal lifts CutOff(i); a link to a member that is still cut off stays
// silent. Connections that lost bytes are reset (see tcpproxy_test.go), and
// member i rejoins, normally within a second or two.
func (c *zkCluster) Heal(i int) {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.setCut(i, false); err != nil {
		c.fatalf("%v", err)
	}
}

// HealAll lifts every CutOff.
func (c *zkCluster) HealAll() {
	if c.tb != nil {
		c.tb.Helper()
	}
	if err := c.healAll(); err != nil {
		c.fatalf("%v", err)
	}
}

// Mode returns "leader", "follower", "standalone" (or "observer"), or "" if
// member i is down or not serving.
func (c *zkCluster) Mode(i int) string {
	mode, _ := c.mode(i)
	return mode
}

// Leader returns the index of the member whose Mode is "leader" (or
// "standalone"), or -1.
func (c *zkCluster) Leader() int {
	for i := range c.members {
		if m := c.Mode(i); m == "leader" || m == "standalone" {
			return i
		}
	}
	return -1
}

// Running reports whether member i's process is alive (it may not serve yet).
func (c *zkCluster) Running(i int) bool { return c.members[i].running() }

// Mntr returns member i's `mntr` output as key → value (e.g.
// "zk_server_state", "zk_num_alive_connections", "zk_avg_latency"); empty
// if the member does not answer.
func (c *zkCluster) Mntr(i int) map[string]string {
	m, _ := c.mntr(i)
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// ---------------------------------------------------------------------------
// Error-returning core (usable without testing.TB)

// launchZK creates opts.N servers under dir (which must exist), starts them
// and waits until all serve. If a server fails because a port was taken in
// the meantime, the whole start is retried once with new ports. The caller
// must call close() when done.
func launchZK(dir string, opts zkOptions) (*zkCluster, error) {
	opts.defaults()
	if err := zkCheckInstalled(); err != nil {
		return nil, err
	}
	for _, jar := range opts.ClassPath {
		if _, err := os.Stat(jar); err != nil {
			return nil, fmt.Errorf("%v; run scripts/ensure-zookeeper.sh", err)
		}
	}
	c := &zkCluster{opts: opts, dir: dir}
	for id := 1; id <= opts.N; id++ {
		md := filepath.Join(dir, fmt.Sprintf("zk%d", id))
		c.members = append(c.members, &zkMember{
			id:      id,
			dir:     md,
			dataDir: filepath.Join(md, "data"),
			cfgPath: filepath.Join(md, "zoo.cfg"),
			logPath: filepath.Join(md, "server.log"),
			extra:   opts.MemberConfig[id-1],
		})
	}
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		t0 := time.Now()
		if err = c.configure(); err != nil {
			c.close()
			return nil, err
		}
		if err = c.startAll(); err == nil {
			c.logf("zk harness: %d member(s) serving at %s in %v", opts.N, c.ConnString(), time.Since(t0).Round(time.Millisecond))
			return c, nil
		}
		_ = c.killAll()
		if !c.portClash() {
			break
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		c.logf("zk harness: port clash (%s); retrying with new ports", first)
	}
	c.close()
	return nil, err
}

func zkCheckInstalled() error {
	if _, err := os.Stat(zkJar); err != nil {
		return fmt.Errorf("ZooKeeper is not installed (%v); run scripts/ensure-zookeeper.sh", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("java is not on PATH (%v); run scripts/ensure-zookeeper.sh", err)
	}
	return nil
}

func (c *zkCluster) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// configure allocates fresh ports (and peer proxies) and (re)writes every
// member's config and an empty data dir.
func (c *zkCluster) configure() error {
	per := 1
	if len(c.members) > 1 {
		per = 3
	}
	if c.opts.SecurePort {
		per++
	}
	// Held until the proxies listen, so none of them takes a member's port.
	ports, release, err := zkReservePorts(per * len(c.members))
	if err != nil {
		return err
	}
	defer release()
	for i, m := range c.members {
		m.clientPort = ports[per*i]
		if len(c.members) > 1 {
			m.quorumPort, m.electionPort = ports[per*i+1], ports[per*i+2]
		}
		if c.opts.SecurePort {
			m.securePort = ports[per*i+per-1]
		}
	}
	c.closeLinks() // a retry has new member ports, so new targets
	if err := c.openLinks(); err != nil {
		return err
	}
	for _, m := range c.members {
		if err := os.RemoveAll(m.dataDir); err != nil {
			return err
		}
		if err := os.MkdirAll(m.dataDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(m.cfgPath, []byte(c.config(m)), 0o644); err != nil {
			return err
		}
		if len(c.members) > 1 {
			if err := os.WriteFile(filepath.Join(m.dataDir, "myid"), []byte(strconv.Itoa(m.id)+"\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *zkCluster) config(m *zkMember) string {
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	w("tickTime", c.opts.TickTime.Milliseconds())
	w("dataDir", m.dataDir)
	w("clientPort", m.clientPort)
	w("clientPortAddress", "127.0.0.1")
	if m.securePort != 0 {
		w("secureClientPort", m.securePort)
		w("secureClientPortAddress", "127.0.0.1")
	}
	w("maxClientCnxns", 0)
	w("admin.enableServer", "false")
	w("4lw.commands.whitelist", "srvr,mntr,ruok,cons,wchc,stat")
	w("reconfigEnabled", "false")
	w("standaloneEnabled", "true")
	w("initLimit", c.opts.InitLimit)
	w("syncLimit", c.opts.SyncLimit)
	if !c.opts.Fsync {
		w("forceSync", "no")
	}
	w("preAllocSize", 1024) // KB; the default 64 MB is pointless here
	for _, o := range c.members {
		if len(c.members) > 1 {
			q, e := o.quorumPort, o.electionPort
			if c.links != nil && o != m { // its own line keeps the ports it binds
				l := c.links[m.id-1][o.id-1]
				q, e = proxyPort(l.quorum), proxyPort(l.election)
			}
			w(fmt.Sprintf("server.%d", o.id), fmt.Sprintf("127.0.0.1:%d:%d", q, e))
		}
	}
	for _, l := range c.opts.ExtraConfig {
		b.WriteString(l + "\n")
	}
	m.mu.Lock()
	for _, l := range m.extra {
		b.WriteString(l + "\n")
	}
	m.mu.Unlock()
	return b.String()
}

// zkFreePorts returns n distinct free TCP ports on 127.0.0.1 (all listeners
// are held open until every port is known, then closed).
func zkFreePorts(n int) ([]int, error) {
	ports, release, err := zkReservePorts(n)
	release()
	return ports, err
}

// zkReservePorts is zkFreePorts with the listeners still open: release
// closes them.
func zkReservePorts(n int) (ports []int, release func(), err error) {
	var ls []net.Listener
	release = func() {
		for _, l := range ls {
			l.Close()
		}
	}
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			release()
			return nil, func() {}, fmt.Errorf("allocating a port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, release, nil
}
