package keeper

// Round trips of the keeper's protocol (keeperpipe.go): what one end
// writes, the other reads back whole; a line cut short or garbled is no
// order at all.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"ballot/internal/zookeeper"
)

func TestKeeperOrdersRoundTrip(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A client certificate (chain 01 02, 03) and its key, set as the
	// keeper's end sets them: the chain and key it spells are those set.
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	withCert := func() zookeeper.WireAccess {
		a := zookeeper.WireAccess{TLS: true, ServerName: "zk.example.com", CA: []byte("-----BEGIN CERTIFICATE-----\n"), Digest: []byte("u:p")}
		// A build without TLS refuses a certificate: its access carries none.
		if !a.SetCertFields("0102,03", hex.EncodeToString(keyDER)) && tlsBuild {
			t.Fatal("the certificate was refused")
		}
		return a
	}
	if chain, k := withCert().CertFields(); tlsBuild && (chain != "0102,03" || k != hex.EncodeToString(keyDER)) {
		t.Errorf("the certificate set spells %s %s", chain, k)
	}
	session := &zookeeper.Handoff{SessionID: 0x7fedcba987654321, Passwd: []byte{0, 1, 0xfe, 0xff}, TimeoutMs: 4007,
		Servers: []string{"10.0.0.1:2181", "[fe80::1]:2182", "zk3.example.com:2181"}}
	shared := session.SessionOnly()
	shared.Shared = true
	release := &zookeeper.Handoff{Proposal: "/ballot/x/_c_ab-proposal-0000000012", ReleasePath: "/ballot/x/handover",
		ReleaseVersion: 2147483647, ReleaseData: []byte(`{"state":"released"}`), Baton: "/ballot/x/baton"}
	for _, tc := range []struct {
		line string
		want keeperOrder
	}{
		{SignalOrder(syscall.SIGTERM), keeperOrder{kind: orderSignal, signal: syscall.SIGTERM}},
		{SignalOrder(syscall.SIGKILL), keeperOrder{kind: orderSignal, signal: syscall.SIGKILL}},
		{DeadlineOrder(KillTimes{}), keeperOrder{kind: orderDeadline}},
		{DeadlineOrder(KillTimes{Kill: 1<<62 + 1, Backstop: 1<<62 + 7}), keeperOrder{kind: orderDeadline, deadline: KillTimes{Kill: 1<<62 + 1, Backstop: 1<<62 + 7}}},
		{SessionOrder(session), keeperOrder{kind: orderSession, handoff: session}},
		{SessionOrder(shared), keeperOrder{kind: orderSession, handoff: shared}},
		{ReleaseOrder(release), keeperOrder{kind: orderRelease, handoff: release}},
		{HoldOrder(release), keeperOrder{kind: orderHold, handoff: release}},
		{UnholdOrder(release.Baton), keeperOrder{kind: orderUnhold, handoff: &zookeeper.Handoff{Baton: release.Baton}}},
		{orderForget, keeperOrder{kind: orderForget}},
		{AccessOrder(zookeeper.WireAccess{}), keeperOrder{kind: orderAccess}},
		{AccessOrder(zookeeper.WireAccess{Digest: []byte("alice:correct horse")}), keeperOrder{kind: orderAccess, access: zookeeper.WireAccess{Digest: []byte("alice:correct horse")}}},
		{AccessOrder(withCert()), keeperOrder{kind: orderAccess, access: withCert()}},
		{DemoteOrder(&DemoteHook{Argv: []string{"/bin/sh", "-c", "echo a  b\n"}, Env: []string{"BALLOT_X=1 2", "EMPTY="},
			Timeout: 1500 * time.Millisecond, Wrap: true, LogFormat: "json"}),
			keeperOrder{kind: orderDemote, demote: &DemoteHook{Argv: []string{"/bin/sh", "-c", "echo a  b\n"}, Env: []string{"BALLOT_X=1 2", "EMPTY="},
				Timeout: 1500 * time.Millisecond, Wrap: true, LogFormat: "json"}}},
		{DemoteOrder(&DemoteHook{Argv: []string{"true"}, Env: []string{"A=1"}}), keeperOrder{kind: orderDemote, demote: &DemoteHook{Argv: []string{"true"}, Env: []string{"A=1"}, LogFormat: "human"}}},
		{DemoteOrder(&DemoteHook{Argv: []string{"true"}}), keeperOrder{kind: orderDemote, demote: &DemoteHook{Argv: []string{"true"}, LogFormat: "human"}}},
		{ByeOrder, keeperOrder{kind: orderBye}},
	} {
		if strings.Contains(tc.line, "\n") {
			t.Errorf("%q spans lines", tc.line)
		}
		got, ok := parseOrder(tc.line)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q\nread %+v, %v\nwant %+v", tc.line, got, ok, tc.want)
		}
	}
}

