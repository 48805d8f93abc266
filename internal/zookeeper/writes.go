package zookeeper

// The quorum writes a session sends for the elections it serves (a
// lease's renewals, a next in line's proofs), gathered: the writes every
// renewing election owes at one tick of the session's renewal grid go
// out in one multi-op, one quorum transaction, and each election gets
// its own answers back (its Stats: each lease keeps its own fence).
//
// A multi-op commits all or nothing: one election's failed op (its
// proposal or baton gone) fails everyone's. Its ops touch only its own
// nodes, so its answer is the one it would have had alone: it gets it,
// and the others' ops are sent again at once without it. The failed
// multi committed nothing, so the resend duplicates nothing, and each
// write still counts from its first send, which precedes its commit.
// One election's trouble costs the others a round trip per failing
// election, never their lease (README, "The lease").
//
// With one election on the session (all ballot runs today) every write
// goes out alone and at once: the same multi-op, at the same moment, as
// a direct Multi.

import (
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/bootclock"
)

// writes is a session's gathering of its elections' writes.
type writes struct {
	// Lock order: a Writer's mu, then this one.
	mu       sync.Mutex
	onGrid   int            // writers on the renewal grid (Join)
	epoch    bootclock.Time // the grid's origin: the first writer's join
	queue    []*write       // waiting for the round to complete
	reported int            // writers on the grid heard from this round
	timer    *time.Timer    // sends a round whose writers did not all report
}

// write is one election's ops, waiting for their answers.
type write struct {
	ops  []any
	res  []zk.MultiResponse
	err  error
	done chan struct{}
}

// Writer sends one election's quorum writes through its session. A
// lease's renewals join the session's grid (Join, Next) so that the
// renewals of every election fall on the same ticks and share one
// multi-op; a writer on the grid reports each tick (Write or Skip).
type Writer struct {
	s      *Session
	mu     sync.Mutex
	onGrid bool
}

// Writer is a new writer for one election on s.
func (s *Session) Writer() *Writer { return &Writer{s: s} }

// Join puts the writer on the session's renewal grid, now being its
// first renewal's send time: a grid no writer is on starts there, so a
// single election renews exactly on its own schedule.
func (w *Writer) Join(now bootclock.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.onGrid {
		return
	}
	w.onGrid = true
	g := &w.s.writes
	g.mu.Lock()
	if g.onGrid == 0 {
		g.epoch = now
	}
	g.onGrid++
	g.mu.Unlock()
}

// Leave takes the writer off the grid (its lease at rest, or over): the
// others' rounds no longer wait for it.
func (w *Writer) Leave() {
	gather := w.s.gather()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.onGrid {
		return
	}
	w.onGrid = false
	g := &w.s.writes
	g.mu.Lock()
	g.onGrid--
	batch := w.s.takeRoundLocked(gather)
	g.mu.Unlock()
	w.s.sendBatch(batch)
}

// Next is the grid's first tick after now, every apart: the moment the
// writer's next renewal is due. Never later than now + every.
func (w *Writer) Next(now bootclock.Time, every time.Duration) bootclock.Time {
	g := &w.s.writes
	g.mu.Lock()
	epoch := g.epoch
	g.mu.Unlock()
	e := bootclock.Time(every)
	if e <= 0 || now < epoch {
		return now + e
	}
	return epoch + ((now-epoch)/e+1)*e
}

// Skip reports a tick without a write (a renewal not sent: supervision
// stuck, too many in flight): the round need not wait for it.
func (w *Writer) Skip() {
	if !w.joined() {
		return
	}
	gather := w.s.gather()
	g := &w.s.writes
	g.mu.Lock()
	g.reported++
	batch := w.s.takeRoundLocked(gather)
	g.mu.Unlock()
	w.s.sendBatch(batch)
}

func (w *Writer) joined() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.onGrid
}

// Write sends ops (a multi-op's) with the other elections' writes of the
// same round and returns this writer's answers, as Conn.Multi would:
// its own responses, and the error of its first failed op (or the
// request's). A writer off the grid (a proof) sends at once, with
// whatever is waiting.
func (w *Writer) Write(ops ...any) ([]zk.MultiResponse, error) {
	req := &write{ops: ops, done: make(chan struct{})}
	joined := w.joined() // before g.mu: Join and Leave take w.mu, then g.mu
	gather := w.s.gather()
	g := &w.s.writes
	g.mu.Lock()
	g.queue = append(g.queue, req)
	var batch []*write
	if joined {
		g.reported++
		batch = w.s.takeRoundLocked(gather)
	} else {
		batch = g.takeAllLocked()
	}
	g.mu.Unlock()
	w.s.sendBatch(batch)
	<-req.done
	return req.res, req.err
}

// gather is how long a round waits for a writer on the grid that did
// not report (stopped, its loop late) after the round's first write:
// T/64, which it costs those writes of the 7T/16 they ride through.
func (s *Session) gather() time.Duration { return s.Timeout() / 64 }

// takeRoundLocked, with g.mu held, takes the round's writes once every
// writer on the grid has reported; until then it arms the gather timer.
func (s *Session) takeRoundLocked(gather time.Duration) []*write {
	g := &s.writes
	if g.reported < g.onGrid {
		if len(g.queue) > 0 && g.timer == nil {
			g.timer = time.AfterFunc(gather, s.flush)
		}
		return nil
	}
	return g.takeAllLocked()
}

// takeAllLocked, with g.mu held, takes whatever waits and starts a new
// round.
func (g *writes) takeAllLocked() []*write {
	batch := g.queue
	g.queue, g.reported = nil, 0
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	return batch
}

// flush sends whatever waits: a round a writer on the grid did not
// complete in time.
func (s *Session) flush() {
	g := &s.writes
	g.mu.Lock()
	batch := g.takeAllLocked()
	g.mu.Unlock()
	s.sendBatch(batch)
}

// sendBatch sends batch on a goroutine of its own: a round never waits
// for an earlier one's answer (renewals overlap on a slow link).
func (s *Session) sendBatch(batch []*write) {
	if len(batch) > 0 {
		go s.send(batch)
	}
}

// send sends batch in one multi-op and hands each write its answers. A
// failed op's write gets the answer it would have had alone; the rest
// are sent again at once without it.
func (s *Session) send(batch []*write) {
	for len(batch) > 0 {
		var ops []any
		for _, w := range batch {
			ops = append(ops, w.ops...)
		}
		res, err := s.Conn.Multi(ops...)
		perOp := len(res) == len(ops) // else no answer per op: the connection, the session
		failed := -1                  // the write whose op failed the multi
		if err != nil && perOp && len(batch) > 1 {
			at := 0
			for i, w := range batch {
				if firstError(res[at:at+len(w.ops)]) != nil {
					failed = i
					break
				}
				at += len(w.ops)
			}
		}
		if failed < 0 { // one answer for all (alone, it is the multi's)
			at := 0
			for _, w := range batch {
				if perOp {
					w.res = res[at : at+len(w.ops)]
				}
				w.err = err
				at += len(w.ops)
				close(w.done)
			}
			return
		}
		at := 0
		for _, w := range batch[:failed] {
			at += len(w.ops)
		}
		w := batch[failed]
		w.res = res[at : at+len(w.ops)]
		w.err = firstError(w.res) // the multi's error: the first op that failed is its
		close(w.done)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

func firstError(res []zk.MultiResponse) error {
	for _, r := range res {
		if r.Error != nil {
			return r.Error
		}
	}
	return nil
}
