package main

// Unit tests of schedule parsing and computation (cron.go): no ZooKeeper, no
// binary. Every expected time below is computed by hand.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"ballot/internal/gronx"
)

// schedRef is the reference time of the table tests: a Thursday.
var schedRef = time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC)

func schedLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v", name, err)
	}
	return loc
}

func schedTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad time %q in the test: %v", s, err)
	}
	return v
}

func mustSchedule(t *testing.T, expr string, loc *time.Location, now time.Time) schedule {
	t.Helper()
	s, err := parseSchedule(expr, "--schedule", loc, now)
	if err != nil {
		t.Fatalf("parseSchedule(%q): %v", expr, err)
	}
	return s
}

func TestParseScheduleValid(t *testing.T) {
	// From 2026-01-15T10:20:30Z, a Thursday. January 2026: Thu 1, Mon 5,
	// Mon 12, Sat 17, Sun 18, Fri 30, Sat 31. February 2026: Sun 1, Mon 2,
	// Mon 9, Sun 15, Mon 16.
	tests := []struct {
		expr string
		zone string // "" = UTC
		want string // first time strictly after schedRef, RFC 3339
	}{
		// 5 fields: minute hour day-of-month month day-of-week.
		{"* * * * *", "", "2026-01-15T10:21:00Z"},
		{"*/15 * * * *", "", "2026-01-15T10:30:00Z"},
		{"5 4 * * *", "", "2026-01-16T04:05:00Z"},
		{"0 22 * * 1-5", "", "2026-01-15T22:00:00Z"},
		{"0 0-12/4 * * *", "", "2026-01-15T12:00:00Z"},            // range with step: 0,4,8,12
		{"0 0 1,15 * *", "", "2026-02-01T00:00:00Z"},              // list; the 15th at 00:00 has passed
		{"0 9-17 * * MON-FRI", "", "2026-01-15T11:00:00Z"},        // day names
		{"0 0 * * SAT,SUN", "", "2026-01-17T00:00:00Z"},           // list of day names
		{"0 0 * jan thu", "", "2026-01-22T00:00:00Z"},             // names in lower case
		{"30 8 1 JAN,JUL *", "", "2026-07-01T08:30:00Z"},          // month names
		{"0 12 * FEB *", "", "2026-02-01T12:00:00Z"},              // month name
		{"0 0 * * 7", "", "2026-01-18T00:00:00Z"},                 // 7 is Sunday too
		{"0 0 13 * FRI", "", "2026-01-16T00:00:00Z"},              // day-of-month OR day-of-week: any Friday, not only Friday 13th
		{"0 0 ? * MON", "", "2026-01-19T00:00:00Z"},               // ? = no day-of-month constraint
		{"0 0 L * *", "", "2026-01-31T00:00:00Z"},                 // last day of the month
		{"0 0 L 2 *", "", "2026-02-28T00:00:00Z"},                 // last day of February
		{"0 0 15W * *", "", "2026-02-16T00:00:00Z"},               // weekday nearest the 15th: Sun 15 Feb -> Mon 16
		{"0 0 * * 5L", "", "2026-01-30T00:00:00Z"},                // last Friday of the month
		{"0 0 * * 1#2", "", "2026-02-09T00:00:00Z"},               // second Monday (12 Jan has passed)
		{"0 0 29 2 *", "", "2028-02-29T00:00:00Z"},                // only in leap years
		{"0 9 * * *", "Asia/Tokyo", "2026-01-16T00:00:00Z"},       // 09:00 JST (UTC+9)
		{"0 9 * * *", "Europe/Paris", "2026-01-16T08:00:00Z"},     // 09:00 CET (UTC+1)
		{"0 9 * * *", "America/New_York", "2026-01-15T14:00:00Z"}, // 09:00 EST (UTC-5)
		// 6 fields: seconds first.
		{"15 * * * * *", "", "2026-01-15T10:21:15Z"},
		{"*/10 30 10 * * *", "", "2026-01-15T10:30:00Z"},
		{"0 0 12 * * MON-FRI", "", "2026-01-15T12:00:00Z"},
		// A 4-digit 6th field is a year, not seconds.
		{"0 0 1 1 * 2027", "", "2027-01-01T00:00:00Z"},
		{"0 0 1 1 * 2026-2030", "", "2027-01-01T00:00:00Z"},
		// 7 fields: second minute hour day-of-month month day-of-week year.
		{"0 30 9 * * * 2026", "", "2026-01-16T09:30:00Z"},
		{"45 30 9 1 6 * 2027", "", "2027-06-01T09:30:45Z"},
		// Tags.
		{"@yearly", "", "2027-01-01T00:00:00Z"},
		{"@annually", "", "2027-01-01T00:00:00Z"},
		{"@monthly", "", "2026-02-01T00:00:00Z"},
		{"@weekly", "", "2026-01-18T00:00:00Z"}, // Sunday 00:00
		{"@daily", "", "2026-01-16T00:00:00Z"},
		{"@DAILY", "", "2026-01-16T00:00:00Z"},
		{"@hourly", "", "2026-01-15T11:00:00Z"},
		{"@daily", "Asia/Tokyo", "2026-01-15T15:00:00Z"}, // midnight JST
		// @every: multiples of the duration since 1970-01-01T00:00:00Z, in
		// any time zone. schedRef is Unix 1768472430.
		{"@every 30s", "", "2026-01-15T10:21:00Z"},
		{"@every 1h30m", "", "2026-01-15T10:30:00Z"},             // 5400 s divides a day: 09:00, 10:30, ...
		{"@every 1h30m", "Asia/Kolkata", "2026-01-15T10:30:00Z"}, // the zone does not matter
		{"@every 7m", "", "2026-01-15T10:23:00Z"},                // 1768472430 = 420*4210648 + 270
		{"@every 25h", "", "2026-01-15T18:00:00Z"},               // 1768472430 = 90000*19649 + 62430
		// Extra whitespace.
		{"  0   12  *  *   *  ", "", "2026-01-15T12:00:00Z"},
		{"0\t12 * *\n*", "", "2026-01-15T12:00:00Z"},
		{" \t@every \t 30s ", "", "2026-01-15T10:21:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.expr+" "+tc.zone, func(t *testing.T) {
			loc := schedLoc(t, tc.zone)
			s := mustSchedule(t, tc.expr, loc, schedRef)
			want := schedTime(t, tc.want)
			got, err := s.Next(schedRef)
			if err != nil || !got.Equal(want) {
				t.Fatalf("Next(%s) = %s, %v; want %s", schedRef.Format(time.RFC3339), got.UTC().Format(time.RFC3339), err, want.Format(time.RFC3339))
			}
			// The same instant in another zone gives the same answer.
			if got2, err := s.Next(schedRef.In(schedLoc(t, "Pacific/Auckland"))); err != nil || !got2.Equal(want) {
				t.Errorf("Next from the same instant in another zone = %s, %v; want %s", got2.UTC().Format(time.RFC3339), err, tc.want)
			}
			// want is a scheduled time: Latest finds it, and nothing lies
			// between the reference and it.
			if l, err := s.Latest(want); err != nil || !l.Equal(want) {
				t.Errorf("Latest(%s) = %s, %v; want itself", tc.want, l.UTC().Format(time.RFC3339), err)
			}
			if l, err := s.Latest(want.Add(-time.Nanosecond)); err == nil && l.After(schedRef) {
				t.Errorf("Latest just before %s = %s: a scheduled time between the reference and Next", tc.want, l.UTC().Format(time.RFC3339))
			}
			if got.Nanosecond() != 0 {
				t.Errorf("Next = %s: not a whole second", got.Format(time.RFC3339Nano))
			}
		})
	}
}

