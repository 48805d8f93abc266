package main

// run crontab's leaderships, spread over the hosts that run the file. A
// host leading more than its share, ⌈jobs ÷ hosts⌉, hands jobs over
// between runs (never during one) to the next in line, through the
// handover a step-down takes, when that one's host leads fewer than its
// share and its --priority is no lower. It decides when a line it leads
// changes (a host stands or leaves, a leadership begins or ends), never
// at rest: its reads (each job's leader node, the successor's proposal)
// are made then, and it writes nothing but the handover itself.

import (
	"encoding/json"
	"time"
)

// spreader pokes the process's balancing, run on its own goroutine.
type spreader struct {
	ct   *crontab
	poke chan struct{}
	quit chan struct{}
}

func newSpreader(ct *crontab) *spreader {
	s := &spreader{ct: ct, poke: make(chan struct{}, 1), quit: ct.procStop}
	go s.loop()
	return s
}

// changed: a line this process leads in changed. It never blocks.
func (s *spreader) changed() { ping(s.poke) }

func (s *spreader) loop() {
	for {
		select {
		case <-s.poke:
		case <-s.quit:
			return
		}
		// Gather the changes of one moment (a host standing in every
		// job): T/8, nothing a handover between runs waits for.
		select {
		case <-time.After(s.ct.set.SessionTimeout / 8):
		case <-s.quit:
			return
		}
		s.balance(*s.ct.jobs.Load())
	}
}

// led is one leadership of this process, as the balancing sees it.
type led struct {
	name string
	c    *candidate
	l    *lease
}

// balance hands over what this process leads beyond its share; jobs are
// the file's, in its order.
func (s *spreader) balance(jobs []*jobRun) {
	var leads []led
	leading := map[string]bool{}
	hosts := 1
	for _, jr := range jobs {
		r := jr.r
		l := r.lease.Load()
		r.mu.Lock()
		c := r.cand
		r.mu.Unlock()
		if l == nil || c == nil || l.c != c || isClosed(l.ended.Done()) {
			continue
		}
		_, line := c.line.firstOther(c.basePath, c.node)
		hosts = max(hosts, len(line)) // each host stands once in each job's line
		if c.slots == 1 {
			leads = append(leads, led{jr.job.Name, c, l})
			leading[jr.job.Name] = true
		}
	}
	share := (len(jobs) + hosts - 1) / hosts
	if len(leads) <= share {
		return
	}
	sess := s.ct.hold.current()
	if sess == nil || sess.IsLost() {
		return
	}
	// The others' loads: who leads each job this process does not.
	load := map[string]int{}
	for _, jr := range jobs {
		if leading[jr.job.Name] {
			continue
		}
		raw, _, err := sess.Conn.Get(jr.r.set.BasePath + "/" + leaderName)
		var rec leaderRecord
		if err == nil && json.Unmarshal(raw, &rec) == nil {
			load[rec.CandidateID]++
		}
	}
	excess := len(leads) - share
	for _, d := range leads {
		if excess == 0 {
			return
		}
		if d.l.ctl.PreemptTo() != "" {
			excess-- // already handing over
			continue
		}
		first, _ := d.c.line.firstOther(d.c.basePath, d.c.node)
		if first == "" || proposalPriority(first) < d.c.priority {
			continue // --priority wins
		}
		raw, _, err := sess.Conn.Get(first)
		var p proposalData
		if err != nil || json.Unmarshal(raw, &p) != nil || p.CandidateID == d.c.id || load[p.CandidateID] >= share {
			continue
		}
		load[p.CandidateID]++
		excess--
		d.c.log.Info("this host leads more than its share of the jobs: handing this one over between runs",
			"leads", len(leads), "share", share, "hosts", hosts, "successor", first, "successor_id", p.CandidateID)
		d.l.ctl.spread(first)
	}
}
