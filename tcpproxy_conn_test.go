package main

// One connection through tcpProxy (tcpproxy_test.go): dialled upstream now
// or at the heal, its bytes forwarded both ways through SetDelay's delay
// lines, dropped while blackholed (a hole: reset at the heal), and closed
// with a reset or gracefully.

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

type proxyConn struct {
	p         *tcpProxy
	client    net.Conn
	done      chan struct{} // closed when the connection is closed (reset or graceful)
	closeOnce sync.Once

	mu         sync.Mutex
	upstream   net.Conn // nil until dialled
	dropped    bool     // bytes were discarded: reset at the heal, never forward again
	clientGone bool     // ResetClientSides: the client was reset, the upstream hears silence
	muted      bool     // a tap's Mute: the client hears nothing more

	toUp, toClient delayLine // SetDelay's queues, one per direction
}

// delayLine is one direction's queue of bytes waiting out SetDelay. Only
// that direction's reader adds to it, and only its drain goroutine takes
// from it, so a write made directly (nothing queued, no delay) is never
// ahead of queued bytes.
type delayLine struct {
	mu   sync.Mutex
	q    []delayedChunk
	idle chan struct{} // nil while nothing is queued; closed when drained
}

type delayedChunk struct {
	due time.Time
	b   []byte
}

func (c *proxyConn) run() {
	defer c.p.wg.Done()
	defer func() {
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	}()
	if bh, healed := c.p.state(); bh {
		c.p.wg.Add(1)
		go c.connectAtHeal(healed)
	} else if !c.connectUpstream() {
		return
	}
	c.clientToUpstream()
}

// connectAtHeal handles a connection accepted during a blackhole: at the
// heal it is dialled upstream, or reset if bytes sent on it were dropped.
func (c *proxyConn) connectAtHeal(healed <-chan struct{}) {
	defer c.p.wg.Done()
	select {
	case <-healed:
	case <-c.done:
		return
	case <-c.p.closed:
		return
	}
	c.mu.Lock()
	dropped := c.dropped || c.clientGone
	c.mu.Unlock()
	if dropped {
		c.reset()
		return
	}
	c.connectUpstream()
}

// connectUpstream dials the upstream if not done yet and starts the
// upstream → client copier. If no target accepts, the client is reset and
// false is returned.
func (c *proxyConn) connectUpstream() bool {
	c.mu.Lock()
	if c.upstream != nil {
		c.mu.Unlock()
		return true
	}
	up, err := c.p.dial(c.done)
	if err == nil {
		select {
		case <-c.done: // reset while dialling
			c.mu.Unlock()
			up.Close()
			return false
		default:
		}
		c.upstream = up
	}
	c.mu.Unlock()
	if err != nil {
		c.reset()
		return false
	}
	c.p.wg.Add(1)
	go func() {
		defer c.p.wg.Done()
		c.upstreamToClient(up)
	}()
	return true
}

// clientToUpstream copies client → upstream until the client side ends,
// discarding while blackholed.
func (c *proxyConn) clientToUpstream() {
	c.p.mu.Lock()
	head := c.p.head
	c.p.mu.Unlock()
	if head != nil {
		b, err := head(c.client)
		if len(b) > 0 && !c.fromClient(b) {
			return
		}
		if err != nil {
			c.peerGone(err)
			return
		}
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := c.client.Read(buf)
		if c.isClientGone() {
			// ResetClientSides: the upstream hears nothing more. Stay
			// listed until the connection ends, so Close and heals reach it.
			<-c.done
			return
		}
		if n > 0 && !c.fromClient(buf[:n]) {
			return
		}
		if err != nil {
			c.flushed(&c.toUp)
			c.peerGone(err)
			return
		}
	}
}

// fromClient forwards bytes read from the client (or drops them); false
// means the connection is finished.
func (c *proxyConn) fromClient(b []byte) bool {
	switch bh, holed := c.hole(); {
	case bh:
		return true // partition: discard
	case holed:
		c.reset() // a stream with a hole: nothing sensible to forward
		return false
	}
	if a := c.tapped(b); a.Then != nil || a.ResetClient || a.Drop || a.Mute {
		if a.Mute {
			c.mu.Lock()
			c.muted = true
			c.mu.Unlock()
		}
		defer c.afterTap(a)
		if a.Drop {
			return true
		}
	}
	c.mu.Lock()
	up := c.upstream
	c.mu.Unlock()
	if up == nil {
		if !c.connectUpstream() {
			return false
		}
		c.mu.Lock()
		up = c.upstream
		c.mu.Unlock()
	}
	if werr := c.forward(&c.toUp, up, b); werr != nil {
		c.peerGone(werr)
		return false
	}
	return true
}

