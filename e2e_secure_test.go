package main

// End-to-end tests of secure ZooKeeper (issue 13), the real binary against
// Debian's ZooKeeper serving TLS with its Netty connection factory and PEM
// files made at run time (pki_test.go):
//
//   - an election, a handover, info, leader and watch over TLS, the server
//     verified by the host name as written;
//   - each connection error, in one line and within the session timeout: a
//     plain client at a TLS port, TLS at a plain port, a CA that did not
//     sign, a wrong name, an expired certificate;
//   - ssl.clientAuth=need with and without a client certificate;
//   - digest credentials with each ACL mode: what an unauthenticated client
//     can do to the election, a second candidate with the same credentials,
//     wrong credentials, the ACL of every node ballot creates;
//   - a chroot in the connection string.

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zkNettyJars is what ZooKeeper's Netty connection factory, the one that
// serves TLS, needs on the class path (Debian's libnetty-java).
var zkNettyJars = []string{
	"/usr/share/java/netty-buffer.jar", "/usr/share/java/netty-codec.jar", "/usr/share/java/netty-common.jar",
	"/usr/share/java/netty-handler.jar", "/usr/share/java/netty-resolver.jar", "/usr/share/java/netty-transport.jar",
	"/usr/share/java/netty-transport-native-unix-common.jar", "/usr/share/java/netty-transport-native-epoll.jar",
}

// startTLSZK starts a standalone ZooKeeper serving TLS on its secure port
// (certificate for localhost and 127.0.0.1, signed by pki) and plain text
// on its client port.
func startTLSZK(t *testing.T, pki *testPKI, clientAuth string) *zkCluster {
	t.Helper()
	keystore := pki.keystore(t, certSpec{cn: "localhost", names: []string{"localhost", "127.0.0.1"}})
	return startZKWith(t, zkOptions{SecurePort: true, ClassPath: zkNettyJars, ExtraConfig: []string{
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + keystore, "ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + pki.CAFile, "ssl.trustStore.type=PEM",
		"ssl.clientAuth=" + clientAuth,
	}})
}

// byName is addr with its host replaced by localhost: the name a server
// certificate is checked against.
func byName(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return "localhost:" + port
}

// global is the global part of a command line.
func global(servers, base string, opts ...string) []string {
	return append([]string{"--zookeeper-servers", servers, "--zookeeper-base-path", base, "--zookeeper-session-timeout", "2s"}, opts...)
}

