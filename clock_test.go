package main

// The boot-clock alarm against the real kernel: a child process (this test
// binary, testChildMain) arms it and is stopped by the test; the kernel
// must still deliver.

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ballot/internal/bootclock"
)

// alarmChildMain is a child mode of testChildMain:
//
//	alarm-kill DELAY  arm a SIGKILL alarm DELAY ahead, print "armed AT" (boot
//	                  ns), wait to be killed
//	alarm-cont DELAY  arm a SIGKILL alarm and disarm it, arm a SIGCONT alarm
//	                  DELAY ahead, print "armed AT"; print "continued" once
//	                  the SIGCONT is handled, exit 0
func alarmChildMain(mode string, args []string) int {
	d, _ := time.ParseDuration(args[0])
	at := bootNow() + bootTime(d)
	arm := func(sig syscall.Signal, at bootTime) *bootclock.Alarm {
		a, err := bootclock.NewAlarm(sig)
		if err == nil {
			err = a.Set(at)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "alarm:", err)
			os.Exit(3)
		}
		return a
	}
	switch mode {
	case "alarm-kill":
		arm(syscall.SIGKILL, at)
		fmt.Printf("armed %d\n", at)
		time.Sleep(time.Hour)
	case "alarm-cont":
		conts := make(chan os.Signal, 1)
		signal.Notify(conts, syscall.SIGCONT)
		// Disarmed: did it still fire, it would kill the child before the
		// SIGCONT alarm.
		k := arm(syscall.SIGKILL, at-bootTime(d/2))
		if k.Set(0) != nil {
			return 3
		}
		arm(syscall.SIGCONT, at)
		fmt.Printf("armed %d\n", at)
		<-conts
		fmt.Println("continued")
		if k.Close() != nil {
			return 3
		}
		return 0
	}
	return 3
}

// alarmChild starts the test binary in an alarm mode and reads when its
// alarm fires.
func alarmChild(t *testing.T, mode string, delay time.Duration) (pid int, at bootTime, out *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.StartProcess(selfExe(), []string{selfExe(), delay.String()}, &os.ProcAttr{
		Env:   append(os.Environ(), "BALLOT_TEST_CHILD="+mode, "GORACE=atexit_sleep_ms=0"),
		Files: []*os.File{nil, w, os.Stderr},
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(); _, _ = p.Wait(); r.Close() })
	out = bufio.NewReader(r)
	line, err := out.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "armed" {
		t.Fatalf("the child did not arm its alarm: %q, %v", line, err)
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return p.Pid, bootTime(n), out
}

// stopChild stops pid and waits until it is seen stopped, which must be
// before at, or the test would prove nothing.
func stopChild(t *testing.T, pid int, at bootTime) {
	t.Helper()
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
		t.Fatalf("the child did not stop: %v, status %#x", err, ws)
	}
	if now := bootNow(); now >= at {
		t.Fatalf("the child was stopped only %s after its alarm: too late to tell anything", time.Duration(now-at))
	}
}

// alarmBound is how long after its moment an alarm may take to show: the
// kernel fires within microseconds, this covers a loaded test machine.
func alarmBound(delay time.Duration) time.Duration { return 10 * delay }

// waitChild waits for pid's next state change (options: what to report
// besides its end), at most until at + alarmBound.
func waitChild(t *testing.T, pid int, options int, at bootTime, delay time.Duration) syscall.WaitStatus {
	t.Helper()
	got := make(chan syscall.WaitStatus, 1)
	go func() {
		var ws syscall.WaitStatus
		for {
			// EINTR: the runtime's own signals (preemption) interrupt it.
			if _, err := syscall.Wait4(pid, &ws, options, nil); err != syscall.EINTR {
				break
			}
		}
		got <- ws
	}()
	limit := time.NewTimer(time.Duration(at-bootNow()) + alarmBound(delay))
	defer limit.Stop()
	select {
	case ws := <-got:
		return ws
	case <-limit.C:
		t.Fatalf("nothing happened to the child %s after its alarm", alarmBound(delay))
		return 0
	}
}

// TestBootAlarmKillsAStoppedProcess: a SIGKILL alarm ends its process
// although the process is stopped (the keeper's backstop).
func TestBootAlarmKillsAStoppedProcess(t *testing.T) {
	const delay = 300 * time.Millisecond
	pid, at, _ := alarmChild(t, "alarm-kill", delay)
	stopChild(t, pid, at)
	ws := waitChild(t, pid, 0, at, delay)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with status %#x, not by SIGKILL", ws)
	}
	if now := bootNow(); now < at {
		t.Fatalf("the child was killed %s before its alarm", time.Duration(at-now))
	}
	t.Logf("killed while stopped, seen %s after the alarm's moment", time.Duration(bootNow()-at).Round(time.Microsecond))
}

// TestBootAlarmContinuesAStoppedProcess: a SIGCONT alarm resumes its
// stopped process, whose handler then runs (the keeper's wake-up); a
// disarmed alarm does not fire.
func TestBootAlarmContinuesAStoppedProcess(t *testing.T) {
	const delay = 300 * time.Millisecond
	pid, at, out := alarmChild(t, "alarm-cont", delay)
	stopChild(t, pid, at)
	// A child that was continued and has exited by the time the test
	// waits (a loaded machine) is reported exited: it was stopped, so it
	// was continued; its handler's line below says by the alarm.
	ws := waitChild(t, pid, syscall.WCONTINUED, at, delay)
	exited := ws.Exited() && ws.ExitStatus() == 0
	if !ws.Continued() && !exited {
		t.Fatalf("the child was not continued: status %#x", ws)
	}
	if now := bootNow(); now < at {
		t.Fatalf("the child was continued %s before its alarm", time.Duration(at-now))
	}
	t.Logf("continued, seen %s after the alarm's moment", time.Duration(bootNow()-at).Round(time.Microsecond))
	if line, err := out.ReadString('\n'); line != "continued\n" {
		t.Fatalf("the child's SIGCONT handler did not run: %q, %v", line, err)
	}
	if exited {
		return
	}
	if ws := waitChild(t, pid, 0, at, delay); !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("the child ended with status %#x, want exit 0", ws)
	}
}

// TestWallStepped: the wall clock's own steps, either way, wake the cron
// leaders; its drift between two looks (NTP's slewing, well under a
// second in wallCheckEvery) does not.
func TestWallStepped(t *testing.T) {
	for _, tc := range []struct {
		wall, mono time.Duration
		stepped    bool
	}{
		{5 * time.Second, 5 * time.Second, false},
		{5*time.Second + 2*time.Millisecond, 5 * time.Second, false}, // slewed
		{5*time.Second + time.Second, 5 * time.Second, false},        // at the limit
		{65 * time.Second, 5 * time.Second, true},                    // stepped forward
		{-55 * time.Second, 5 * time.Second, true},                   // stepped back
		{3605 * time.Second, 5 * time.Second, true},                  // resumed after an hour's suspend
	} {
		if got := wallStepped(tc.wall, tc.mono); got != tc.stepped {
			t.Errorf("wall %v, monotonic %v: stepped %v, want %v", tc.wall, tc.mono, got, tc.stepped)
		}
	}
}
