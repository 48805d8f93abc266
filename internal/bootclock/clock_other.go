//go:build !linux

package bootclock

// Stand-ins for clock_linux.go, so that ballot compiles on other systems
// (it says there that it runs on Linux only).

import (
	"errors"
	"syscall"
	"time"
)

var clockStart = time.Now()

func Now() Time { return Time(time.Since(clockStart)) }

type Alarm struct{}

func NewAlarm(syscall.Signal) (*Alarm, error) { return nil, errors.ErrUnsupported }

func (*Alarm) Set(Time) error { return errors.ErrUnsupported }
func (*Alarm) Close() error   { return nil }
