package main

// The build without TLS (tag ballot_notls, tls_off.go), for appliances with
// little flash: it links neither crypto/tls nor crypto/x509, says so in
// its version, refuses TLS with one line, and otherwise elects and hands
// over as every build does, digest credentials and ACLs included.

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBuildWithoutTLS(t *testing.T) {
	t.Parallel()
	deps, err := exec.Command("go", "list", "-deps", "-tags", "ballot_notls", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(deps)) {
		if pkg == "crypto/tls" || pkg == "crypto/x509" {
			t.Errorf("the build without TLS links %s", pkg)
		}
	}
	bin := filepath.Join(t.TempDir(), "ballot-notls")
	build := exec.Command("go", "build", "-tags", "ballot_notls", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags ballot_notls: %v\n%s", err, out)
	}

	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "without TLS") {
		t.Errorf("ballot version: %q %v, want it to say without TLS", out, err)
	}
	refused := exec.Command(bin, "--zookeeper-tls-ca", "/etc/hosts", "info")
	out, err := refused.CombinedOutput()
	if code := refused.ProcessState.ExitCode(); code != exitUsage || strings.Count(string(out), "\n") != 1 ||
		!strings.Contains(string(out), "--zookeeper-tls-ca: this ballot was built without TLS") {
		t.Errorf("--zookeeper-tls-ca without TLS: exit %d (%v), output %q; want exit %d and one line naming the option", code, err, out, exitUsage)
	}

	// An https ping URL: one line, the URL's secret path not shown.
	refused = exec.Command(bin, "run", "once", "--candidate-id", "a", "--once-key", "k", "--ping-url", "https://hc-ping.com/secret-uuid", "--", "true")
	out, err = refused.CombinedOutput()
	if code := refused.ProcessState.ExitCode(); code != exitUsage || strings.Count(string(out), "\n") != 1 ||
		!strings.Contains(string(out), `--ping-url "https://hc-ping.com/…": this ballot was built without TLS`) || strings.Contains(string(out), "secret") {
		t.Errorf("an https --ping-url without TLS: exit %d (%v), output %q; want exit %d and one line, the URL redacted", code, err, out, exitUsage)
	}

	// An election with digest credentials under a creator ACL: a handover,
	// then a SIGKILL of the leader's ballot, after which its keeper gives
	// the baton back (the keeper's client, too, has no TLS).
	c := startZK(t, 1)

	// An http ping URL, parsed without net/url (stdlite.go's parseURLLite):
	// sent to its host and port, its path escaped as net/url would.
	recv := &pingReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	p := startProc(t, "ping", exec.Command(bin, runArgs(c.Servers(), "/notls/ping", "a", "--once-key", "k",
		"--ping-url", srv.URL+"/a b/x%2Fy?create=1", "--", "true")...), ballotEnv(t))
	if code := p.Wait(20 * time.Second); code != 0 {
		t.Fatalf("run once with --ping-url: exit %d, want 0", code)
	}
	if got := recv.requests(); len(got) != 2 || got[0] != "POST /a%20b/x/y/start?create=1 " || got[1] != "POST /a%20b/x/y/0?create=1 " {
		t.Errorf("the receiver got %q", got)
	}
	keeperReleases(t, bin, global(c.ConnString(), "/notls/e", "--zookeeper-auth-file", writeAuthFile(t, "fleet:secret")))
}