// runInfoJSON runs ballot info --output json.
func runInfoJSON(t *testing.T, args []string) (basicResult, *infoElection) {
	t.Helper()
	r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(args, "info", "--output", "json")...)
	if r.code == exitFailure || r.code == exitUsage {
		return r, nil
	}
	var inf infoElection
	if err := json.Unmarshal([]byte(r.stdout), &inf); err != nil {
		t.Fatalf("info output: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return r, &inf
}

// wantOneLineFailure checks a ballot that could not connect: exit 125,
// one line on stderr naming the server and saying why, within about the
// session timeout (2s).
func wantOneLineFailure(t *testing.T, r basicResult, want ...string) {
	t.Helper()
	if r.code != exitFailure {
		t.Errorf("exit code %d, want %d", r.code, exitFailure)
	}
	if lines := basicLines(r.stderr); len(lines) != 1 {
		t.Errorf("stderr is %d lines, want one:\n%s", len(lines), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q: %s", w, r.stderr)
		}
	}
	if r.elapsed > 4*time.Second {
		t.Errorf("took %s to fail, want about the session timeout (2s)", r.elapsed.Round(time.Millisecond))
	}
	t.Logf("%s: %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
}

// expiredTLSServer is a TLS listener on 127.0.0.1 whose certificate, for
// localhost, expired yesterday; it only does handshakes.
func expiredTLSServer(t *testing.T, pki *testPKI) string {
	t.Helper()
	certFile, keyFile := pki.issue(t, certSpec{cn: "localhost", names: []string{"localhost", "127.0.0.1"}, expired: true})
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSecureTLS: an election and a handover over TLS, info, leader and
// watch with the same options, and every connection error.
func TestSecureTLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	c := startTLSZK(t, pki, "want")
	tlsServers := byName(c.SecureServers()[0]) // verified as "localhost"
	tlsOpts := []string{"--zookeeper-tls-ca", pki.CAFile}

	t.Run("election and handover", func(t *testing.T) {
		base := "/tls/e"
		file := filepath.Join(t.TempDir(), "ticks")
		candidate := func(id string) *ballotProc {
			args := append(global(tlsServers, base, tlsOpts...), "run", "once", "--candidate-id", id, "--leader-data", "data of "+id,
				"--", selfExe(), file)
			return startBallot(t, id, ballotEnv(t, "BALLOT_TEST_CHILD=tick"), args...)
		}
		a := candidate("a")
		a.WaitEvent(logEvAcknowledged, 20*time.Second)
		waitTenures(t, file, 1, 10*time.Second)
		b := candidate("b")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		if !a.Logged("zookeeper_tls=true") {
			t.Errorf("the start line does not say TLS")
		}

		r, inf := runInfoJSON(t, global(tlsServers, base, tlsOpts...))
		if r.code != 0 || inf.Leader == nil || inf.Leader.ID != "a" || len(inf.Candidates) != 2 {
			t.Fatalf("info over TLS: exit %d, %+v\n%s", r.code, inf, r.stderr)
		}
		if want := []infoACL{{Scheme: "world", ID: "anyone", Perms: "cdrwa"}}; !reflect.DeepEqual(inf.ACL, want) {
			t.Errorf("info shows the ACL %+v, want %+v", inf.ACL, want)
		}
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(tlsServers, base, tlsOpts...), "leader")...)
		if r.code != 0 || r.stdout != "data of a\n" {
			t.Errorf("leader over TLS: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		w := startBallot(t, "watch", ballotEnv(t), append(global(tlsServers, base, tlsOpts...), "watch")...)
		w.WaitLog("allCandidates:", 20*time.Second) // watch's output (its first snapshot)

		a.Signal(syscall.SIGTERM)
		a.Wait(20 * time.Second)
		b.WaitEvent(logEvElected, 10*time.Second)
		w.WaitLog("leader changed: a", 10*time.Second) // watch's output
		waitTenures(t, file, 2, 10*time.Second)
		for _, gap := range checkNoOverlap(t, file) {
			t.Logf("handover over TLS: %s", gap.Round(time.Millisecond))
		}
		w.Signal(syscall.SIGINT)
		if code := w.Wait(10 * time.Second); code != 0 {
			t.Errorf("watch exit code %d", code)
		}
		b.Signal(syscall.SIGTERM)
		b.Wait(20 * time.Second)
	})

	t.Run("errors", func(t *testing.T) {
		otherCA := newTestPKI(t)
		expired := expiredTLSServer(t, pki)
		secure, plain := c.SecureServers()[0], c.Servers()[0]
		cases := []struct {
			name    string
			servers string
			opts    []string
			want    []string
		}{
			{"plain client at a TLS port", secure, nil,
				[]string{secure + " serves TLS on this port", "--zookeeper-tls"}},
			{"TLS client at a plain port", byName(plain), tlsOpts,
				[]string{plain + " does not speak TLS on this port", "secureClientPort"}},
			{"CA that did not sign the server's certificate", tlsServers, []string{"--zookeeper-tls-ca", otherCA.CAFile},
				[]string{secure + ": its certificate does not verify", "unknown authority", "--zookeeper-tls-ca"}},
			{"name the certificate is not for", tlsServers, append([]string{"--zookeeper-tls-server-name", "zk.example.com"}, tlsOpts...),
				[]string{secure + ": its certificate does not verify for the name zk.example.com", "not zk.example.com"}},
			{"expired certificate", byName(expired), tlsOpts,
				[]string{expired + ": its certificate does not verify", "expired", "renewed"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(tc.servers, "/tls/errors", tc.opts...), "info")...)
				wantOneLineFailure(t, r, append(tc.want, "ballot: info: cannot reach ZooKeeper")...)
			})
		}

		// A run that cannot connect at start exits 125 under
		// --on-election-failure exit, saying why in its one error line.
		t.Run("run once, plain client at a TLS port", func(t *testing.T) {
			t.Parallel()
			p := startBallot(t, "run", ballotEnv(t, "BALLOT_TEST_CHILD=echo"),
				append(global(secure, "/tls/errors"), "run", "once", "--candidate-id", "c", "--on-election-failure", "exit", "--", selfExe())...)
			if code := p.Wait(10 * time.Second); code != exitFailure {
				t.Errorf("exit code %d, want %d", code, exitFailure)
			}
			var errs []string
			for _, l := range basicLines(p.out.String()) {
				if strings.Contains(l, " ERROR ") {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0], "serves TLS on this port") {
				t.Errorf("want one error line saying the port serves TLS, got %q", errs)
			}
		})
	})
}

