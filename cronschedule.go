package main

// run cron's schedules: when the scheduled times are. A cron expression
// (gronx) read in a time zone, DST's skipped and repeated hours included,
// and "@every DURATION" on the Unix epoch, so every host computes the same
// times; parseSchedule checks one, as --schedule's errors say.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"ballot/internal/gronx"
)

// schedule yields scheduled times.
type schedule interface {
	// Next is the first scheduled time strictly after t.
	Next(t time.Time) (time.Time, error)
	// Latest is the last scheduled time at or before t.
	Latest(t time.Time) (time.Time, error)
}

// cronSchedule is a gronx expression read in a time zone.
//
// gronx steps through wall-clock times with time.Date, which around a DST
// change makes it skip scheduled times, return a Latest later than t, or
// fail. So gronx only sees clock readings labelled UTC, where each occurs
// once, and they are mapped to instants in loc here: a reading the clock
// skips (spring forward) is not scheduled, and one it shows twice (fall back)
// is scheduled once, at its first occurrence.
type cronSchedule struct {
	expr string
	loc  *time.Location
}

func (s cronSchedule) Next(t time.Time) (time.Time, error) {
	w := s.clockSoFar(t)
	for {
		c, err := gronx.NextTickAfter(s.expr, w, false)
		if err != nil {
			return time.Time{}, err
		}
		if at, ok := s.firstAt(c); ok && at.After(t) {
			return at, nil
		}
		w = c
	}
}

func (s cronSchedule) Latest(t time.Time) (time.Time, error) {
	w := s.clockSoFar(t)
	for {
		c, err := gronx.PrevTickBefore(s.expr, w, true)
		if err != nil {
			return time.Time{}, err
		}
		if at, ok := s.firstAt(c); ok && !at.After(t) {
			return at, nil
		}
		w = c.Add(-time.Second)
	}
}

// clockSoFar is the highest reading loc's clock has shown by t, labelled
// UTC: after a fall back, the reading just before it.
func (s cronSchedule) clockSoFar(t time.Time) time.Time {
	t = t.In(s.loc)
	w := clockReading(t)
	if start, _ := t.ZoneBounds(); !start.IsZero() {
		if b := clockReading(start.Add(-time.Nanosecond).In(s.loc)); b.After(w) {
			w = b
		}
	}
	return w
}

// firstAt is the first instant at which loc's clock shows the reading c;
// ok is false when the clock skips it.
func (s cronSchedule) firstAt(c time.Time) (at time.Time, ok bool) {
	at = time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), 0, s.loc)
	if !clockReading(at).Equal(c) {
		return at, false
	}
	// time.Date picks either instant of a reading shown twice.
	if start, _ := at.ZoneBounds(); !start.IsZero() {
		_, off := start.Add(-time.Nanosecond).Zone()
		if e := c.Add(-time.Duration(off) * time.Second).In(s.loc); e.Before(at) && clockReading(e).Equal(c) {
			at = e
		}
	}
	return at, true
}

// clockReading is t's wall clock labelled UTC.
func clockReading(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, t.Nanosecond(), time.UTC)
}

// everySchedule is "@every DURATION": multiples of the duration since the
// Unix epoch, so every host computes the same times.
type everySchedule struct{ every time.Duration }

func (s everySchedule) Next(t time.Time) (time.Time, error) {
	l, _ := s.Latest(t)
	return l.Add(s.every), nil
}

func (s everySchedule) Latest(t time.Time) (time.Time, error) {
	t = t.Round(0) // no monotonic reading
	r := t.Sub(time.Unix(0, 0)) % s.every
	if r < 0 {
		r += s.every
	}
	return t.Add(-r), nil
}

// parseSchedule validates a schedule with gronx's validator and one real
// computation: the validator alone accepts dates that never come, such as
// 30 February.
// source names where the expression came from, as errors should say it:
// "--schedule", "environment SCHEDULE" or "config file F: key \"schedule\"".
func parseSchedule(expr, source string, loc *time.Location, now time.Time) (schedule, error) {
	e := strings.Join(strings.Fields(expr), " ")
	if rest, ok := strings.CutPrefix(e, "@every "); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return nil, fmt.Errorf("%s %q: @every needs a whole number of seconds, at least 1s, such as @every 30s or @every 1h30m", source, expr)
		}
		return everySchedule{every: d}, nil
	}
	// Every part checked alone, before gronx.IsValid: IsValid checks a
	// field against the clock and stops at its first due part, so at
	// minute 0 it passes "0,61 * * * *".
	if e != "" {
		if problem := cronFieldProblem(e); problem != "" {
			return nil, fmt.Errorf("%s %q: not a valid cron expression: %s", source, expr, problem)
		}
	}
	if e == "" || !gronx.IsValid(e) {
		return nil, fmt.Errorf("%s %q: not a valid cron expression; use 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, an optional year last, or @yearly, @monthly, @weekly, @daily, @hourly, @every 30s", source, expr)
	}
	s := cronSchedule{expr: e, loc: loc}
	if _, err := s.Next(now); err != nil {
		return nil, fmt.Errorf("%s %q: valid syntax, but no such date comes (e.g. 30 February, or a year in the past); use a schedule that fires", source, expr)
	}
	return s, nil
}

// cronFields names gronx's segments, seconds first and year last, with
// the values each allows.
var cronFields = [...]struct {
	name   string
	lo, hi int
}{{"second", 0, 59}, {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31}, {"month", 1, 12}, {"day-of-week", 0, 7}, {"year", 0, 9999}}

