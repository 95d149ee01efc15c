package harden

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSelf: after Self the process is no longer dumpable.
func TestSelf(t *testing.T) {
	if err := Self(); err != nil {
		t.Fatal(err)
	}
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d after Self, want 0", v)
	}
}