func TestParseScheduleInvalid(t *testing.T) {
	t.Parallel()
	const (
		syntax  = "not a valid cron expression; use 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, an optional year last, or @yearly, @monthly, @weekly, @daily, @hourly, @every 30s"
		noDate  = "valid syntax, but no such date comes (e.g. 30 February, or a year in the past); use a schedule that fires"
		badEvry = "@every needs a whole number of seconds, at least 1s, such as @every 30s or @every 1h30m"
	)
	tests := []struct {
		expr string
		says string // what the message explains
	}{
		{"", syntax},
		{"   ", syntax},
		{"garbage", syntax},
		{"* * * *", syntax},         // too few fields
		{"* * * * * * * *", syntax}, // too many fields
		{"60 * * * *", "minute field 60: allowed 0-59"},
		{"* 24 * * *", "hour field 24: allowed 0-23"},
		{"* * 32 * *", "day-of-month field 32: allowed 1-31"},
		{"* * 0 * *", "day-of-month field 0: allowed 1-31"},
		{"* * * 13 *", "month field 13: allowed 1-12"},
		{"* * * * 8", "day-of-week field 8: allowed 0-7 (0 and 7 are Sunday)"},
		{"*/0 * * * *", "minute field */0: a step must be at least 1"},
		{"5-1 * * * *", "minute field 5-1: allowed 0-59, a range from low to high"},
		{"60 * * * * *", "second field 60: allowed 0-59"},
		{"61 * * * *", "minute field 61: allowed 0-59"},
		{"0,61 * * * *", "minute field 61: allowed 0-59"}, // each part, not only the first
		{"0 0 * * * 10000", "year field 10000: allowed 0-9999"},
		{"@reboot", syntax},               // not supported
		{"@every", syntax},                // no duration: not the @every form at all
		{"CRON_TZ=UTC 0 * * * *", syntax}, // no time zone prefix: --timezone does that
		{"0 0 * *\n* junk", syntax},       // the newline must not reach the message
		{"0 0 30 2 *", noDate},            // 30 February
		{"0 0 31 4 *", noDate},            // 31 April
		{"0 0 1 1 * 2020", noDate},        // a past year
		{"0 0 29 2 * 2027", noDate},       // 2027 is not a leap year
		{"0 0 1 1 * 2026", noDate},        // this year, but 1 January has passed
		{"0 0 * * 1#6", noDate},           // no month has a sixth Monday
		{"@every 1.5s", badEvry},
		{"@every 0s", badEvry},
		{"@every 500ms", badEvry},
		{"@every -1m", badEvry},
		{"@every abc", badEvry},
		{"@every 30", badEvry}, // no unit
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.expr), func(t *testing.T) {
			s, err := parseSchedule(tc.expr, "--schedule", time.UTC, schedRef)
			if err == nil {
				n, _ := s.Next(schedRef)
				t.Fatalf("parseSchedule(%q) accepted it (next %s)", tc.expr, n.Format(time.RFC3339))
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			if quoted := fmt.Sprintf("--schedule %q", tc.expr); !strings.Contains(msg, quoted) {
				t.Errorf("message %q does not name %s", msg, quoted)
			}
			if !strings.HasSuffix(msg, ": "+tc.says) {
				t.Errorf("message %q does not end with %q", msg, tc.says)
			}
		})
	}
}

