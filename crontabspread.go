package main

// run crontab's leaderships, spread over the hosts that run the file. A
// host leading more than its share, ⌈jobs ÷ hosts⌉, hands jobs over
// between runs (never during one), through the handover a step-down
// takes, to the first in line whose host leads fewer than its share,
// among the candidates of the line's highest --priority, no lower than
// its own. It decides when a line it leads
// changes (a host stands or leaves, a leadership begins or ends), never
// at rest: its reads (each job's leader node, the successor's proposal)
// are made then, and it writes nothing but the handover itself.

import (
	"time"

	"ballot/internal/jsonlite"
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
		if c.hold().handsOver() {
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
		if err == nil && jsonlite.Unmarshal(raw, &rec) == nil {
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
		// The first in line whose host leads fewer than its share, among
		// those of the line's highest --priority (it wins) and of no lower
		// one than ours: not only the next in line, or a host that joined
		// late, behind hosts at their share in every line, would get none.
		line := d.c.line.othersInOrder(d.c.basePath, d.c.node)
		if len(line) == 0 || proposalPriority(line[0]) < d.c.priority {
			continue // --priority wins
		}
		var first string
		var p proposalData
		for _, n := range line {
			if proposalPriority(n) != proposalPriority(line[0]) {
				break
			}
			raw, _, err := sess.Conn.Get(n)
			p = proposalData{}
			if err == nil && jsonlite.Unmarshal(raw, &p) == nil && p.CandidateID != d.c.id && load[p.CandidateID] < share {
				first = n
				break
			}
		}
		if first == "" {
			continue
		}
		load[p.CandidateID]++
		excess--
		d.c.log.Info("this host leads more than its share of the jobs: handing this one over between runs",
			"leads", len(leads), "share", share, "hosts", hosts, "successor", first, "successor_id", p.CandidateID)
		d.l.ctl.spread(first)
	}
}
