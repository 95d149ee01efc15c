//go:build unix

package rpc

import "hostcore/sandbox/process/reapertest"

// maybeRunReaper runs the per-command reaper when this test binary was
// started as one, and lets reapers exit at once under -race.
func maybeRunReaper() { reapertest.Prepare() }