func TestScheduleLatest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, zone string
		at         string // RFC 3339
		want       string // "" when there is no scheduled time at or before at
	}{
		{"*/15 * * * *", "", "2026-01-15T10:20:30Z", "2026-01-15T10:15:00Z"},
		{"*/15 * * * *", "", "2026-01-15T10:15:00Z", "2026-01-15T10:15:00Z"}, // exactly on time: itself
		{"*/15 * * * *", "", "2026-01-15T10:15:00.5Z", "2026-01-15T10:15:00Z"},
		{"*/15 * * * *", "", "2026-01-15T10:14:59.999Z", "2026-01-15T10:00:00Z"},
		{"*/15 * * * *", "", "2026-01-15T00:05:00Z", "2026-01-15T00:00:00Z"},
		{"*/15 * * * *", "", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
		{"*/15 * * * *", "", "2025-12-31T23:59:59Z", "2025-12-31T23:45:00Z"},
		{"30 * * * * *", "", "2026-01-15T10:20:29Z", "2026-01-15T10:19:30Z"},
		{"0 0 L * *", "", "2026-02-10T00:00:00Z", "2026-01-31T00:00:00Z"},
		{"0 0 L * *", "", "2026-03-01T12:00:00Z", "2026-02-28T00:00:00Z"},
		{"0 0 * * 5L", "", "2026-01-30T00:00:00Z", "2026-01-30T00:00:00Z"},
		{"0 0 * * 5L", "", "2026-01-29T23:59:59Z", "2025-12-26T00:00:00Z"}, // 31 Dec 2025 is a Wednesday
		{"0 0 15W * *", "", "2026-02-20T00:00:00Z", "2026-02-16T00:00:00Z"},
		{"0 0 * * 1#2", "", "2026-02-01T00:00:00Z", "2026-01-12T00:00:00Z"},
		{"0 0 29 2 *", "", "2026-01-15T10:20:30Z", "2024-02-29T00:00:00Z"},
		{"0 0 1 1 * 2026-2030", "", "2026-01-15T10:20:30Z", "2026-01-01T00:00:00Z"},
		{"@daily", "Asia/Tokyo", "2026-01-15T10:20:30Z", "2026-01-14T15:00:00Z"}, // midnight JST
		{"@weekly", "", "2026-01-15T10:20:30Z", "2026-01-11T00:00:00Z"},
		{"@every 30s", "", "2026-01-15T10:20:30Z", "2026-01-15T10:20:30Z"},
		{"@every 30s", "", "2026-01-15T10:20:59.9Z", "2026-01-15T10:20:30Z"},
		{"@every 1h30m", "", "2026-01-15T10:29:59Z", "2026-01-15T09:00:00Z"},
		{"@every 1h30m", "America/New_York", "2026-01-15T10:30:00Z", "2026-01-15T10:30:00Z"},
		{"@every 7m", "", "2026-01-15T10:20:30Z", "2026-01-15T10:16:00Z"},
		{"0 0 1 1 * 2027", "", "2026-01-15T10:20:30Z", ""}, // nothing before 2027
	}
	for _, tc := range tests {
		t.Run(tc.expr+" "+tc.zone+" "+tc.at, func(t *testing.T) {
			s := mustSchedule(t, tc.expr, schedLoc(t, tc.zone), schedRef)
			at := schedTime(t, tc.at)
			got, err := s.Latest(at)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Latest(%s) = %s; want an error", tc.at, got.UTC().Format(time.RFC3339))
				}
				return
			}
			want := schedTime(t, tc.want)
			if err != nil || !got.Equal(want) {
				t.Fatalf("Latest(%s) = %s, %v; want %s", tc.at, got.UTC().Format(time.RFC3339Nano), err, tc.want)
			}
			// Nothing is scheduled between Latest(at) and at.
			if n, err := s.Next(got); err != nil || !n.After(at) {
				t.Errorf("Next(Latest(%s)) = %s, %v; want after %s", tc.at, n.UTC().Format(time.RFC3339), err, tc.at)
			}
		})
	}

	// Over a range of instants: Latest(t) <= t < Next(Latest(t)), and
	// Latest(t) == t exactly when t is a scheduled time.
	for _, expr := range []string{"*/15 * * * *", "7 */2 * * *", "0 0 * * 1#2", "0 0 L * *", "30 * * * * *", "@every 30s", "@every 7m"} {
		s := mustSchedule(t, expr, time.UTC, schedRef)
		from := schedRef.Add(-3 * time.Hour)
		for at := from; at.Before(schedRef.Add(3 * time.Hour)); at = at.Add(time.Minute + 7*time.Second + 250*time.Millisecond) {
			l, err := s.Latest(at)
			if err != nil || l.After(at) {
				t.Fatalf("%s: Latest(%s) = %s, %v", expr, at.Format(time.RFC3339Nano), l.Format(time.RFC3339Nano), err)
			}
			n, err := s.Next(l)
			if err != nil || !n.After(at) {
				t.Fatalf("%s: Latest(%s) = %s but Next of it = %s, %v: a scheduled time was skipped", expr, at.Format(time.RFC3339Nano), l.Format(time.RFC3339), n.Format(time.RFC3339), err)
			}
			if n2, err := s.Next(at); err != nil || !n2.Equal(n) {
				t.Fatalf("%s: Next(%s) = %s, %v; Next(Latest) = %s", expr, at.Format(time.RFC3339Nano), n2.Format(time.RFC3339), err, n.Format(time.RFC3339))
			}
			if l2, err := s.Latest(l); err != nil || !l2.Equal(l) {
				t.Fatalf("%s: Latest(%s) = %s, %v; a scheduled time is its own Latest", expr, l.Format(time.RFC3339), l2.Format(time.RFC3339), err)
			}
		}
	}
}

