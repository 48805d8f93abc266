package zookeeper

import (
	"errors"
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