// TestKeeperIgnoresBrokenOrders: a garbled line is ignored, never read
// as another order: a deadline that does not parse does not clear the
// deadline.
func TestKeeperIgnoresBrokenOrders(t *testing.T) {
	for _, line := range []string{
		"", " ", "signal", "signal 0", "signal -9", "signal x", "signal 9 9",
		"deadline", "deadline 1", "deadline x 1", "deadline 1 y", "deadline 1 2 3",
		"session 12 zz 2000 a:1 .", "session 12 00 x a:1 .", "session 12 00 2000 .", "session 12 00 2000 a:1", "session -12 00 2000 a:1 .", "session 12 00 2000 a:1 shard .", "session 12 00 2000 a:1 shared x .",
		"release /p /r v 00 /b .", "hold /p /r 1 00 /b", "hold /p /r 1 00 .", "unhold", "unhold /b /c", "release /p /r 1 zz /b .", "release /p /r 1 00 .", "release /p /r 1 00 /b",
		"access tls - - - - .", "access ssl - - - - - .", "access plain zz - - - - .", "access plain - - - - -",
		"demote human plain 10 zz 00 .", "demote human maybe 10 74727565 00 .", "demote human plain 10  00 .", "demote human plain 10 74727565 00",
		"bye now", "BYE", "exit 0", "pid 12",
	} {
		if o, ok := parseOrder(line); ok {
			t.Errorf("%q read as %+v", line, o)
		}
	}
}

func TestKeeperReportsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Report
	}{
		{pidReport(4242), Report{Kind: ReportPid, Pid: 4242}},
		{exitReport(0), Report{Kind: ReportExit}},
		{exitReport(137), Report{Kind: ReportExit, Code: 137}},
		{exitReport(-1), Report{Kind: ReportExit, Code: -1}}, // never seen to end
		{ErrorReport(127, "exec: \"nope\": executable file\nnot found in $PATH"),
			Report{Kind: ReportError, Code: 127, Reason: "exec: \"nope\": executable file not found in $PATH"}},
		{ErrorReport(1, ""), Report{Kind: ReportError, Code: 1}},
	} {
		if strings.Contains(tc.line, "\n") {
			t.Errorf("%q spans lines", tc.line)
		}
		got, ok := ParseReport(tc.line + "\n")
		if !ok || got != tc.want {
			t.Errorf("%q\nread %+v, %v\nwant %+v", tc.line, got, ok, tc.want)
		}
	}
	for _, line := range []string{"", "pid", "pid 0", "pid x", "pid 1 2", "exit", "exit x", "exit 1 2", "error", "error x why", "bye"} {
		if r, ok := ParseReport(line); ok {
			t.Errorf("%q read as %+v", line, r)
		}
	}
}

func TestKeeperArgsRoundTrip(t *testing.T) {
	for _, want := range []keeperStart{
		{parent: 1234, grace: 10 * time.Second, first: KillTimes{Kill: 987654321, Backstop: 987654999}, argv: []string{"/bin/sleep", "60"}},
		{parent: 1, argv: []string{"cmd", "--", "-x", ""}},
		{parent: 1, argv: []string{}}, // idle (keeperidle.go)
	} {
		args := Args(want.parent, want.grace, want.first, want.argv)
		got, ok := parseKeeperArgs(args)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q\nread %+v, %v\nwant %+v", args, got, ok, want)
		}
	}
	for _, args := range [][]string{nil, {"1", "0", "0", "0"}, {"1", "0", "0", "0", "-", "cmd"}, {"x", "0", "0", "0", "--", "cmd"}} {
		if s, ok := parseKeeperArgs(args); ok {
			t.Errorf("%q read as %+v", args, s)
		}
	}
}

