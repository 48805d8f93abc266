package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestProposalDataEncode: the ages a reader sees are taken at the write:
// how long the command has run, how long ago it last exited and the health
// check ran, how soon the next cron run is.
func TestProposalDataEncode(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	d := proposalData{CandidateID: "a", State: stateLeading, FencingToken: 7,
		Child:    &childStatus{PID: 42, Since: now.Add(-90 * time.Second)},
		LastExit: &exitStatus{Code: 1, At: now.Add(-2500 * time.Millisecond)},
		Health:   &healthStatus{Healthy: true, LastCheck: now.Add(-300 * time.Millisecond)},
		NextRun:  &scheduledNext{Time: now.Add(time.Minute).Format(time.RFC3339)}}
	var got proposalData
	if err := json.Unmarshal(d.encodeAt(now), &got); err != nil {
		t.Fatal(err)
	}
	if !got.WrittenAt.Equal(now) || got.WrittenAt.Location() != time.UTC || got.Child.RunningForMs != 90000 || got.LastExit.AgoMs != 2500 ||
		got.Health.LastCheckAgoMs != 300 || got.NextRun.InMs != 60000 || got.FencingToken != 7 || got.State != stateLeading {
		t.Errorf("encoded: %+v child %+v exit %+v health %+v next %+v", got, got.Child, got.LastExit, got.Health, got.NextRun)
	}

	// Not yet checked, or a next run that does not parse: no age made up.
	d = proposalData{Health: &healthStatus{}, NextRun: &scheduledNext{Time: "soon", InMs: -1}}
	if err := json.Unmarshal(d.encodeAt(now), &got); err != nil {
		t.Fatal(err)
	}
	if got.Health.LastCheckAgoMs != 0 || got.NextRun.InMs != -1 {
		t.Errorf("encoded: health %+v next %+v", got.Health, got.NextRun)
	}
}

// TestPublisherUpdatesFold: changes made before the publisher gets to
// write all go out in one write (one pending kick, the status holding
// every change); without a proposal (nil) updates and stop do nothing, and
// stop may be called twice. The writes themselves need ZooKeeper
// (e2e tests).
func TestPublisherUpdatesFold(t *testing.T) {
	p := &publisher{kick: make(chan struct{}, 1), quit: make(chan struct{})}
	p.update(func(d *proposalData) { d.State = stateLeading })
	p.update(func(d *proposalData) { d.FencingToken = 7 })
	p.update(func(d *proposalData) { d.Child = &childStatus{PID: 42} })
	if len(p.kick) != 1 {
		t.Errorf("%d writes pending, want 1", len(p.kick))
	}
	if p.status.State != stateLeading || p.status.FencingToken != 7 || p.status.Child == nil {
		t.Errorf("status %+v", p.status)
	}
	p.stop()
	p.stop()
	select {
	case <-p.quit:
	default:
		t.Error("stop did not end the writes")
	}
	var none *publisher
	none.update(func(*proposalData) { t.Error("a nil publisher applied an update") })
	none.stop()
}

// TestPublisherUrgentSkipsFoldAndGap: a change that says a handover may
// come is written at once, not folded nor spaced from the last write
// (standby.go: the next in line proves its place on seeing it); other
// changes wait out the fold and the gap.
func TestPublisherUrgentSkipsFoldAndGap(t *testing.T) {
	p := &publisher{kick: make(chan struct{}, 1), hurried: make(chan struct{}, 1), quit: make(chan struct{})}
	p.update(func(d *proposalData) { d.State = stateLeading })
	if got := p.delay(0); got != publishGap {
		t.Errorf("a change right after a write waits %s, want the gap %s", got, publishGap)
	}
	if got := p.delay(time.Hour); got != publishFold {
		t.Errorf("a change long after a write waits %s, want the fold %s", got, publishFold)
	}
	p.urgent(func(d *proposalData) { d.HandoverMayCome = true })
	if got := p.delay(0); got != 0 {
		t.Errorf("an urgent change waits %s, want 0", got)
	}
	if len(p.kick) != 1 || len(p.hurried) != 1 || !p.status.HandoverMayCome {
		t.Errorf("urgent: %d writes pending, hurried %d, status %+v", len(p.kick), len(p.hurried), p.status)
	}
	var none *publisher
	none.urgent(func(*proposalData) { t.Error("a nil publisher applied an urgent update") })
}
