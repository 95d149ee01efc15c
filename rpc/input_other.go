//go:build !unix

package rpc

import (
	"io"
	"os"
	"time"
)

// Input returns f itself: off Unix stdin is read with f's own Read, with
// neither the spin nor the wait past EAGAIN (not supported on this
// platform yet).
func Input(f *os.File, spin time.Duration) io.Reader { return f }
