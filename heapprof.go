//go:build ballot_pprof

package main

// A profiling build (make build TAGS=ballot_pprof), never the release
// one: with BALLOT_HEAPPROF=DIR set, a ballot records every allocation
// and, on each SIGWINCH, writes its heap profile to
// DIR/heap-PID-SEQ.pprof after two collections, so that `go tool pprof
// -base` of two of them shows what a soak kept (issue 37: a few bytes a
// handover, far below the default sampling of one allocation in 512 KiB).
// SIGWINCH because ballot forwards SIGUSR1 and SIGUSR2 to its command and
// a release build ignores it: the soak benchmark sends it at each
// checkpoint with BENCH_SOAK_HEAPPROF=DIR.

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

func init() {
	dir := os.Getenv("BALLOT_HEAPPROF")
	if dir == "" {
		return
	}
	// Every allocation, unless BALLOT_HEAPPROF_RATE says otherwise (0:
	// Go's default sampling, for measuring RSS without the profile's own
	// memory).
	runtime.MemProfileRate = 1
	if r, err := strconv.Atoi(os.Getenv("BALLOT_HEAPPROF_RATE")); err == nil && r >= 0 {
		if r > 0 {
			runtime.MemProfileRate = r
		} else {
			runtime.MemProfileRate = 512 * 1024
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGWINCH)
	go func() {
		for seq := 1; ; seq++ {
			<-sigs
			runtime.GC()
			runtime.GC()
			// Whole or not at all: the soak waits for the name.
			path := filepath.Join(dir, fmt.Sprintf("heap-%d-%04d.pprof", os.Getpid(), seq))
			if f, err := os.Create(path + ".tmp"); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
				_ = os.Rename(path+".tmp", path)
			}
			// And the goroutines, counted by stack (issue 34: goroutines
			// a job at rest).
			gpath := filepath.Join(dir, fmt.Sprintf("goroutine-%d-%04d.txt", os.Getpid(), seq))
			if f, err := os.Create(gpath + ".tmp"); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
				_ = os.Rename(gpath+".tmp", gpath)
			}
			// And where the process's memory goes, class by class: what
			// RSS is made of (stacks, free spans, metadata), which the heap
			// profile does not say.
			mpath := filepath.Join(dir, fmt.Sprintf("memory-%d-%04d.txt", os.Getpid(), seq))
			if f, err := os.Create(mpath + ".tmp"); err == nil {
				for _, d := range rtmetrics.All() {
					if !strings.HasPrefix(d.Name, "/memory/classes/") && !strings.HasPrefix(d.Name, "/gc/") && d.Name != "/sched/goroutines:goroutines" {
						continue
					}
					s := []rtmetrics.Sample{{Name: d.Name}}
					rtmetrics.Read(s)
					if s[0].Value.Kind() == rtmetrics.KindUint64 {
						fmt.Fprintf(f, "%s %d\n", d.Name, s[0].Value.Uint64())
					}
				}
				f.Close()
				_ = os.Rename(mpath+".tmp", mpath)
			}
		}
	}()
}
