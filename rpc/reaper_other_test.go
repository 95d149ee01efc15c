//go:build !unix

package rpc

// maybeRunReaper: Bash runs only on Unix here, so no reaper is started.
func maybeRunReaper() {}
