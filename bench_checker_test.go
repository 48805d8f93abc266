//go:build bench

package main

// The benchmark's command: a small static program, built once per run
// from the source below (standard library only, CGO_ENABLED=0, stripped),
// so that a figure measures ballot, not the start of the 10+ MB test
// binary (6–8 ms from its exec to its first instruction under load: more
// than ballot's own share of a clean handover). It speaks the same modes
// as the test binary's child (bench_test.go), chosen by BALLOT_BENCH_CHILD.
// BENCH_CHECKER=test-binary runs the test binary instead, as the figures
// before 2026-11-24's handover work did, for comparison.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const benchCheckerSource = `package main

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	now := time.Now() // the command's first instruction, for the benchmark
	a := os.Args[1:]
	if len(a) < 2 {
		os.Stderr.WriteString("usage: checker FILE HOLD|wait|EVERY\n")
		os.Exit(3)
	}
	f, err := os.OpenFile(a[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	id, token := os.Getenv("BALLOT_CANDIDATE_ID"), os.Getenv("BALLOT_FENCING_TOKEN")
	if id == "" {
		id = "-"
	}
	if token == "" {
		token = "0"
	}
	pid := strconv.Itoa(os.Getpid())
	// one write(2) on an O_APPEND file: lines never interleave
	stamp := func(kind string, t time.Time) {
		f.WriteString(kind + " " + id + " " + token + " " + pid + " " + strconv.FormatInt(t.UnixNano(), 10) + "\n")
	}
	if mode := os.Getenv("BALLOT_BENCH_CHILD"); mode == "tick" || mode == "stubborn" {
		if mode == "stubborn" { // deaf to SIGTERM, as many daemons are
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		}
		every, err := time.ParseDuration(a[1])
		if err != nil {
			os.Exit(3)
		}
		for {
			stamp("TICK", time.Now())
			time.Sleep(every)
		}
	}
	stamp("START", now)
	if a[1] == "wait" {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
		if s := <-sigs; s == syscall.SIGUSR1 {
			stamp("EXIT", time.Now())
		} else {
			stamp("TERM", time.Now())
		}
		return
	}
	hold, err := time.ParseDuration(a[1])
	if err != nil {
		os.Exit(3)
	}
	time.Sleep(hold)
	stamp("EXIT", time.Now())
}
`

// benchChecker builds the checker into dir and returns its path; the test
// binary itself with BENCH_CHECKER=test-binary.
func benchChecker(t *testing.T, dir string) string {
	if os.Getenv("BENCH_CHECKER") == "test-binary" {
		t.Log("command: the test binary itself (BENCH_CHECKER=test-binary)")
		return selfExe()
	}
	src := filepath.Join(dir, "checker")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(benchCheckerSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module checker\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "checker-bin")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the benchmark's checker: %v\n%s", err, out)
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("command: a static checker of %d KiB (bench_checker_test.go)", fi.Size()>>10)
	}
	return bin
}
