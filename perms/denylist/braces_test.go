package denylist

import (
	"fmt"
	"testing"
)

func TestZeroPadded(t *testing.T) {
	for _, c := range []struct {
		n int64
		w int
	}{{5, 3}, {-5, 3}, {-5, 0}, {123, 2}, {0, 2}, {-123, 5}, {7, 1}} {
		if got, want := zeroPadded(c.n, c.w), fmt.Sprintf("%0*d", c.w, c.n); got != want {
			t.Errorf("zeroPadded(%d, %d) = %q, want %q", c.n, c.w, got, want)
		}
	}
}