// TestScheduleDST pins what a cron expression does when the clock of
// --timezone changes. Observed behaviour (the README may copy this):
//
// A schedule is read on the wall clock of --timezone.
//
//   - Spring forward (Paris 2026-03-29 02:00 CET -> 03:00 CEST; New York
//     2026-03-08 02:00 EST -> 03:00 EDT): times the clock skips do not exist
//     and are not run, nor moved. "30 2 * * *" does not run that day;
//     "0 * * * *" and "*/20 * * * *" have no 02:xx runs (01:40 is followed by
//     03:00, 20 minutes later in real time); "0 3 * * *" runs at 03:00 as
//     usual, 23 hours after the day before.
//   - Fall back (Paris 2026-10-25 03:00 CEST -> 02:00 CET, 02:00-02:59 shown
//     twice; New York 2026-11-01 02:00 EDT -> 01:00 EST, 01:00-01:59 shown
//     twice): each time of the repeated hour runs once, at its first
//     occurrence (summer time); nothing runs during the second pass. Paris:
//     "30 2 * * *" runs at 02:30 CEST (00:30Z) only; "0 * * * *" runs at
//     02:00 CEST (00:00Z), then 03:00 CET (02:00Z), two hours later;
//     "*/20 * * * *" runs at 02:00, 02:20, 02:40 CEST, then 03:00 CET (80
//     minutes later); "0 3 * * *" runs at 03:00 CET, 25 hours after the day
//     before. New York is the same one clock hour earlier: "0 * * * *" runs
//     at 01:00 EDT (05:00Z) then 02:00 EST (07:00Z); "*/20" at 01:00, 01:20,
//     01:40 EDT then 02:00 EST; "30 1 * * *" once, at 01:30 EDT.
//   - Scheduled times strictly increase: no time runs twice, none goes
//     backwards. With --timezone UTC (the default) none of this happens.
//
// (gronx alone, given times in the zone, did not behave like this: around
// the fall back it skipped or doubled times depending on the zone and the
// expression, returned a Latest later than t in Europe/Paris, and failed
// with "tried so hard". cronSchedule works around it; see cron.go.)
func TestScheduleDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		zone, expr, from string
		want             []string // successive Next() from `from`, UTC
	}{
		// Europe/Paris, spring forward: 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z).
		{"Europe/Paris", "30 2 * * *", "2026-03-27T12:00:00Z", []string{
			"2026-03-28T01:30:00Z", // 02:30 CET
			// 29 March: 02:30 does not exist, not run
			"2026-03-30T00:30:00Z", // 02:30 CEST
		}},
		{"Europe/Paris", "0 * * * *", "2026-03-28T22:30:00Z", []string{
			"2026-03-28T23:00:00Z", // 00:00 CET
			"2026-03-29T00:00:00Z", // 01:00 CET
			"2026-03-29T01:00:00Z", // 03:00 CEST
			"2026-03-29T02:00:00Z", // 04:00 CEST
		}},
		{"Europe/Paris", "*/20 * * * *", "2026-03-29T00:10:00Z", []string{
			"2026-03-29T00:20:00Z", // 01:20 CET
			"2026-03-29T00:40:00Z", // 01:40 CET
			"2026-03-29T01:00:00Z", // 03:00 CEST
			"2026-03-29T01:20:00Z", // 03:20 CEST
		}},
		{"Europe/Paris", "0 3 * * *", "2026-03-27T12:00:00Z", []string{
			"2026-03-28T02:00:00Z", // 03:00 CET
			"2026-03-29T01:00:00Z", // 03:00 CEST, 23 hours later
			"2026-03-30T01:00:00Z", // 03:00 CEST
		}},
		// Europe/Paris, fall back: 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
		{"Europe/Paris", "30 2 * * *", "2026-10-23T12:00:00Z", []string{
			"2026-10-24T00:30:00Z", // 02:30 CEST
			"2026-10-25T00:30:00Z", // 02:30 CEST, the first of the two 02:30s; not again at 02:30 CET
			"2026-10-26T01:30:00Z", // 02:30 CET
		}},
		{"Europe/Paris", "0 * * * *", "2026-10-24T22:30:00Z", []string{
			"2026-10-24T23:00:00Z", // 01:00 CEST
			"2026-10-25T00:00:00Z", // 02:00 CEST
			// 02:00 CET (01:00Z) is a second 02:00: not run
			"2026-10-25T02:00:00Z", // 03:00 CET
			"2026-10-25T03:00:00Z", // 04:00 CET
		}},
		{"Europe/Paris", "*/20 * * * *", "2026-10-24T23:30:00Z", []string{
			"2026-10-24T23:40:00Z", // 01:40 CEST
			"2026-10-25T00:00:00Z", // 02:00 CEST
			"2026-10-25T00:20:00Z", // 02:20 CEST
			"2026-10-25T00:40:00Z", // 02:40 CEST
			// 02:00, 02:20, 02:40 CET: not run
			"2026-10-25T02:00:00Z", // 03:00 CET
			"2026-10-25T02:20:00Z", // 03:20 CET
		}},
		{"Europe/Paris", "0 3 * * *", "2026-10-23T12:00:00Z", []string{
			"2026-10-24T01:00:00Z", // 03:00 CEST
			"2026-10-25T02:00:00Z", // 03:00 CET, 25 hours later
			"2026-10-26T02:00:00Z", // 03:00 CET
		}},
		// America/New_York, spring forward: 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z).
		{"America/New_York", "30 2 * * *", "2026-03-06T12:00:00Z", []string{
			"2026-03-07T07:30:00Z", // 02:30 EST
			// 8 March: 02:30 does not exist, not run
			"2026-03-09T06:30:00Z", // 02:30 EDT
		}},
		{"America/New_York", "0 * * * *", "2026-03-08T05:30:00Z", []string{
			"2026-03-08T06:00:00Z", // 01:00 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT
			"2026-03-08T08:00:00Z", // 04:00 EDT
		}},
		{"America/New_York", "*/20 * * * *", "2026-03-08T06:10:00Z", []string{
			"2026-03-08T06:20:00Z", // 01:20 EST
			"2026-03-08T06:40:00Z", // 01:40 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT
			"2026-03-08T07:20:00Z", // 03:20 EDT
		}},
		{"America/New_York", "0 3 * * *", "2026-03-06T12:00:00Z", []string{
			"2026-03-07T08:00:00Z", // 03:00 EST
			"2026-03-08T07:00:00Z", // 03:00 EDT, 23 hours later
			"2026-03-09T07:00:00Z", // 03:00 EDT
		}},
		// America/New_York, fall back: 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
		{"America/New_York", "30 2 * * *", "2026-10-30T12:00:00Z", []string{
			"2026-10-31T06:30:00Z", // 02:30 EDT
			"2026-11-01T07:30:00Z", // 02:30 EST (02:xx happens once here), 25 hours later
			"2026-11-02T07:30:00Z", // 02:30 EST
		}},
		{"America/New_York", "30 1 * * *", "2026-10-30T12:00:00Z", []string{
			"2026-10-31T05:30:00Z", // 01:30 EDT
			"2026-11-01T05:30:00Z", // 01:30 EDT, the first of the two 01:30s; not again at 01:30 EST
			"2026-11-02T06:30:00Z", // 01:30 EST
		}},
		{"America/New_York", "0 * * * *", "2026-11-01T03:30:00Z", []string{
			"2026-11-01T04:00:00Z", // 00:00 EDT
			"2026-11-01T05:00:00Z", // 01:00 EDT
			// 01:00 EST (06:00Z) is a second 01:00: not run
			"2026-11-01T07:00:00Z", // 02:00 EST
			"2026-11-01T08:00:00Z", // 03:00 EST
		}},
		{"America/New_York", "*/20 * * * *", "2026-11-01T04:30:00Z", []string{
			"2026-11-01T04:40:00Z", // 00:40 EDT
			"2026-11-01T05:00:00Z", // 01:00 EDT
			"2026-11-01T05:20:00Z", // 01:20 EDT
			"2026-11-01T05:40:00Z", // 01:40 EDT
			// 01:00, 01:20, 01:40 EST: not run
			"2026-11-01T07:00:00Z", // 02:00 EST
			"2026-11-01T07:20:00Z", // 02:20 EST
		}},
		{"America/New_York", "0 3 * * *", "2026-10-30T12:00:00Z", []string{
			"2026-10-31T07:00:00Z", // 03:00 EDT
			"2026-11-01T08:00:00Z", // 03:00 EST, 25 hours later
			"2026-11-02T08:00:00Z", // 03:00 EST
		}},
	}
	for _, tc := range tests {
		t.Run(tc.zone+" "+tc.expr+" "+tc.from, func(t *testing.T) {
			loc := schedLoc(t, tc.zone)
			from := schedTime(t, tc.from)
			s := mustSchedule(t, tc.expr, loc, from)
			var got []string
			at := from
			for range tc.want {
				n, err := s.Next(at)
				if err != nil {
					t.Fatalf("Next(%s): %v", at.Format(time.RFC3339), err)
				}
				if !n.After(at) {
					t.Fatalf("Next(%s) = %s: not strictly later", at.Format(time.RFC3339), n.Format(time.RFC3339))
				}
				got = append(got, n.UTC().Format(time.RFC3339))
				at = n
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				var local []string
				for _, g := range got {
					local = append(local, schedTime(t, g).In(loc).Format("2006-01-02 15:04 MST"))
				}
				t.Fatalf("successive Next from %s:\n got %v\n     (%v)\nwant %v", tc.from, got, local, tc.want)
			}
		})
	}

	// Around each change, minute by minute: the scheduled times are exactly
	// the instants whose wall-clock reading matches and which show that
	// reading for the first time; Next and Latest agree with that list from
	// any instant, and never go backwards.
	changes := []struct{ zone, at string }{
		{"Europe/Paris", "2026-03-29T01:00:00Z"},
		{"Europe/Paris", "2026-10-25T01:00:00Z"},
		{"America/New_York", "2026-03-08T07:00:00Z"},
		{"America/New_York", "2026-11-01T06:00:00Z"},
	}
	for _, ch := range changes {
		loc := schedLoc(t, ch.zone)
		change := schedTime(t, ch.at)
		from, to := change.Add(-4*time.Hour), change.Add(4*time.Hour)
		for _, expr := range []string{"30 2 * * *", "0 * * * *", "*/20 * * * *", "0 3 * * *", "30 1 * * *", "*/7 * * * *", "0,30 1-3 * * *"} {
			name := ch.zone + " " + ch.at + " " + expr
			s := mustSchedule(t, expr, loc, from)
			// The truth, by brute force over every minute.
			var want []time.Time
			var shown time.Time // the highest reading shown so far
			for at := from.Add(-2 * time.Hour); !at.After(to); at = at.Add(time.Minute) {
				l := at.In(loc)
				r := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
				first := r.After(shown)
				if first {
					shown = r
				}
				if due, err := gronx.New().IsDue(expr, r); err != nil {
					t.Fatalf("%s: IsDue: %v", name, err)
				} else if due && first && !at.Before(from) {
					want = append(want, at)
				}
			}
			// Next and Latest from every 53 s.
			for at := from; at.Before(to.Add(-3 * time.Hour)); at = at.Add(53 * time.Second) {
				var wantNext, wantLatest time.Time
				for _, w := range want {
					if !w.After(at) {
						wantLatest = w
					} else if wantNext.IsZero() {
						wantNext = w
					}
				}
				if n, err := s.Next(at); wantNext.IsZero() {
					if err != nil || !n.After(to) {
						t.Fatalf("%s: Next(%s) = %s, %v; want nothing before %s", name, at.Format(time.RFC3339), n.UTC().Format(time.RFC3339), err, to.Format(time.RFC3339))
					}
				} else if err != nil || !n.Equal(wantNext) {
					t.Fatalf("%s: Next(%s) = %s, %v; want %s", name, at.Format(time.RFC3339), n.UTC().Format(time.RFC3339), err, wantNext.Format(time.RFC3339))
				}
				if wantLatest.IsZero() {
					continue
				}
				if l, err := s.Latest(at); err != nil || !l.Equal(wantLatest) {
					t.Fatalf("%s: Latest(%s) = %s, %v; want %s", name, at.Format(time.RFC3339), l.UTC().Format(time.RFC3339), err, wantLatest.Format(time.RFC3339))
				}
			}
		}
	}
}

