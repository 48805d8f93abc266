package main

// The leader node: <base>/leader, an ephemeral node a leader creates once
// its promote hook succeeded and its command started — the acknowledgement
// that it has really taken over — holding --leader-data for observers.
// `ballot leader` prints it.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

func leaderPath(base string) string { return base + "/" + leaderName }

// The leader node is written and removed by one goroutine per candidate,
// in order, and never waited for on the supervision path: a ZooKeeper
// request made while the connection is down waits for the reconnect, and a
// leader must be able to stop its command on time meanwhile.

// nodeOp queues f after the candidate's earlier leader-node operations.
func nodeOp(c *candidate, f func()) { c.lead.queue(f, c.s.Lost(), c.done.C) }

// publishLeader creates the leader node, replacing one left by another
// session, in a multi-op that checks this candidate's proposal still exists:
// only the live leader can write it.
func (r *runner) publishLeader(c *candidate) {
	if c.lead.published {
		return
	}
	c.lead.published = true
	host, _ := os.Hostname()
	data, _ := jsonlite.Marshal(leaderRecord{Data: r.set.LeaderData, CandidateID: c.id, Host: host,
		PID: os.Getpid(), FencingToken: c.token, Proposal: c.node, Since: time.Now().UTC(), Slot: c.slot})
	l := r.lease.Load()
	nodeOp(c, func() {
		c.lead.gone.Store(false) // a leadership again (run crontab keeps its candidates between runs)
		if l != nil {
			l.awaitTake() // after a handover's take: an acknowledged leader holds the baton
		}
		path := c.leaderPath()
		check := &zk.CheckVersionRequest{Path: c.node, Version: -1}
		create := &zk.CreateRequest{Path: path, Data: data, Acl: c.s.ACL, Flags: zk.FlagEphemeral}
		for attempt := 0; attempt < 5 && !c.s.IsLost(); attempt++ {
			_, err := c.s.Conn.Multi(check, create)
			if err == nil {
				r.log.Info("leadership acknowledged: leader node written", logEvAcknowledged.attr(), "path", path)
				return
			}
			if !errors.Is(err, zk.ErrNodeExists) {
				if zookeeper.Retryable(err) && c.s.WaitOnline(r.stopping) == nil {
					continue
				}
				r.log.Warn("cannot write the leader node", "path", path, "error", zookeeper.Error(err, "create", path))
				return
			}
			b, stat, err := c.s.Conn.Get(path)
			if err != nil {
				continue
			}
			if ownsLeaderNode(c, b, stat) {
				return
			}
			_, _ = c.s.Conn.Multi(check, &zk.DeleteRequest{Path: path, Version: stat.Version}, create)
		}
	})
}

// unpublishLeader removes the leader node, first thing when a leader stops
// leading, so observers stop following it. It does not wait.
func (r *runner) unpublishLeader(c *candidate) {
	if !c.lead.published {
		return
	}
	c.lead.published = false
	nodeOp(c, func() {
		b, stat, err := c.s.Conn.Get(c.leaderPath())
		if errors.Is(err, zk.ErrNoNode) || (err == nil && unpublishRead(c, b, stat) == nil) {
			c.lead.gone.Store(true)
		}
	})
}

// unpublishRead deletes the leader node read as data and stat if it is
// ours, only while our proposal is in line. The read may come from a
// member behind the quorum (after a fast path's answer was lost,
// withdrawWithLeaderNode), and every leader node has version 0: the node
// there now may be a successor's. A successor writes one only after its
// take, which needs our baton gone: by our release or our session's end,
// each with our proposal.
func unpublishRead(c *candidate, data []byte, stat *zk.Stat) error {
	if !ownsLeaderNode(c, data, stat) {
		return nil
	}
	_, err := c.s.Conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.DeleteRequest{Path: c.leaderPath(), Version: stat.Version})
	return err
}

// leaderNodeLeft is the leader node's delete for resign's withdrawal when
// unpublishLeader has not been seen to end (its answer late behind a
// reconnect, its read failed, or dropped when the candidacy retires): the
// node then goes with the proposal, fenced by its delete in the same
// write, or it would outlive the leadership on a session kept. A node
// already gone makes that delete fail; retireMulti drops it and sends the
// rest again.
func leaderNodeLeft(c *candidate, published bool) []any {
	if !published || c.lead.gone.Load() {
		return nil
	}
	return []any{&zk.DeleteRequest{Path: c.leaderPath(), Version: 0}}
}

// withdrawWithLeaderNode deletes the leader node and the proposal, and
// gives the baton back, in one multi-op, when nothing has to run between
// them (no demote hook): one write before the successor is woken instead
// of three requests. The node has version 0: this session created it and
// never sets it. It reports false, having changed nothing, when the fast
// path does not apply: also with a baton that may be ours (a take's answer
// lost), which only a known holder can give back, so the caller's
// withdraw ends the session, and the baton with it.
func (r *runner) withdrawWithLeaderNode(c *candidate) bool {
	if !c.lead.published || c.s.IsLost() || c.baton.maybe() {
		return false
	}
	c.lead.flush(c.s.Timeout()/2, c.s.Lost(), c.done.C) // a create still queued goes first
	for to := c.successor(); ; to = (handTo{}) {
		ops := append([]any{&zk.DeleteRequest{Path: c.leaderPath(), Version: 0},
			&zk.DeleteRequest{Path: c.node, Version: -1}}, releaseOps(c, to)...)
		res, err := c.s.Conn.Multi(ops...)
		if err == nil {
			break
		}
		if failedOp(res) < 0 {
			c.lead.unanswered = append(c.lead.unanswered, recordWrites(c, ops)...)
		}
		if to.proposal == "" || failedOp(res) != 2 {
			return false
		}
		// The named successor left the line: release to nobody.
	}
	c.lead.published = false
	c.baton.givenBack()
	c.pub.stop()
	c.retire()
	return true
}

