package main

// Digest credentials and the ACL modes: what ballot creates carries the
// chosen ACL, and what a client without the credentials can then do.

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// digestConn is a plain client of c logged in with cred (user:password).
func digestConn(t *testing.T, c *zkCluster, cred string) *zk.Conn {
	t.Helper()
	conn := basicZKConn(t, c)
	if err := conn.AddAuth("digest", []byte(cred)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// writeAuthFile writes user:password to a new file readable only by its owner.
func writeAuthFile(t *testing.T, cred string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zookeeper-auth")
	if err := os.WriteFile(path, []byte(cred+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// proposalOf is the proposal node the candidate logged it made.
func proposalOf(t *testing.T, p *ballotProc) string {
	t.Helper()
	if joined := p.Events(logEvJoined); len(joined) > 0 {
		return joined[0]["proposal"]
	}
	t.Fatalf("ballot %s logged no proposal", p.name)
	return ""
}

// TestSecureDigestACLs: digest credentials with each ACL mode. Every node
// ballot creates carries the ACL; an unauthenticated client can change
// nothing of the election under creator and creator-world-read, and read
// nothing under creator; a second candidate with the same credentials
// takes part; wrong credentials are "not authorized".
func TestSecureDigestACLs(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	servers := c.ConnString()
	const aliceCred = "alice:correct horse"
	alice := writeAuthFile(t, aliceCred)
	aliceAgain := writeAuthFile(t, aliceCred) // another host's copy
	wrong := writeAuthFile(t, "alice:wrong")
	admin := digestConn(t, c, aliceCred)
	anon := basicZKConn(t, c)
	aliceID := zk.DigestACL(zk.PermAll, "alice", "correct horse")

	for _, mode := range []string{aclOpen, aclCreator, aclCreatorWorldRead} {
		t.Run(mode, func(t *testing.T) {
			parent := "/acl-" + mode
			base := parent + "/e"
			wantACL := map[string][]zk.ACL{
				aclOpen:             zk.WorldACL(zk.PermAll),
				aclCreator:          aliceID,
				aclCreatorWorldRead: append(append([]zk.ACL(nil), aliceID...), zk.WorldACL(zk.PermRead)...),
			}[mode]
			file := filepath.Join(t.TempDir(), "ticks")
			candidate := func(id, authFile string) *ballotProc {
				return startBallot(t, id, ballotEnv(t, "BALLOT_TEST_CHILD=tick"), append(global(servers, base,
					"--zookeeper-auth-file", authFile, "--zookeeper-acl", mode), "run", "once", "--candidate-id", id,
					"--leader-data", id, "--", selfExe(), file)...)
			}
			a1 := candidate("a1", alice)
			a1.WaitEvent(logEvElected, 20*time.Second)
			waitTenures(t, file, 1, 10*time.Second) // its command runs
			a2 := candidate("a2", aliceAgain)
			a2.WaitEvent(logEvFollowing, 10*time.Second)
			a1.Signal(syscall.SIGTERM)
			a1.Wait(20 * time.Second)
			a2.WaitEvent(logEvAcknowledged, 10*time.Second)
			waitTenures(t, file, 2, 10*time.Second)
			checkNoOverlap(t, file)
			if !a2.Logged("clear text") {
				t.Errorf("no warning that the credentials travel in clear text")
			}

			// Every node ballot created carries the ACL.
			proposal := proposalOf(t, a2)
			nodes := []string{parent, base, proposal, batonPath(base), handoverPath(base), leaderPath(base)}
			for _, n := range nodes {
				acl, _, err := admin.GetACL(n)
				if err != nil || !reflect.DeepEqual(acl, wantACL) {
					t.Errorf("ACL of %s: %v %v, want %v", n, acl, err, wantACL)
				}
			}

			// What an unauthenticated client can do to the election.
			writes := map[string]func() error{
				"create a node in the election": func() error {
					_, err := anon.Create(base+"/intruder", nil, 0, zk.WorldACL(zk.PermAll))
					return err
				},
				"delete the leader's proposal": func() error { return anon.Delete(proposal, -1) },
				"change the leader's proposal": func() error { _, err := anon.Set(proposal, []byte("x"), -1); return err },
				"change the election's ACL": func() error {
					_, err := anon.SetACL(base, zk.WorldACL(zk.PermAll), -1)
					return err
				},
				"delete the baton":           func() error { return anon.Delete(batonPath(base), -1) },
				"change the handover record": func() error { _, err := anon.Set(handoverPath(base), nil, -1); return err },
				"delete the leader node":     func() error { return anon.Delete(leaderPath(base), -1) },
			}
			reads := map[string]func() error{
				"list the election":      func() error { _, _, err := anon.Children(base); return err },
				"read a proposal":        func() error { _, _, err := anon.Get(proposal); return err },
				"read the handover":      func() error { _, _, err := anon.Get(handoverPath(base)); return err },
				"read the leader's data": func() error { _, _, err := anon.Get(leaderPath(base)); return err },
			}
			if mode == aclOpen {
				// Today's behaviour: anyone may do anything (shown with a
				// harmless create).
				if err := writes["create a node in the election"](); err != nil {
					t.Errorf("open: an unauthenticated client cannot create a node: %v", err)
				}
				_ = admin.Delete(base+"/intruder", -1)
			} else {
				for what, f := range writes {
					if err := f(); !errors.Is(err, zk.ErrNoAuth) {
						t.Errorf("%s: an unauthenticated client can %s (error %v)", mode, what, err)
					}
				}
			}
			for what, f := range reads {
				err := f()
				if mode == aclCreator && !errors.Is(err, zk.ErrNoAuth) {
					t.Errorf("creator: an unauthenticated client can %s (error %v)", what, err)
				}
				if mode != aclCreator && err != nil {
					t.Errorf("%s: an unauthenticated client cannot %s: %v", mode, what, err)
				}
			}

			// ballot without credentials: info and leader read under
			// open and creator-world-read; info, watch and leader are
			// refused under creator.
			r, inf := runInfoJSON(t, global(servers, base))
			if mode == aclCreator {
				wantOneLineFailure(t, r, "not authorized to read "+base)
			} else if r.code != 0 || inf.Leader == nil || inf.Leader.ID != "a2" || len(inf.ACL) != len(wantACL) {
				t.Errorf("info without credentials: exit %d %+v\n%s", r.code, inf, r.stderr)
			}
			if mode == aclCreator {
				r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base), "watch")...)
				wantOneLineFailure(t, r, "ballot: watch: not authorized to read "+base)
			}
			r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base), "leader")...)
			if mode == aclCreator {
				wantOneLineFailure(t, r, "not authorized to read "+leaderPath(base))
			} else if r.code != 0 || r.stdout != "a2\n" {
				t.Errorf("leader without credentials: exit %d %q %q", r.code, r.stdout, r.stderr)
			}
			// With the credentials, info shows the election's ACL.
			_, inf = runInfoJSON(t, global(servers, base, "--zookeeper-auth-file", alice))
			if inf == nil || len(inf.ACL) == 0 || inf.ACL[0].Scheme != wantACL[0].Scheme || inf.ACL[0].ID != wantACL[0].ID {
				t.Errorf("info with credentials: ACL %+v, want %v", inf, wantACL)
			}

			// Wrong credentials: not authorized, naming the election.
			if mode != aclOpen {
				p := startBallot(t, "wrong", ballotEnv(t, "BALLOT_TEST_CHILD=echo"), append(global(servers, base,
					"--zookeeper-auth-file", wrong, "--zookeeper-acl", mode), "run", "once", "--candidate-id", "w",
					"--on-election-failure", "exit", "--", selfExe())...)
				if code := p.Wait(10 * time.Second); code != exitFailure {
					t.Errorf("wrong credentials: exit code %d, want %d", code, exitFailure)
				}
				if !p.Logged("not authorized to create a proposal under " + base) {
					t.Errorf("wrong credentials: the error does not say not authorized with the path")
				}
			}
			a2.Signal(syscall.SIGTERM)
			a2.Wait(20 * time.Second)
		})
	}

	// The cron record carries the ACL too.
	t.Run("cron record", func(t *testing.T) {
		base := "/acl-cron/e"
		p := startBallot(t, "cron", ballotEnv(t, "BALLOT_TEST_CHILD=echo"), append(global(servers, base,
			"--zookeeper-auth-file", alice), "run", "cron", "--candidate-id", "c", "--schedule", "@every 1s",
			"--on-child-success", "rerun", "--", selfExe())...)
		p.WaitLog("to stdout", 20*time.Second) // the command's own output: it ran
		acl, _, err := admin.GetACL(base + "/cron")
		if err != nil || !reflect.DeepEqual(acl, aliceID) {
			t.Errorf("ACL of the cron record: %v %v, want %v", acl, err, aliceID)
		}
		p.Signal(syscall.SIGTERM)
		p.Wait(20 * time.Second)
	})

	// A ballot killed with SIGKILL: its keeper resumes the session with
	// the same credentials and gives the baton back, which the creator
	// ACL grants only to alice; the successor does not wait for a drop.
	t.Run("keeper's release under a creator ACL", func(t *testing.T) {
		keeperReleases(t, "", global(servers, "/acl-kill/e", "--zookeeper-auth-file", alice, "--zookeeper-acl", aclCreator))
	})

	// The operators' controls and once keys carry the ACL too.
	t.Run("pause and once keys", func(t *testing.T) {
		base := "/acl-controls/e"
		r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base, "--zookeeper-auth-file", alice), "pause")...)
		if r.code != 0 {
			t.Fatalf("pause: exit %d: %s", r.code, r.stderr)
		}
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base), "resume")...)
		wantOneLineFailure(t, r, "ballot: resume: not authorized to delete "+base+"/pause")
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base, "--zookeeper-auth-file", alice), "resume")...)
		if r.code != 0 {
			t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
		}
		r = basicRun(t, ballotEnv(t, "BALLOT_TEST_CHILD=echo"), t.TempDir(), 30*time.Second, append(global(servers, base, "--zookeeper-auth-file", alice),
			"run", "once", "--candidate-id", "k", "--once-key", "2026-11-23", "--", selfExe())...)
		if r.code != 0 {
			t.Fatalf("run once --once-key: exit %d: %s", r.code, r.stderr)
		}
		for _, n := range []string{onceDir(base), oncePath(base, "2026-11-23")} {
			if acl, _, err := admin.GetACL(n); err != nil || !reflect.DeepEqual(acl, aliceID) {
				t.Errorf("ACL of %s: %v %v, want %v", n, acl, err, aliceID)
			}
		}
		// drain and trigger: the pause node's ACL, and its rights.
		for _, args := range [][]string{{"drain", "--candidate-id", "x"}, {"trigger"}} {
			r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base, "--zookeeper-auth-file", alice), args...)...)
			if r.code != 0 {
				t.Fatalf("%s: exit %d: %s", args[0], r.code, r.stderr)
			}
		}
		for _, n := range []string{drainPath(base, "x"), base + "/" + triggerName} {
			if acl, _, err := admin.GetACL(n); err != nil || !reflect.DeepEqual(acl, aliceID) {
				t.Errorf("ACL of %s: %v %v, want %v (as the pause node's)", n, acl, err, aliceID)
			}
		}
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base), "undrain", "--candidate-id", "x")...)
		wantOneLineFailure(t, r, "ballot: undrain: not authorized to delete "+drainPath(base, "x"))
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base), "drain", "--candidate-id", "y")...)
		wantOneLineFailure(t, r, "ballot: drain: not authorized", drainPath(base, "y"))
		r = basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global(servers, base, "--zookeeper-auth-file", alice), "undrain", "--candidate-id", "x")...)
		if r.code != 0 {
			t.Fatalf("undrain: exit %d: %s", r.code, r.stderr)
		}
	})

	// A base path that exists keeps its ACL; what ballot creates in it
	// gets ballot's.
	t.Run("existing base path", func(t *testing.T) {
		base := "/acl-existing/e"
		if err := zookeeper.CreateParents(admin, base, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		p := startBallot(t, "a", ballotEnv(t, "BALLOT_TEST_CHILD=tick"), append(global(servers, base,
			"--zookeeper-auth-file", alice), "run", "once", "--candidate-id", "a", "--", selfExe(), filepath.Join(t.TempDir(), "ticks"))...)
		p.WaitEvent(logEvElected, 20*time.Second)
		if acl, _, err := admin.GetACL(base); err != nil || !reflect.DeepEqual(acl, zk.WorldACL(zk.PermAll)) {
			t.Errorf("the base path's ACL changed: %v %v", acl, err)
		}
		if acl, _, err := admin.GetACL(proposalOf(t, p)); err != nil || !reflect.DeepEqual(acl, aliceID) {
			t.Errorf("ACL of the proposal: %v %v, want %v", acl, err, aliceID)
		}
		_, inf := runInfoJSON(t, global(servers, base, "--zookeeper-auth-file", alice))
		if want := []infoACL{{Scheme: "world", ID: "anyone", Perms: "cdrwa"}}; inf == nil || !reflect.DeepEqual(inf.ACL, want) {
			t.Errorf("info shows the ACL %+v, want %+v", inf, want)
		}
		p.Signal(syscall.SIGTERM)
		p.Wait(20 * time.Second)
	})

	// info with credentials on a missing path creates nothing: readers
	// never write (it used to create its clock node's parents, with the ACL).
	t.Run("info on a missing path creates nothing", func(t *testing.T) {
		r, _ := runInfoJSON(t, global(servers, "/acl-info/x/e", "--zookeeper-auth-file", alice))
		if r.code != 1 {
			t.Fatalf("info: exit %d, want 1 (no leader)\n%s", r.code, r.stderr)
		}
		for _, n := range []string{"/acl-info", "/acl-info/x"} {
			if ok, _, err := admin.Exists(n); err != nil || ok {
				t.Errorf("%s exists after info (%v): readers must not write", n, err)
			}
		}
	})
}
