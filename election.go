package main

// The ZooKeeper leader-election recipe, as ballot uses it:
//
//   - a session is one zk.Conn; once it is known to be lost (expired, or the
//     client silently replaced it) it is closed and never used again;
//   - a candidate makes one ephemeral-sequential proposal in a session; the
//     line is in sequence order (a higher --priority goes ahead: its
//     proposal's name says it); every other candidate watches only its
//     predecessor, so a handover wakes one candidate, not all of them;
//   - the first proposal leads once it holds the baton (baton.go), under a
//     lease its quorum writes renew (lease.go); its command must be gone
//     before the lease ends.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// propose creates this candidate's proposal node. The create is protected by
// a random id in the node name: when the answer is lost with the connection,
// the node may exist anyway, and is found again instead of made twice.
func propose(log *slog.Logger, s *zookeeper.Session, basePath, candidateID, mode string, priority, slots int, stop <-chan struct{}) (*candidate, error) {
	host, _ := os.Hostname()
	status := proposalData{
		CandidateID:      candidateID,
		Host:             host,
		PID:              os.Getpid(),
		ProposalTime:     time.Now().UTC(),
		SessionTimeout:   s.Timeout().String(),
		SessionTimeoutMs: s.Timeout().Milliseconds(),
		Version:          version,
		Mode:             mode,
		BootID:           hostBootID(),
		State:            stateFollowing,
	}
	data := status.encode()
	var guid [16]byte
	_, _ = rand.Read(guid[:])
	tag := proposalTag(guid, slots, priority)
	node, err := createProposal(s, basePath, tag, data, stop)
	if err != nil {
		return nil, err
	}
	c := &candidate{log: log, s: s, w: s.Writer(), done: newCloser(),
		proposalFacts: proposalFacts{basePath: basePath, id: candidateID, node: node, priority: priority, slots: max(slots, 1)}}
	c.line.changed = make(chan struct{}, 1)
	// A leader hands over for --priority only to one ready: the standby
	// says so once its place is proven.
	c.standby = newStandby(log, s, c.w, node, c.done.C, func() { c.pub.update(func(d *proposalData) { d.Standby = true }) })
	c.seq, _ = proposalSeq(node[strings.LastIndexByte(node, '/')+1:])
	if c.token, err = proposalToken(s, node, stop); err != nil {
		return nil, err
	}
	if priority != 0 {
		log.Info("proposal made", logEvJoined.attr(), "proposal", node, "fencing_token", c.token, "priority", priority)
	} else {
		log.Info("proposal made", logEvJoined.attr(), "proposal", node, "fencing_token", c.token) // the default says nothing
	}
	c.pub = newPublisher(c, status)
	return c, nil
}

// proposalTag is what a proposal's name says before its sequence number:
// the random id that finds it again (findTagged), --slots and --priority.
func proposalTag(guid [16]byte, slots, priority int) string {
	return "_c_" + hex.EncodeToString(guid[:]) + "-" + slotsTag(slots) + priorityTag(priority)
}

// createProposal creates the proposal node named by tag, and the election
// path if it is missing; it returns the node's full path.
func createProposal(s *zookeeper.Session, basePath, tag string, data []byte, stop <-chan struct{}) (string, error) {
	for {
		if s.IsLost() {
			return "", errSessionLost
		}
		p, err := s.Conn.Create(basePath+"/"+tag+proposalPrefix, data, zk.FlagEphemeral|zk.FlagSequence, s.ACL)
		switch {
		case err == nil:
			return p, nil
		case errors.Is(err, zk.ErrNoNode):
			if err := createElectionPath(s, basePath); err != nil {
				return "", err
			}
		case zookeeper.Retryable(err):
			// The create may have happened: never create again before a
			// listing has shown our tag absent, or this session would hold
			// two proposals, the lower one led by nobody.
			found, err := findTagged(s, basePath, tag, stop)
			if err != nil || found != "" {
				return found, err
			}
		case errors.Is(err, zk.ErrSessionExpired):
			return "", errSessionLost
		case errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL):
			return "", zookeeper.Error(err, "create a proposal under", basePath)
		default:
			return "", fmt.Errorf("cannot create a proposal under %s: %w", basePath, err)
		}
	}
}

// createElectionPath creates the election path and its missing parents;
// nil too when another candidate made it first, or the connection dropped
// (the proposal's create is then tried again).
func createElectionPath(s *zookeeper.Session, basePath string) error {
	if dir := path.Dir(basePath); dir != "/" {
		if err := zookeeper.CreateParents(s.Conn, dir, s.ACL); err != nil && !zookeeper.Retryable(err) {
			return fmt.Errorf("cannot create the election path %s: %w", basePath, err)
		}
	}
	_, err := s.Conn.Create(basePath, nil, 0, s.ACL)
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL):
		return zookeeper.Error(err, "create", basePath)
	case !errors.Is(err, zk.ErrNodeExists) && !zookeeper.Retryable(err):
		return fmt.Errorf("cannot create the election path %s: %w", basePath, err)
	}
	return nil
}

// proposalToken reads the proposal's czxid, its fencing token, waiting out
// a dropped connection.
func proposalToken(s *zookeeper.Session, node string, stop <-chan struct{}) (int64, error) {
	for {
		ok, stat, err := s.Conn.Exists(node)
		if err == nil && !ok {
			return 0, errProposalGone
		}
		if err == nil {
			return stat.Czxid, nil
		}
		if !zookeeper.Retryable(err) {
			return 0, err
		}
		if err := s.WaitOnline(stop); err != nil {
			return 0, err
		}
	}
}

// findTagged lists the election until the listing succeeds and returns our
// tagged proposal, "" if the create did not happen. Should there be two,
// the lower is kept and the other deleted.
func findTagged(s *zookeeper.Session, basePath, tag string, stop <-chan struct{}) (string, error) {
	for {
		if err := s.WaitOnline(stop); err != nil {
			return "", err
		}
		children, _, err := s.Conn.Children(basePath)
		if err != nil {
			if zookeeper.Retryable(err) {
				continue
			}
			if errors.Is(err, zk.ErrSessionExpired) {
				return "", errSessionLost
			}
			return "", err
		}
		var mine []string
		for _, c := range sortedProposals(children) {
			if strings.HasPrefix(c, tag) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return "", nil
		}
		for _, extra := range mine[1:] {
			_ = s.Conn.Delete(basePath+"/"+extra, -1)
		}
		return basePath + "/" + mine[0], nil
	}
}
