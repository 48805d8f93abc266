// Package gronx is github.com/adhocore/gronx v1.20.4 (MIT, Jitendra
// Adhikari: LICENSE beside this file), the cron expression parser behind
// run cron's --schedule, copied so that the binary does not link regexp:
// upstream's three package-level regexp.MustCompile vars linked regexp,
// regexp/syntax and their Unicode tables (250 KB) into every build.
//
// Kept: gronx.go, next.go, prev.go, checker.go, validator.go and their
// tests (gronx_test.go, next_test.go, prev_test.go, checker_test.go), as
// upstream has them except for the changes below. Left out: batch.go
// (BatchDue) and its test, cmd/ and pkg/tasker, which ballot does not use.
//
// Changed, each to an exact equivalent of the regexp it replaces
// (regexp_test.go compares them on random strings):
//   - gronx.go: the exported var SpaceRe (`\s+`) is gone; normalize calls
//     collapseSpace for SpaceRe.ReplaceAllString(expr, " ").
//   - gronx.go: yearRe (`\d{4}`) is gone; Segments calls hasYear for
//     yearRe.MatchString.
//   - next.go: dashRe (`/.*$`) is gone; isUnreachableYear calls cutStep
//     for dashRe.ReplaceAllString(offset, "").
//   - doc.go (this comment), regexp_test.go and race_test.go/norace_test.go
//     are new.
package gronx
