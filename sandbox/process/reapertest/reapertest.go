// Package reapertest prepares a test binary whose tests run commands.
// Each command runs under a reaper that is the running binary
// re-executed, so a test binary must act as the reaper when it was
// started as one, before its tests run.
package reapertest

import (
	"os"

	"hostcore/sandbox/process"
)

// Prepare runs the reaper and exits when this process was started as
// one; otherwise it returns. Under -race every exit sleeps
// atexit_sleep_ms (1 s by default), the reapers' too, which a test of a
// bounded shutdown cannot afford: unless GORACE is set, the reapers
// this binary starts exit at once.
func Prepare() {
	process.MaybeRunReaper()
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}
