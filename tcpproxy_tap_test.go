package main

// tcpProxy's client tap: a test sees each request on its way to ZooKeeper
// and may drop it, or cut its client off right after it (so the request is
// served and its answer lost), or mute its answers and cut the client off
// later (Then), once the request is known to have landed.

// tapAction is what SetClientTap's function wants done with a chunk: the
// zero value forwards it.
type tapAction struct {
	Drop        bool   // do not forward it
	ResetClient bool   // then reset its client, as ResetClientSides does
	Mute        bool   // its client hears nothing more (from before it is forwarded: no answer escapes)
	Then        func() // then call this (after the chunk is forwarded)
}

// SetClientTap installs f, which sees each chunk read from a client before
// it is forwarded (not while blackholed) and says what to do with it; nil
// removes it. A chunk is what one read returned: a small request is one.
func (p *tcpProxy) SetClientTap(f func(b []byte) tapAction) {
	p.mu.Lock()
	p.tap = f
	p.mu.Unlock()
}

// tapped is what the tap, if any, wants done with b.
func (c *proxyConn) tapped(b []byte) tapAction {
	c.p.mu.Lock()
	tap := c.p.tap
	c.p.mu.Unlock()
	if tap == nil {
		return tapAction{}
	}
	return tap(b)
}

// afterTap does what a comes to after its chunk was forwarded or dropped.
func (c *proxyConn) afterTap(a tapAction) {
	if a.ResetClient {
		c.resetClientSide()
	}
	if a.Then != nil {
		a.Then()
	}
}

func (c *proxyConn) resetClientSide() {
	c.mu.Lock()
	gone := c.clientGone
	c.clientGone = true
	c.mu.Unlock()
	if !gone {
		proxyRST(c.client)
	}
}

func (c *proxyConn) isMuted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.muted
}