// forward writes b to w, at once or through the direction's delay line
// (SetDelay). The error is that of a direct write; a queued write that
// fails ends the connection from the drain goroutine.
func (c *proxyConn) forward(l *delayLine, w net.Conn, b []byte) error {
	d := c.p.getDelay()
	l.mu.Lock()
	if d <= 0 && l.idle == nil {
		l.mu.Unlock()
		_, err := w.Write(b)
		return err
	}
	l.q = append(l.q, delayedChunk{due: time.Now().Add(d), b: append([]byte(nil), b...)})
	if l.idle == nil {
		l.idle = make(chan struct{})
		c.p.wg.Add(1)
		go c.drain(l, w)
	}
	l.mu.Unlock()
	return nil
}

// drain writes l's queued bytes to w, each at its due time, until the
// queue is empty or the connection ends.
func (c *proxyConn) drain(l *delayLine, w net.Conn) {
	defer c.p.wg.Done()
	for {
		l.mu.Lock()
		if len(l.q) == 0 {
			close(l.idle)
			l.idle = nil
			l.mu.Unlock()
			return
		}
		ch := l.q[0]
		l.mu.Unlock()
		if wait := time.Until(ch.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.done:
				t.Stop()
				c.dropQueue(l)
				return
			}
		}
		_, err := w.Write(ch.b)
		l.mu.Lock()
		l.q = l.q[1:]
		l.mu.Unlock()
		if err != nil && !(w == c.client && c.isClientGone()) {
			c.dropQueue(l)
			c.peerGone(err)
			return
		}
	}
}

// dropQueue empties l for good (the connection has ended).
func (c *proxyConn) dropQueue(l *delayLine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.q = nil
	if l.idle != nil {
		close(l.idle)
		l.idle = nil
	}
}

// flushed waits until l has written what it holds (or the connection ended):
// the end of a stream follows its last bytes.
func (c *proxyConn) flushed(l *delayLine) {
	l.mu.Lock()
	idle := l.idle
	l.mu.Unlock()
	if idle == nil {
		return
	}
	select {
	case <-idle:
	case <-c.done:
	}
}

func (c *proxyConn) isClientGone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clientGone
}

// hole is called with bytes just read from either side. While blackholed
// (bh) they must be dropped: the connection is marked and reset at the
// heal. After the heal, holed says the stream already lost bytes.
func (c *proxyConn) hole() (bh, holed bool) {
	bh, healed := c.p.state()
	c.mu.Lock()
	defer c.mu.Unlock()
	if bh && !c.dropped {
		c.dropped = true
		c.p.wg.Add(1) // the caller is counted too, so Close is not past Wait
		go c.resetAtHeal(healed)
	}
	return bh, c.dropped
}

// resetAtHeal resets a connection that lost bytes once the blackhole lifts
// (an idle peer would otherwise never learn that its stream has a hole).
func (c *proxyConn) resetAtHeal(healed <-chan struct{}) {
	defer c.p.wg.Done()
	select {
	case <-healed:
		c.reset()
	case <-c.done:
	case <-c.p.closed: // Close resets every connection itself
	}
}

// upstreamToClient copies upstream → client, discarding while blackholed.
func (c *proxyConn) upstreamToClient(up net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			switch bh, holed := c.hole(); {
			case bh:
				// partition: discard
			case holed:
				c.reset()
				return
			case c.isClientGone() || c.isMuted():
				// ResetClientSides, or a tap's Mute: discard
			default:
				if werr := c.forward(&c.toClient, c.client, buf[:n]); werr != nil && !c.isClientGone() {
					c.peerGone(werr)
					return
				}
			}
		}
		if err != nil {
			c.flushed(&c.toClient)
			c.peerGone(err)
			return
		}
	}
}

// peerGone handles the end of one direction. While blackholed the other
// side is told nothing until the heal (or until the proxy or connection is
// closed), and is then reset. Otherwise the whole connection is closed:
// gracefully after a clean EOF, with a reset after an error.
func (c *proxyConn) peerGone(err error) {
	if bh, healed := c.p.state(); bh {
		select {
		case <-healed:
		case <-c.p.closed:
		case <-c.done:
		}
		c.reset()
		return
	}
	if errors.Is(err, io.EOF) {
		c.closeGraceful()
		return
	}
	c.reset()
}

func (c *proxyConn) reset()         { c.close(proxyRST) }
func (c *proxyConn) closeGraceful() { c.close(func(conn net.Conn) { conn.Close() }) }

func (c *proxyConn) close(how func(net.Conn)) {
	c.closeOnce.Do(func() {
		close(c.done) // before taking mu: see connectUpstream
		c.mu.Lock()
		up := c.upstream
		c.mu.Unlock()
		how(c.client)
		if up != nil {
			how(up)
		}
	})
}

// proxyRST closes conn with SO_LINGER 0, so the peer gets a RST.
func proxyRST(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}
