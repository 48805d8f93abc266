package main

// A snapshot of an election: its children as read in one pass, filed by
// what they are. info reads one without watches; watch keeps reading them
// as its watches fire (watch.go).

import (
	"errors"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

// snapNode is one child of the base path as read.
type snapNode struct {
	name     string
	seq      int64 // proposals only
	stat     zk.Stat
	raw      []byte
	data     *proposalData // proposals whose data parses
	parseErr string        // proposals whose data does not
}

// electionSnapshot is the election as read in one pass.
type electionSnapshot struct {
	exists    bool
	acl       []zk.ACL    // of the base path
	aclErr    error       // why the ACL could not be read
	proposals []*snapNode // election order, lowest first
	cron      *snapNode
	ackNode   *snapNode // the "leader" node: the leader's acknowledgement (ballot leader)
	baton     *snapNode // baton.go
	handover  *snapNode
	pause     *snapNode // ballot pause (controls.go)
	stepDown  *snapNode
	once      *snapNode     // run once --once-key (once.go)
	onceKeys  []*onceRecord // its records, read by info only
	onceBusy  map[string]bool
	history   *snapNode      // the run history (history.go)
	runs      []*historyItem // its newest entries down to the last run, read by info only
	// --slots: slot k > 0's baton, handover record, leader node and cron
	// record (slot 0's are the fields above).
	slotBatons, slotHandovers, slotAcks, slotCrons map[int]*snapNode
	others                                         []*snapNode
	vanished                                       []string // listed, but gone before their data was read

	drained []*snapNode // ballot drain (drain.go)
	trigger *snapNode   // ballot trigger: a run asked for (trigger.go)
}

// lowestProposal is the proposal that leads (holds the baton), or is next
// to lead once the baton is free (the "leader" node is something else:
// ackNode); nil when there is none.
func (s *electionSnapshot) lowestProposal() *snapNode {
	if s == nil || len(s.proposals) == 0 {
		return nil
	}
	return s.proposals[0]
}

func newSnapNode(name string, raw []byte, stat *zk.Stat) *snapNode {
	n := &snapNode{name: name, raw: raw}
	if stat != nil {
		n.stat = *stat
	}
	if seq, ok := proposalSeq(name); ok {
		n.seq = seq
		n.data, n.parseErr = parseProposalData(raw)
	}
	return n
}

// parseProposalData reads a proposal node's data; a node of another tool,
// or a bad write, gives an error text instead.
func parseProposalData(raw []byte) (*proposalData, string) {
	if len(raw) == 0 {
		return nil, "no data"
	}
	var d proposalData
	if err := jsonlite.Unmarshal(raw, &d); err != nil {
		return nil, err.Error()
	}
	if d.CandidateID == "" {
		return nil, "no candidateId in the data"
	}
	return &d, ""
}

// sortSnapshot puts proposals in election order and the rest by name.
func sortSnapshot(s *electionSnapshot) {
	sort.SliceStable(s.proposals, func(i, j int) bool {
		a, b := s.proposals[i], s.proposals[j]
		if pa, pb := proposalPriority(a.name), proposalPriority(b.name); pa != pb {
			return pa > pb
		}
		return a.seq < b.seq
	})
	// The leader goes first: the proposal of the baton's session (with
	// --slots, every holder, in slot order). It is the first in line but
	// while a higher --priority waits for it to hand over (preempt.go).
	slot := map[int64]int{} // session → its slot
	for k, b := range s.batons() {
		if b != nil && b.stat.EphemeralOwner != 0 {
			slot[b.stat.EphemeralOwner] = k + 1
		}
	}
	sort.SliceStable(s.proposals, func(i, j int) bool {
		a, b := slot[s.proposals[i].stat.EphemeralOwner], slot[s.proposals[j].stat.EphemeralOwner]
		return a != 0 && (b == 0 || a < b)
	})
	sort.Slice(s.others, func(i, j int) bool { return s.others[i].name < s.others[j].name })
}

// batons is every slot's baton, slot 0's first; nil where none is held.
func (s *electionSnapshot) batons() []*snapNode {
	out := []*snapNode{s.baton}
	for k := range s.slotBatons {
		for len(out) <= k {
			out = append(out, nil)
		}
		out[k] = s.slotBatons[k]
	}
	return out
}

// holderSlot is the slot whose baton n's session holds; ok is false if none.
func (s *electionSnapshot) holderSlot(n *snapNode) (int, bool) {
	for k, b := range s.batons() {
		if b != nil && n != nil && n.stat.EphemeralOwner != 0 && b.stat.EphemeralOwner == n.stat.EphemeralOwner {
			return k, true
		}
	}
	return 0, false
}

// file files a node read under the base path into the snapshot.
func (s *electionSnapshot) file(n *snapNode) {
	switch {
	case isProposal(n.name):
		s.proposals = append(s.proposals, n)
	case n.name == cronName:
		s.cron = n
	case n.name == leaderName:
		s.ackNode = n
	case n.name == batonName:
		s.baton = n
	case n.name == handoverName:
		s.handover = n
	case n.name == onceDirName:
		s.once = n
	case n.name == historyName:
		s.history = n
	case n.name == pauseName:
		s.pause = n
	case slotFile(n, batonName, &s.slotBatons), slotFile(n, handoverName, &s.slotHandovers),
		slotFile(n, leaderName, &s.slotAcks), slotFile(n, cronName, &s.slotCrons):
	case n.name == stepDownName:
		s.stepDown = n
	case n.name == triggerName:
		s.trigger = n
	case strings.HasPrefix(n.name, drainPrefix):
		s.drained = append(s.drained, n)
	case n.name == releasedDirName:
		// Notes of ended leaderships, for the next take (release.go).
	case strings.HasPrefix(n.name, infoClockPrefix):
		// Another reader's clock node (this is the parent of an election
		// path): gone in a moment.
	default:
		s.others = append(s.others, n)
	}
}

func isProposal(name string) bool {
	_, ok := proposalSeq(name)
	return ok
}

// snapshotSource is how a snapshot's nodes are read: info reads each once,
// watch arms watches and reuses the nodes whose watch has not fired.
type snapshotSource struct {
	// children lists the base path; exists is false if it does not exist.
	children func() (names []string, exists bool, err error)
	// node reads one child; lowest says it is one of the first two
	// proposals in line, the leader's and its successor's places (watch
	// watches their data). zk.ErrNoNode: it went after the listing.
	node func(name string, lowest bool) (*snapNode, error)
}

// readSnapshot reads the election in one pass.
func readSnapshot(src snapshotSource) (*electionSnapshot, error) {
	s := &electionSnapshot{}
	children, exists, err := src.children()
	if err != nil {
		return nil, err
	}
	if !exists {
		return s, nil
	}
	s.exists = true
	first := map[string]bool{}
	for i, n := range sortedProposals(children) {
		first[n] = i < 2 // a preferred candidate may be first, the leader second
	}
	for _, c := range children {
		n, err := src.node(c, first[c])
		if errors.Is(err, zk.ErrNoNode) {
			s.vanished = append(s.vanished, c) // a children watch fires
			continue
		}
		if err != nil {
			return nil, err
		}
		s.file(n)
	}
	sortSnapshot(s)
	return s, nil
}

// readSource reads base's children once each, without watches.
func readSource(conn *zk.Conn, base string) snapshotSource {
	return snapshotSource{
		children: func() ([]string, bool, error) {
			children, _, err := conn.Children(base)
			if errors.Is(err, zk.ErrNoNode) {
				return nil, false, nil
			}
			return children, err == nil, zookeeper.Error(err, "read", base)
		},
		node: func(name string, _ bool) (*snapNode, error) {
			raw, stat, err := conn.Get(base + "/" + name)
			if err != nil {
				return nil, zookeeper.Error(err, "read", base+"/"+name)
			}
			return newSnapNode(name, raw, stat), nil
		},
	}
}

// readElection reads base and all its children without watches, and the
// base path's ACL and the once keys' records.
func readElection(conn *zk.Conn, base string) (*electionSnapshot, error) {
	s, err := readSnapshot(readSource(conn, base))
	if err != nil || !s.exists {
		return s, err
	}
	s.readACL(conn, base)
	if s.once != nil {
		readOnceKeys(conn, base, s)
	}
	if s.history != nil {
		s.runs, _ = readHistory(conn, base, historyKeep, func(it *historyItem) bool { return it.Kind != historySkip })
	}
	return s, nil
}

// readOnceKeys reads the records of run once --once-key, newest first.
func readOnceKeys(conn *zk.Conn, base string, s *electionSnapshot) {
	names, _, err := conn.Children(onceDir(base))
	if err != nil {
		return
	}
	s.onceBusy = map[string]bool{}
	for _, n := range names {
		raw, _, err := conn.Get(onceDir(base) + "/" + n)
		var rec onceRecord
		if err != nil || jsonlite.Unmarshal(raw, &rec) != nil {
			continue
		}
		if ok, _, _ := conn.Exists(onceDir(base) + "/" + n + "/running"); ok {
			s.onceBusy[rec.Key] = true
		}
		s.onceKeys = append(s.onceKeys, &rec)
	}
	sort.Slice(s.onceKeys, func(i, j int) bool { return s.onceKeys[i].StartedAt.After(s.onceKeys[j].StartedAt) })
}

// readACL reads the ACL of the base path, which ballot never changes once
// the path exists.
func (s *electionSnapshot) readACL(conn *zk.Conn, base string) {
	s.acl, _, s.aclErr = conn.GetACL(base)
	if s.aclErr != nil {
		s.aclErr = zookeeper.Error(s.aclErr, "read the ACL of", base)
	}
}

// drainedOf is the drained candidates of a snapshot, by id.
func drainedOf(s *electionSnapshot) []drainRecord {
	var out []drainRecord
	for _, n := range s.drained {
		d := parseDrain(n.raw)
		if d == nil {
			d = &drainRecord{}
		}
		if d.CandidateID == "" {
			d.CandidateID = strings.TrimPrefix(n.name, drainPrefix)
		}
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CandidateID < out[j].CandidateID })
	return out
}