// TestKeeperRunOrderRoundTrip: what an idle keeper is told to run reads
// back whole, and not when cut short.
func TestKeeperRunOrderRoundTrip(t *testing.T) {
	for _, want := range []*RunOrder{
		{Grace: 10 * time.Second, Kill: 987654321, Backstop: 987654999, Argv: []string{"/bin/sleep", "60"}, Env: []string{"BALLOT_FENCING_TOKEN=7", "X="}},
		{Argv: []string{"cmd", "", "a b"}},
	} {
		line := want.Line()
		o, ok := parseOrder(line)
		if !ok || o.kind != orderRun || o.run == nil {
			t.Fatalf("%q not read as a run order", line)
		}
		got := *o.run
		got.started, want.started = nil, nil
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("%q\nread %+v\nwant %+v", line, got, *want)
		}
		if _, ok := parseOrder(line[:len(line)-2]); ok {
			t.Errorf("%q, cut short, read as whole", line[:len(line)-2])
		}
	}
}

// TestKeeperLearnsSessionsOfHighServerIDs: ZooKeeper puts the server's id
// (myid, up to 255) in a session id's top byte, so a member with myid 128
// or more hands out negative int64 session ids; the keeper must still
// learn the session, or a dead ballot's session is left to expire.
func TestKeeperLearnsSessionsOfHighServerIDs(t *testing.T) {
	for _, myid := range []int64{0, 1, 127, 128, 200, 255} {
		h := &zookeeper.Handoff{SessionID: myid<<56 | 0x0123456789ab, Passwd: []byte("0123456789abcdef"), TimeoutMs: 2000, Servers: []string{"127.0.0.1:2181"}}
		o, ok := parseOrder(SessionOrder(h))
		if !ok || o.handoff == nil || o.handoff.SessionID != h.SessionID {
			t.Errorf("myid %d: session %s sent as %q, read as %+v, %v", myid, zookeeper.SessionHex(h.SessionID), SessionOrder(h), o.handoff, ok)
		}
	}
}

// TestKeeperIgnoresCutOrders: an order cut short (child.tell ends it
// before the next) is ignored, wherever the cut falls: never read as
// whole with a shorter value (credentials, the hook's environment).
func TestKeeperIgnoresCutOrders(t *testing.T) {
	whole := []string{
		DeadlineOrder(KillTimes{Kill: 123456789012, Backstop: 123456789999}),
		SessionOrder(&zookeeper.Handoff{SessionID: 0x1234, Passwd: []byte("0123456789abcdef"), TimeoutMs: 2000, Servers: []string{"127.0.0.1:2181"}}),
		ReleaseOrder(&zookeeper.Handoff{Proposal: "/b/p", ReleasePath: "/b/handover", ReleaseVersion: 3, ReleaseData: []byte("{}"), Baton: "/b/baton"}),
		AccessOrder(zookeeper.WireAccess{TLS: true, ServerName: "zk", Digest: []byte("u:p")}),
		DemoteOrder(&DemoteHook{Argv: []string{"/bin/true"}, Env: []string{"A=1"}, Timeout: time.Second}),
		DemoteOrder(&DemoteHook{Argv: []string{"/bin/true"}, Timeout: time.Second}),
	}
	for _, line := range whole {
		if _, ok := parseOrder(line); !ok {
			t.Fatalf("%q: not read", line)
		}
		if strings.HasPrefix(line, orderDeadline) {
			continue // short: written whole or not at all
		}
		for n := 0; n < len(line); n++ {
			if o, ok := parseOrder(line[:n]); ok {
				t.Errorf("%q cut to %q read as %+v", line, line[:n], o)
			}
		}
	}
}
