package main

// tcpProxy: a TCP proxy for fault injection between one client (e.g. one
// ballot candidate) and ZooKeeper.
//
//	p := newTCPProxy(t, zkc.Servers())   // give the candidate p.Addr() as its ZooKeeper
//	p.Blackhole(true)                    // network partition: silence both ways
//	p.Blackhole(false)                   // heal
//	p.CloseAll()                         // reset every current connection
//	p.SetDelay(d)                        // a slow link: every byte arrives d late, each way
//	p.ResetClientSides()                 // clients get a reset, upstreams hear silence
//	p.SetClientTap(f)                    // see, drop or cut after each request (one read)
//
// Semantics while blackholed:
//   - bytes read from either side are discarded; nothing is closed, so both
//     peers see silence, not a reset;
//   - new connections are accepted but not dialled upstream (they go nowhere);
//   - if one side closes or fails, the other side is not told until the heal
//     (and is then closed, with a reset).
//
// On heal, data flows again on connections that lost nothing (they were
// idle, or were accepted during the blackhole and sent nothing yet: those
// are dialled upstream at the heal). A connection that lost bytes in either
// direction has a hole in its stream, which TCP never delivers: it is reset
// at the heal, and never forwards another byte. The client reconnects at
// once (with a real partition the retransmitted data would get through at
// about the same time). Resuming after a hole would be worse than a reset:
// a ZooKeeper client would wait forever for a dropped reply, and a follower
// that missed a proposal would log the next one and diverge.
//
// SetDelay(d) makes a congested or far-away link: every byte read from
// either side is written to the other d after it was read (the delay in
// force when it was read), and never before the bytes read ahead of it, so
// the stream keeps its order; SetDelay(0) returns to forwarding at once,
// after what is already queued. The end of a stream is passed on after the
// bytes before it; connection set-up is not delayed. A blackhole drops what
// is read while it lasts; bytes already on their way are still delivered
// (they had passed the cut).
//
// ResetClientSides is an asymmetric failure: every current connection's
// client gets a TCP reset, while its upstream hears nothing more (it is not
// closed; what it sends is discarded), as behind a firewall that rejects
// one side with tcp-reset and drops the other. The upstream learns of the
// loss only by its own timeout, or from a reset at the next heal or Close.
//
// SetHeadRewriter lets a protocol-aware caller replace the first message of
// each connection (the ZooKeeper harness rewrites the election handshake).
// SetDialRetry makes the proxy retry a refused upstream dial for a while
// before resetting the client: the client's connect succeeded at once, so
// the retry it would make after a refusal is the proxy's job (a ZooKeeper
// follower retries a refused connect to a new leader, not a reset).

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type tcpProxy struct {
	ln      net.Listener
	targets []string
	next    atomic.Uint64 // round-robin start index

	mu     sync.Mutex
	bh     bool
	head   func(io.Reader) ([]byte, error) // see SetHeadRewriter
	retry  time.Duration                   // see SetDialRetry
	delay  time.Duration                   // see SetDelay
	tap    func([]byte) tapAction          // see SetClientTap
	healed chan struct{}                   // closed while not blackholed; replaced by Blackhole(true)
	closed chan struct{}
	conns  map[*proxyConn]struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

type proxyConn struct {
	p         *tcpProxy
	client    net.Conn
	done      chan struct{} // closed when the connection is closed (reset or graceful)
	closeOnce sync.Once

	mu         sync.Mutex
	upstream   net.Conn // nil until dialled
	dropped    bool     // bytes were discarded: reset at the heal, never forward again
	clientGone bool     // ResetClientSides: the client was reset, the upstream hears silence

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

// newTCPProxy listens on 127.0.0.1:0 and forwards each accepted connection to
// the first of targets that accepts a dial, starting at a round-robin index.
// If no target accepts, the client connection is reset. Closed by t.Cleanup.
func newTCPProxy(t testing.TB, targets []string) *tcpProxy {
	t.Helper()
	p, err := startTCPProxy(targets)
	if err != nil {
		t.Fatalf("tcp proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// startTCPProxy is newTCPProxy without testing.TB; call Close when done.
func startTCPProxy(targets []string) (*tcpProxy, error) {
	if len(targets) == 0 {
		return nil, errors.New("no targets")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	healed := make(chan struct{})
	close(healed)
	p := &tcpProxy{
		ln:      ln,
		targets: append([]string(nil), targets...),
		healed:  healed,
		closed:  make(chan struct{}),
		conns:   map[*proxyConn]struct{}{},
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the proxy's listening address ("127.0.0.1:port").
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

// Blackhole turns the partition on or off (see the file comment).
func (p *tcpProxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on == p.bh {
		return
	}
	p.bh = on
	if on {
		p.healed = make(chan struct{})
	} else {
		close(p.healed)
	}
}

// SetHeadRewriter installs f, which reads the beginning of every new
// connection's client → upstream stream and returns the bytes to forward in
// its place (with the read error, if any). Set it before clients connect.
func (p *tcpProxy) SetHeadRewriter(f func(r io.Reader) ([]byte, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.head = f
}

// SetDialRetry makes a refused upstream dial be retried for up to d (0, the
// default: reset the client at once).
func (p *tcpProxy) SetDialRetry(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retry = d
}

// SetDelay delays every byte forwarded from now on by d, in each direction
// (see the file comment); 0 forwards at once again.
func (p *tcpProxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

func (p *tcpProxy) getDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// ResetClientSides resets the client side of every current connection and
// leaves its upstream side open and unanswered (see the file comment).
func (p *tcpProxy) ResetClientSides() {
	for _, c := range p.current() {
		c.resetClientSide()
	}
}

// Blackholed reports whether the partition is on.
func (p *tcpProxy) Blackholed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bh
}

// state returns whether the proxy is blackholed and a channel closed at heal.
func (p *tcpProxy) state() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bh, p.healed
}

// CloseAll resets (RST) every current connection on both sides.
func (p *tcpProxy) CloseAll() {
	for _, c := range p.current() {
		c.reset()
	}
}

// current lists the connections open now.
func (p *tcpProxy) current() []*proxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	return cs
}

// Conns returns the number of current client connections.
func (p *tcpProxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, resets every connection and waits for the proxy's
// goroutines.
func (p *tcpProxy) Close() {
	p.once.Do(func() {
		close(p.closed)
		p.ln.Close()
		p.CloseAll()
		p.wg.Wait()
	})
}

func (p *tcpProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			select {
			case <-p.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := &proxyConn{p: p, client: conn, done: make(chan struct{})}
		p.mu.Lock()
		select {
		case <-p.closed:
			p.mu.Unlock()
			proxyRST(conn)
			return
		default:
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go c.run()
	}
}

// dial connects to the first target that accepts, round-robin start,
// retrying per SetDialRetry until done or the proxy is closed.
func (p *tcpProxy) dial(done <-chan struct{}) (net.Conn, error) {
	p.mu.Lock()
	deadline := time.Now().Add(p.retry)
	p.mu.Unlock()
	for {
		c, err := p.dialOnce()
		if err == nil || !time.Now().Before(deadline) {
			return c, err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-done:
			return nil, err
		case <-p.closed:
			return nil, err
		}
	}
}

func (p *tcpProxy) dialOnce() (net.Conn, error) {
	start := int(p.next.Add(1) - 1)
	var err error
	for k := 0; k < len(p.targets); k++ {
		addr := p.targets[(start+k)%len(p.targets)]
		var c net.Conn
		c, err = net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c, nil
		}
	}
	return nil, err
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
	if a := c.tapped(b); a.Then != nil || a.ResetClient || a.Drop {
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
			case c.isClientGone():
				// ResetClientSides: discard
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
