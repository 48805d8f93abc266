package main

// Channels used as signals: a poke that never blocks, and whether one is
// closed.

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
