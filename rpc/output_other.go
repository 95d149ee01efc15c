//go:build !unix

package rpc

import (
	"errors"
	"os"
)

// Off Unix stdout stays a blocking file: every write may wait for the
// client, deadlines included, and the read goroutine's answers are
// written as any other (writeLineNow falls back to writeLine).

func nonblockingFd(fd, kind int) int { return -1 }

var errNoNonblocking = errors.New("non-blocking writes are not supported on this platform yet")

func writeNonblocking(fd int, p []byte) (int, error) { return 0, errNoNonblocking }

// PollableOutput returns f: writes to it block.
func PollableOutput(f *os.File) (out *os.File, restore func()) { return f, func() {} }

// WatchOutput does not watch here: a vanished client is noticed at the
// next write.
func WatchOutput(out *os.File, gone func()) (stop func()) { return func() {} }
