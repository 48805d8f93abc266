package main

// The harness's peer proxies (zkOptions.PeerProxies): every member reaches
// every other member through proxies of its own, so that one member can be
// cut off from its peers while its clients still reach it.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

// openLinks starts the peer proxies (PeerProxies on an ensemble): for each
// ordered pair i→j, one proxy to j's quorum port and one to its election
// port, used only by i.
func (c *zkCluster) openLinks() error {
	n := len(c.members)
	if !c.opts.PeerProxies || n < 2 {
		return nil
	}
	c.links = make([][]zkPeerLink, n)
	for i := range c.links {
		c.links[i] = make([]zkPeerLink, n)
		for j, to := range c.members {
			if i == j {
				continue
			}
			q, err := startTCPProxy([]string{fmt.Sprintf("127.0.0.1:%d", to.quorumPort)})
			if err != nil {
				c.closeLinks()
				return fmt.Errorf("peer proxy: %w", err)
			}
			e, err := startTCPProxy([]string{fmt.Sprintf("127.0.0.1:%d", to.electionPort)})
			if err != nil {
				q.Close()
				c.closeLinks()
				return fmt.Errorf("peer proxy: %w", err)
			}
			q.SetDialRetry(zkPeerDialRetry)
			e.SetDialRetry(zkPeerDialRetry)
			c.links[i][j] = zkPeerLink{quorum: q, election: e}
		}
	}
	// Of two members, only the higher sid keeps an election connection: it
	// drops one dialled by the lower sid and dials back to the election
	// address announced in that connection's handshake, which is the lower
	// member's real port. Announcing the reverse proxy keeps it proxied.
	for i := range c.links {
		for j := range c.links[i] {
			if i != j {
				c.links[i][j].election.SetHeadRewriter(zkElectionHandshakeRewriter(c.links[j][i].election.Addr()))
			}
		}
	}
	c.cutMu.Lock()
	c.cut = make([]bool, n)
	c.cutMu.Unlock()
	return nil
}

// closeLinks closes every peer proxy (resetting their connections).
func (c *zkCluster) closeLinks() {
	for _, row := range c.links {
		for _, l := range row {
			if l.quorum != nil {
				l.quorum.Close()
			}
			if l.election != nil {
				l.election.Close()
			}
		}
	}
	c.links = nil
}

func proxyPort(p *tcpProxy) int { return p.ln.Addr().(*net.TCPAddr).Port }

// zkElectionHandshakeRewriter returns a tcpProxy head rewriter replacing the
// election address in QuorumCnxManager's initial message (3.5+: int64
// protocol version < 0, int64 sid, int32 length, "host:port[|host:port]")
// with addr. A version >= 0 is an old-style bare sid, without an address.
func zkElectionHandshakeRewriter(addr string) func(io.Reader) ([]byte, error) {
	return func(r io.Reader) ([]byte, error) {
		head := make([]byte, 20)
		if n, err := io.ReadFull(r, head[:8]); err != nil {
			return head[:n], err
		}
		if int64(binary.BigEndian.Uint64(head)) >= 0 {
			return head[:8], nil
		}
		if n, err := io.ReadFull(r, head[8:]); err != nil {
			return head[:8+n], err
		}
		l := int32(binary.BigEndian.Uint32(head[16:]))
		if l <= 0 || l > 4096 {
			return head, nil // not an address: let ZooKeeper reject it
		}
		old := make([]byte, l)
		if n, err := io.ReadFull(r, old); err != nil {
			return append(head, old[:n]...), err
		}
		binary.BigEndian.PutUint32(head[16:], uint32(len(addr)))
		return append(head, addr...), nil
	}
}

// setCut cuts member i off from its peers or heals it, then blackholes
// exactly the links with a cut-off member at either end.
func (c *zkCluster) setCut(i int, on bool) error {
	if c.links == nil {
		return errors.New("CutOff/Heal need zkOptions.PeerProxies on an ensemble")
	}
	if i < 0 || i >= len(c.members) {
		return fmt.Errorf("no member %d", i)
	}
	c.cutMu.Lock()
	defer c.cutMu.Unlock()
	c.cut[i] = on
	c.applyCuts()
	return nil
}

func (c *zkCluster) healAll() error {
	if c.links == nil {
		return errors.New("HealAll needs zkOptions.PeerProxies on an ensemble")
	}
	c.cutMu.Lock()
	defer c.cutMu.Unlock()
	clear(c.cut)
	c.applyCuts()
	return nil
}

// applyCuts sets every link's blackhole from c.cut; cutMu must be held.
func (c *zkCluster) applyCuts() {
	for i, row := range c.links {
		for j, l := range row {
			if i != j {
				on := c.cut[i] || c.cut[j]
				l.quorum.Blackhole(on)
				l.election.Blackhole(on)
			}
		}
	}
}

func (c *zkCluster) portClash() bool {
	for i := range c.members {
		b, _ := os.ReadFile(c.members[i].logPath)
		if bytes.Contains(b, []byte("Address already in use")) || bytes.Contains(b, []byte("BindException")) {
			return true
		}
	}
	return false
}
