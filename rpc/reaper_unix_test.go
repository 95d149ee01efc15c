//go:build unix

package rpc

import "hostcore/sandbox/process"

// maybeRunReaper runs the per-command reaper when this test binary was
// started as one.
func maybeRunReaper() { process.MaybeRunReaper() }
