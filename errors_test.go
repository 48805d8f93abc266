package main

import (
	"errors"
	"testing"

	"ballot/internal/zookeeper"
)

// TestSessionErrorsAreTheZooKeeperLayers: a session's waits end with the
// ZooKeeper layer's errors, and package main compares with those very
// values: a copy of its own would make every errors.Is miss them (a
// session lost while proposing would count as an election failure).
func TestSessionErrorsAreTheZooKeeperLayers(t *testing.T) {
	if !errors.Is(zookeeper.ErrSessionLost, errSessionLost) {
		t.Error("errSessionLost is not zookeeper.ErrSessionLost")
	}
	if !errors.Is(zookeeper.ErrStopped, errStopped) {
		t.Error("errStopped is not zookeeper.ErrStopped")
	}
}