// ownsLeaderNode reports whether the leader node's data is c's
// candidacy's: the session is not enough, as a reelected candidate keeps
// its session for its next proposal.
func ownsLeaderNode(c *candidate, data []byte, stat *zk.Stat) bool {
	var rec leaderRecord
	return stat.EphemeralOwner == c.s.ID() && jsonlite.Unmarshal(data, &rec) == nil && rec.Proposal == c.node
}

// runLeader is `ballot leader`: print the acknowledged leader's data; with
// --slots, every holder's, one per line (JSON: an array), in slot order.
func runLeader(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	wait := zookeeper.ConnectWait(set.SessionTimeout)
	s, err := zookeeper.DialSession(log, acc, set.SessionTimeout, wait, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: cannot read ZooKeeper: "+err.Error())
		return exitFailure
	}
	defer s.Close()
	var deadline <-chan time.Time
	if set.Wait > 0 {
		deadline = time.After(set.Wait)
	}
	for {
		recs, changed, err := readLeaderNodes(s.Conn, set.BasePath, deadline != nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
			return exitFailure
		}
		if len(recs) > 0 {
			printLeaders(set, recs, out, os.Stderr)
			return exitOK
		}
		if deadline == nil {
			if ok, _, err := s.Conn.Exists(set.BasePath); err == nil && !ok {
				// A typo in the path is told apart from an election without a leader.
				fmt.Fprintf(os.Stderr, "ballot: no leader: %s does not exist (no election there yet)\n", set.BasePath)
				return exitNo
			}
			fmt.Fprintf(os.Stderr, "ballot: no leader has acknowledged at %s\n", set.BasePath)
			return exitNo
		}
		select {
		case <-changed:
		case <-deadline:
			fmt.Fprintf(os.Stderr, "ballot: no leader acknowledged at %s within %s\n", set.BasePath, set.Wait)
			return exitNo
		}
	}
}

// leaderOutput is a leader node as `ballot leader --output json` prints
// it: note says when the leader published no data.
type leaderOutput struct {
	leaderRecord
	Note string `json:"note,omitempty"`
}

// printLeaders prints the leaders' data, one line each (an empty line for
// a leader without data, which errw then names: an empty line alone looks
// like a failure), or JSON.
func printLeaders(set *Settings, recs []leaderRecord, out, errw io.Writer) {
	outs := make([]leaderOutput, len(recs))
	for i, r := range recs {
		outs[i].leaderRecord = r
		if r.Data == "" {
			outs[i].Note = fmt.Sprintf("leader %s published no data: it runs without --leader-data", r.CandidateID)
			fmt.Fprintln(errw, "ballot: "+outs[i].Note)
		}
	}
	switch {
	case set.Output == "json" && len(outs) == 1:
		_ = jsonlite.Encode(out, outs[0], "  ", true)
	case set.Output == "json":
		_ = jsonlite.Encode(out, outs, "  ", true)
	default:
		for _, r := range outs {
			fmt.Fprintln(out, r.Data)
		}
	}
}

// readLeaderNodes reads every slot's leader node, slot 0's first; with
// watch, changed fires when they may have changed. Slot 0's node is read
// first and by itself, so that an election without slots needs no right
// on anything else; the others are found by listing the election.
func readLeaderNodes(conn *zk.Conn, base string, watch bool) (recs []leaderRecord, changed <-chan zk.Event, err error) {
	read := func(p string) error {
		b, _, err := conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read ZooKeeper: %w", zookeeper.Error(err, "read", p))
		}
		var rec leaderRecord
		if jsonlite.Unmarshal(b, &rec) != nil {
			return fmt.Errorf("%s holds data ballot cannot read", p)
		}
		recs = append(recs, rec)
		return nil
	}
	if err := read(leaderPath(base)); err != nil {
		return nil, nil, err
	}
	var names []string
	if watch {
		names, _, changed, err = conn.ChildrenW(base)
	} else {
		names, _, err = conn.Children(base)
	}
	if err != nil {
		// No election yet, or no right to list it: slot 0's node says all.
		if watch && len(recs) == 0 {
			ok, _, ev, err := conn.ExistsW(leaderPath(base))
			switch {
			case err != nil:
				return nil, nil, fmt.Errorf("cannot read ZooKeeper: %w", zookeeper.Error(err, "read", leaderPath(base)))
			case ok:
				return readLeaderNodes(conn, base, false) // written meanwhile
			}
			changed = ev
		}
		return recs, changed, nil
	}
	var slots []int
	for _, n := range names {
		if k, ok := slotOf(n, leaderName); ok {
			slots = append(slots, k)
		}
		if n == leaderName && len(recs) == 0 {
			slots = append(slots, 0) // written between the read and the listing
		}
	}
	sort.Ints(slots)
	for _, k := range slots {
		if err := read(base + "/" + slotName(leaderName, k)); err != nil {
			return nil, nil, err
		}
	}
	return recs, changed, nil
}
