package main

// Channels used as signals: a poke that never blocks, and whether one is
// closed.

import "sync"

func ping(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// isClosed reports whether ch is closed (false for nil): the one way to
// ask.
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// closer is a channel closed once, by whoever comes first.
type closer struct {
	C    chan struct{}
	once sync.Once
}

func newCloser() *closer { return &closer{C: make(chan struct{})} }

func (c *closer) Close() { c.once.Do(func() { close(c.C) }) }