func TestEveryScheduleAligned(t *testing.T) {
	s := mustSchedule(t, "@every 30s", time.UTC, schedRef)
	const every = 30 * time.Second
	zones := []*time.Location{time.UTC, schedLoc(t, "Asia/Kolkata"), schedLoc(t, "America/New_York"), time.FixedZone("odd", 7*3600+13*60+17)}
	onGrid := func(x time.Time) bool { return x.UnixNano()%int64(every) == 0 }
	check := func(at time.Time) {
		t.Helper()
		n, err := s.Next(at)
		if err != nil || !onGrid(n) || !n.After(at) || n.Sub(at) > every {
			t.Fatalf("Next(%s) = %s, %v: want the next multiple of 30s since the epoch", at.Format(time.RFC3339Nano), n.Format(time.RFC3339Nano), err)
		}
		l, err := s.Latest(at)
		if err != nil || !onGrid(l) || l.After(at) || at.Sub(l) >= every {
			t.Fatalf("Latest(%s) = %s, %v: want the last multiple of 30s since the epoch", at.Format(time.RFC3339Nano), l.Format(time.RFC3339Nano), err)
		}
		if onGrid(at) != l.Equal(at) {
			t.Fatalf("Latest(%s) = %s: a time on the grid is its own Latest, and only then", at.Format(time.RFC3339Nano), l.Format(time.RFC3339Nano))
		}
		if nl, _ := s.Next(l); !nl.Equal(n) || (!onGrid(at) && !nl.After(at)) {
			t.Fatalf("Next(Latest(%s)) = %s; want %s, after it", at.Format(time.RFC3339Nano), nl.Format(time.RFC3339Nano), n.Format(time.RFC3339Nano))
		}
		for _, z := range zones {
			if n2, _ := s.Next(at.In(z)); !n2.Equal(n) {
				t.Fatalf("Next(%s) in %s = %s; want %s, the same in every zone", at.Format(time.RFC3339Nano), z, n2.Format(time.RFC3339Nano), n.Format(time.RFC3339Nano))
			}
		}
	}
	for d := -95 * time.Second; d <= 95*time.Second; d += 250 * time.Millisecond {
		check(schedRef.Add(d))
		check(schedRef.Add(d + 123456789*time.Nanosecond))
	}
	check(time.Unix(0, 0))
	check(time.Unix(0, 1))
	check(time.Unix(-1, 0))
	check(time.Unix(1800000000, 0))
	// A time read from the clock (with a monotonic reading) too.
	check(time.Now())

	// Exact values: the epoch itself is on the grid.
	if n, _ := s.Next(time.Unix(0, 0)); !n.Equal(time.Unix(30, 0)) {
		t.Errorf("Next(epoch) = %s; want epoch + 30s", n.UTC().Format(time.RFC3339))
	}
	if n, _ := s.Next(schedRef.Add(time.Nanosecond)); !n.Equal(schedTime(t, "2026-01-15T10:21:00Z")) {
		t.Errorf("Next(10:20:30.000000001) = %s; want 10:21:00", n.UTC().Format(time.RFC3339Nano))
	}
	// Durations that do not divide a day are counted from the epoch too.
	s7 := mustSchedule(t, "@every 7s", time.UTC, schedRef)
	for at := schedRef; at.Before(schedRef.Add(time.Minute)); at = at.Add(time.Second) {
		n, _ := s7.Next(at)
		if n.Unix()%7 != 0 || !n.After(at) || n.Sub(at) > 7*time.Second {
			t.Fatalf("@every 7s: Next(%s) = %s (Unix %d): not the next multiple of 7s since the epoch", at.Format(time.RFC3339), n.Format(time.RFC3339), n.Unix())
		}
	}
}
