package main

// The lease's renewal is fenced by who owns the baton it sets: a renewal
// that lands on a baton another session created (ours deleted by an
// operator while we were stopped, and a successor of higher priority took
// after its wait) proves nothing for us.

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestRenewalOnAnotherSessionsBatonLosesTheLease: the set of the baton's
// data succeeds on whatever node is there; its answer names the owner, and
// a renewal that finds another owner ends the leadership without moving
// the lease's end.
func TestRenewalOnAnotherSessionsBatonLosesTheLease(t *testing.T) {
	zkc := startZK(t, 1)
	base := "/ballot/test/renewal-fence"
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	c := p.join(p.session(), "a")
	if _, err := c.s.Conn.Create(c.batonPath(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.baton.took(0, 0)
	ended, endWith := context.WithCancelCause(context.Background())
	T := c.s.Timeout()
	l := &lease{c: c, leaseTerms: newLeaseTerms(T, 0), gone: make(chan struct{}), ended: ended, endWith: endWith,
		quit: make(chan struct{})}
	l.end = l.endFrom(bootNow())

	// Our own baton: the renewal counts.
	sent := bootNow()
	l.renew(sent)
	if isClosed(l.gone) || l.end != l.endFrom(sent) {
		t.Fatalf("a renewal on our own baton: lost %v, end %v, want %v", isClosed(l.gone), l.end, l.endFrom(sent))
	}
	held := l.end

	// An operator deletes our baton; another session creates one.
	other := p.session()
	if err := c.s.Conn.Delete(c.batonPath(), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Conn.Create(c.batonPath(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	l.renew(bootNow())
	if !isClosed(l.gone) {
		t.Error("a renewal that set another session's baton kept the leadership")
	}
	if l.end != held {
		t.Errorf("a renewal on another session's baton moved the lease's end from %v to %v", held, l.end)
	}
}