// cronFieldProblem names the field of an invalid expression whose value is
// out of its range ("minute field 61: allowed 0-59"): "use 5 fields" is no
// help to an expression that has five. "" when it is not that.
func cronFieldProblem(expr string) string {
	segs, err := gronx.Segments(expr)
	if err != nil || len(segs) > len(cronFields) {
		return ""
	}
	check := &gronx.SegmentChecker{}
	check.SetRef(time.Now())
	for pos, seg := range segs {
		// Each part alone: CheckDue stops at the first part that is due.
		for _, part := range strings.Split(seg, ",") {
			if part == "" {
				continue
			}
			_, err := check.CheckDue(part, pos)
			if err == nil {
				continue
			}
			f := cronFields[pos]
			switch {
			case strings.Contains(err.Error(), "step can't be 0"):
				return fmt.Sprintf("%s field %s: a step must be at least 1", f.name, part)
			case !strings.Contains(err.Error(), "out of bounds"):
				return ""
			}
			msg := fmt.Sprintf("%s field %s: allowed %d-%d", f.name, part, f.lo, f.hi)
			if f.name == "day-of-week" {
				msg += " (0 and 7 are Sunday)"
			}
			if lo, hi, ok := strings.Cut(strings.Split(part, "/")[0], "-"); ok {
				if l, err1 := strconv.Atoi(lo); err1 == nil {
					if h, err2 := strconv.Atoi(hi); err2 == nil && l > h {
						msg += ", a range from low to high"
					}
				}
			}
			return msg
		}
	}
	return ""
}

// spreadOffset is --spread's delay for the election at path: whole
// seconds in [0, d), from a hash of the path (as Jenkins' H hashes a job's
// name), so every candidate computes the same and neither a restart nor a
// failover moves a run. Each scheduled time keeps its name (recorded,
// BALLOT_SCHEDULED_TIME); only its start moves.
func spreadOffset(path string, d time.Duration) time.Duration {
	n := uint64(d / time.Second)
	if n == 0 {
		return 0
	}
	return time.Duration(spreadHash(path)%n) * time.Second
}

// spreadHash hashes s for --spread and H: FNV-1a (64 bits, written out:
// hash/fnv cost more bytes than its loop), whose low bits vary little
// between strings that differ in their last byte (/ballot/job1,
// /ballot/job2), mixed by splitmix64's finaliser.
func spreadHash(s string) uint64 {
	x := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= 1099511628211
	}
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hashRanges are the values Jenkins' H picks from in each of gronx's
// segments (seconds first); day-of-month stops at 28, so every month has
// the day. H is not taken in the year.
var hashRanges = [...]struct{ lo, hi int }{{0, 59}, {0, 59}, {0, 23}, {1, 28}, {1, 12}, {0, 6}}

// hashExpr replaces each H of a cron expression (H, H(a-b), H/n,
// H(a-b)/n, as Jenkins has them) by a value hashed from key (the election's
// path) and the field: the same on every host and across restarts, and
// different between elections. An expression without H is returned as is.
func hashExpr(expr, key string) (string, error) {
	if !strings.ContainsAny(expr, "Hh") || strings.HasPrefix(strings.TrimSpace(expr), "@") {
		return expr, nil
	}
	segs, err := gronx.Segments(expr)
	if err != nil {
		return expr, nil // parseSchedule says what is wrong
	}
	found := false
	for pos, seg := range segs {
		parts := strings.Split(seg, ",")
		for i, part := range parts {
			if !strings.HasPrefix(part, "H") {
				continue
			}
			found = true
			if pos >= len(hashRanges) {
				return "", fmt.Errorf("H is not taken in the year field")
			}
			if parts[i], err = hashPart(part, pos, key); err != nil {
				return "", err
			}
		}
		segs[pos] = strings.Join(parts, ",")
	}
	if !found {
		return expr, nil // an H of a name, such as THU
	}
	return strings.Join(segs, " "), nil
}

// hashPart expands one H part of the segment at pos.
func hashPart(part string, pos int, key string) (string, error) {
	f, r := cronFields[pos], hashRanges[pos]
	bad := fmt.Errorf("%s field %s: use H, H(a-b), H/n or H(a-b)/n, with %d <= a <= b <= %d and n >= 1", f.name, part, r.lo, r.hi)
	rest := part[1:]
	lo, hi := r.lo, r.hi
	if inner, ok := strings.CutPrefix(rest, "("); ok {
		rng, after, ok := strings.Cut(inner, ")")
		a, b, ok2 := strings.Cut(rng, "-")
		if !ok || !ok2 {
			return "", bad
		}
		var err1, err2 error
		lo, err1 = strconv.Atoi(a)
		hi, err2 = strconv.Atoi(b)
		if err1 != nil || err2 != nil || lo < r.lo || hi > r.hi || lo > hi {
			return "", bad
		}
		rest = after
	}
	h := spreadHash(key + "\x00" + f.name)
	if rest == "" {
		return strconv.Itoa(lo + int(h%uint64(hi-lo+1))), nil
	}
	ns, ok := strings.CutPrefix(rest, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return "", bad
	}
	return fmt.Sprintf("%d-%d/%d", lo+int(h%uint64(min(n, hi-lo+1))), hi, n), nil
}