// TestSecureClientAuthNeed: a server that requires client certificates
// takes ballot's, which is then ballot's identity for the default creator
// ACL; without one, ballot says the server wants one.
func TestSecureClientAuthNeed(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	c := startTLSZK(t, pki, "need")
	servers := byName(c.SecureServers()[0])
	cert, key := pki.issue(t, certSpec{cn: "ballot-fleet", client: true})
	opts := []string{"--zookeeper-tls-ca", pki.CAFile, "--zookeeper-tls-cert", cert, "--zookeeper-tls-key", key}
	base := "/need/e"

	t.Run("with a client certificate", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "ticks")
		candidate := func(id string) *ballotProc {
			return startBallot(t, id, ballotEnv(t, "BALLOT_TEST_CHILD=tick"),
				append(global(servers, base, opts...), "run", "once", "--candidate-id", id, "--", selfExe(), file)...)
		}
		a := candidate("a")
		a.WaitEvent(logEvElected, 20*time.Second)
		waitTenures(t, file, 1, 10*time.Second) // its command runs
		// The same certificate: the same identity.
		b := candidate("b")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		if !a.Logged("zookeeper_acl=creator") {
			t.Errorf("a client certificate does not make the ACL creator by default")
		}
		r, inf := runInfoJSON(t, global(servers, base, opts...))
		if want := []infoACL{{Scheme: "x509", ID: "CN=ballot-fleet", Perms: "cdrwa"}}; r.code != 0 || !reflect.DeepEqual(inf.ACL, want) {
			t.Errorf("info: exit %d, ACL %+v, want %+v\n%s", r.code, inf.ACL, want, r.stderr)
		}
		a.Signal(syscall.SIGTERM)
		a.Wait(20 * time.Second)
		b.WaitEvent(logEvElected, 10*time.Second)
		waitTenures(t, file, 2, 10*time.Second)
		checkNoOverlap(t, file)
		b.Signal(syscall.SIGTERM)
		b.Wait(20 * time.Second)
	})

	t.Run("keeper's release with the client certificate", func(t *testing.T) {
		keeperReleases(t, "", global(servers, "/need/kill", opts...))
	})

	t.Run("without a client certificate", func(t *testing.T) {
		r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second,
			append(global(servers, base, "--zookeeper-tls-ca", pki.CAFile), "info")...)
		wantOneLineFailure(t, r, c.SecureServers()[0]+" refused the TLS", "requires a client certificate", "--zookeeper-tls-cert")
	})
}

// TestSecureChroot: a chroot in the connection string is prepended to the
// base path, and logs and info show the full path.
func TestSecureChroot(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	conn := basicZKConn(t, c)
	servers := c.ConnString() + "/apps/team"
	full := "/apps/team/ballot/e"
	p := startBallot(t, "a", ballotEnv(t, "BALLOT_TEST_CHILD=tick"), append(global(servers, "/ballot/e"),
		"run", "once", "--candidate-id", "a", "--", selfExe(), filepath.Join(t.TempDir(), "ticks"))...)
	p.WaitEvent(logEvElected, 20*time.Second)
	if !p.Logged("election="+full) || !strings.HasPrefix(proposalOf(t, p), full+"/_c_") {
		t.Errorf("the log does not show the full path %s", full)
	}
	if ch := basicChildren(t, conn, full); len(sortedProposals(ch)) != 1 {
		t.Errorf("children of %s: %q", full, ch)
	}
	if basicExists(t, conn, "/ballot") {
		t.Errorf("/ballot was created outside the chroot")
	}
	r, inf := runInfoJSON(t, global(servers, "/ballot/e"))
	if r.code != 0 || inf.Election != full || inf.Leader == nil || inf.Leader.ID != "a" ||
		!strings.HasPrefix(inf.Leader.ProposalNode, full+"/") {
		t.Errorf("info: exit %d, %+v", r.code, inf)
	}
	p.Signal(syscall.SIGTERM)
	p.Wait(20 * time.Second)
}

// keeperReleases: a clean handover, then a SIGKILL of the leading ballot,
// whose keeper, reaching ZooKeeper as ballot did (args: the global
// options), gives the baton back, so the successor takes over without
// waiting for a dropped baton. bin is the ballot under test ("" for the
// suite's own build).
func keeperReleases(t *testing.T, bin string, args []string) {
	t.Helper()
	if bin == "" {
		bin = ballotBin
	}
	file := filepath.Join(t.TempDir(), "ticks")
	candidate := func(id string) *ballotProc {
		all := append(append([]string(nil), args...), "run", "once", "--candidate-id", id, "--", selfExe(), file)
		return startProc(t, id, exec.Command(bin, all...), ballotEnv(t, "BALLOT_TEST_CHILD=tick"))
	}
	a := candidate("a")
	a.WaitEvent(logEvElected, 20*time.Second)
	waitTenures(t, file, 1, 10*time.Second)
	b := candidate("b")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	a.Signal(syscall.SIGTERM)
	a.Wait(20 * time.Second)
	b.WaitEvent(logEvElected, 10*time.Second)
	waitTenures(t, file, 2, 10*time.Second)
	c := candidate("c")
	c.WaitEvent(logEvFollowing, 10*time.Second)
	b.Signal(syscall.SIGKILL)
	b.Wait(5 * time.Second)
	c.WaitEvent(logEvElected, 20*time.Second)
	waitTenures(t, file, 3, 10*time.Second)
	checkNoOverlap(t, file)
	if c.Logged("dropped it without releasing") {
		t.Errorf("c waited for a dropped baton: the keeper did not give it back")
	}
	c.Signal(syscall.SIGTERM)
	c.Wait(20 * time.Second)
}
