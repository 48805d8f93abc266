package main

// A --once-key claim whose answer was lost with its session.
//
// The claim is one multi-op; when the connection drops before its answer,
// claimOnce reads the record back within the session (ours when it names
// our session and proposal). When the session is lost too, the claim may
// or may not have landed, and the session that could run under it is
// gone: ballot stands again, and before it waits in line it deletes the
// record if it names the lost proposal, is unfinished and has no running
// node, at the version it read. Only this ballot could have run the
// command under that proposal, and it did not; a candidate that retried
// the key meanwhile (--once-retry-unfinished) changed the version or holds
// the running node, and the delete fails. So the key is claimed again,
// through the fenced claim, and never run twice.

import (
	"errors"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// clearLostClaim deletes the record of r.lostClaim's claim, if it landed
// and nothing ran under it. It waits out connection blips: a key left
// uncleared would make this candidate exit 0, "already run". If the
// session is lost (or ballot stopped) meanwhile, r.lostClaim stays for the
// next candidacy.
func (r *runner) clearLostClaim(c *candidate) {
	proposal, key := r.lostClaim, r.set.OnceKey
	for attempt := 0; proposal != "" && attempt < 10; attempt++ {
		rec, version, running, err := readOnce(c.s.Conn, c.basePath, key)
		if err == nil {
			if !claimLandedUnrun(rec, proposal, running) {
				break // it did not land, or someone has retried it since
			}
			// The claim's run entry goes too: that run never happened.
			ops := []any{&zk.DeleteRequest{Path: oncePath(c.basePath, key), Version: version}}
			if e := leaderHistory(c).findOpenEntry(rec.FencingToken, func(e historyEntry) bool { return e.Kind == historyOnce && e.Key == key }); e != nil {
				ops = append(ops, &zk.DeleteRequest{Path: e.path, Version: e.version})
			}
			_, err = c.s.Conn.Multi(ops...)
			switch {
			case err == nil:
				r.log.Warn("cleared the once key's record left by a claim whose answer was lost with its session; the command never ran: claiming the key again",
					"once_key", key, "proposal", proposal)
				r.lostClaim = ""
				return
			case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNotEmpty), errors.Is(err, zk.ErrNoNode):
				err = nil // changed meanwhile: read it again
			case !zookeeper.Retryable(err) && !errors.Is(err, zk.ErrSessionExpired):
				r.log.Warn("cannot clear the once key's record left by a claim whose answer was lost", "once_key", key, "error", err)
				return
			}
		}
		if attempt == 9 || (err != nil && c.retryAfter(err, r.stopping) != nil) {
			return // not cleared: kept for the next candidacy
		}
	}
	r.lostClaim = ""
}

// claimLandedUnrun: the record read is the lost proposal's claim, and
// nothing ran under it (unfinished, no running node): this ballot may
// clear it. A record of another proposal, finished or running, is left.
func claimLandedUnrun(rec *onceRecord, proposal string, running bool) bool {
	return rec != nil && rec.Proposal == proposal && rec.FinishedAt == nil && !running
}
