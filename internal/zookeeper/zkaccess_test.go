package zookeeper

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestZKAccessNodeACL: the ACL of every node ballot creates, per mode.
func TestZKAccessNodeACL(t *testing.T) {
	for mode, want := range map[string][]zk.ACL{
		ACLOpen:             {{Perms: zk.PermAll, Scheme: "world", ID: "anyone"}},
		ACLCreator:          {{Perms: zk.PermAll, Scheme: "auth", ID: ""}},
		ACLCreatorWorldRead: {{Perms: zk.PermAll, Scheme: "auth", ID: ""}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}},
	} {
		if got := nodeACL(mode); !reflect.DeepEqual(got, want) {
			t.Errorf("nodeACL(%s) = %v, want %v", mode, got, want)
		}
	}
	if got := PermString(zk.PermAll); got != "cdrwa" {
		t.Errorf("PermString(PermAll) = %q", got)
	}
	if got := PermString(zk.PermRead | zk.PermAdmin); got != "ra" {
		t.Errorf("PermString(read|admin) = %q", got)
	}
}

// TestZKAccessRefusals: ZooKeeper's terse refusals, reworded with the path.
func TestZKAccessRefusals(t *testing.T) {
	err := Error(zk.ErrNoAuth, "create a proposal under", "/ballot/e")
	if !strings.HasPrefix(err.Error(), "not authorized to create a proposal under /ballot/e:") || !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("NoAuth: %v", err)
	}
	if again := Error(err, "read", "/x"); again != err {
		t.Errorf("reworded twice: %v", again)
	}
	err = Error(zk.ErrInvalidACL, "create", "/ballot")
	if !strings.Contains(err.Error(), "creator ACL") || !errors.Is(err, zk.ErrInvalidACL) {
		t.Errorf("InvalidACL: %v", err)
	}
	if err := Error(zk.ErrNoNode, "read", "/x"); err != zk.ErrNoNode {
		t.Errorf("other errors must pass unchanged: %v", err)
	}
}

// TestLoadAccess: what LoadAccess makes of no files and of an auth file
// (checked here since package main's TestZKAccessFiles sees only what
// crosses): plain TCP without credentials; the digest read whole, a CRLF
// line end dropped, the keeper given the same.
func TestLoadAccess(t *testing.T) {
	const secret = "s3cr3t:with:colons"
	dir := t.TempDir()
	for _, tc := range []struct {
		name, auth string // the auth file's content; "": none
		acl        string
		check      func(t *testing.T, a *Access)
	}{
		{"plain, no credentials", "", ACLOpen, func(t *testing.T, a *Access) {
			if a.tls != nil || a.digest != nil || a.wire.Digest != nil || !reflect.DeepEqual(a.ACL, zk.WorldACL(zk.PermAll)) {
				t.Errorf("got %+v", a)
			}
		}},
		{"auth file", "alice:" + secret + "\n", ACLCreatorWorldRead, func(t *testing.T, a *Access) {
			want := append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
			if string(a.digest) != "alice:"+secret || a.user != "alice" || !reflect.DeepEqual(a.ACL, want) || string(a.wire.Digest) != "alice:"+secret {
				t.Errorf("got %q %q %v", a.digest, a.user, a.ACL)
			}
		}},
		{"auth file with CRLF", "alice:" + secret + "\r\n", ACLOpen, func(t *testing.T, a *Access) {
			if string(a.digest) != "alice:"+secret {
				t.Errorf("digest %q", a.digest)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{ACL: tc.acl, Source: func(name string) string { return "--" + name },
				Usage: func(format string, a ...any) error { t.Fatalf(format, a...); return nil }}
			if tc.auth != "" {
				p.AuthFile = filepath.Join(dir, "auth")
				if err := os.WriteFile(p.AuthFile, []byte(tc.auth), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a, err := LoadAccess(&p)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, a)
		})
	}
}
