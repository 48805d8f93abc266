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
//	p.SetClientTap(f)                    // see, drop, cut or mute after each request (one read)
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
//
// Here: the proxy, its controls, accepting and dialling. One connection's
// forwarding: tcpproxy_conn_test.go; the client tap: tcpproxy_tap_test.go.

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
	refuse bool                            // see RefuseNew
	healed chan struct{}                   // closed while not blackholed; replaced by Blackhole(true)
	closed chan struct{}
	conns  map[*proxyConn]struct{}
	wg     sync.WaitGroup
	once   sync.Once
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

// RefuseNew resets every connection accepted from now on; those already
// forwarded go on.
func (p *tcpProxy) RefuseNew() {
	p.mu.Lock()
	p.refuse = true
	p.mu.Unlock()
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
		if p.refuse {
			p.mu.Unlock()
			proxyRST(conn)
			continue
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
