package process

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestSpillFileWritesEverything writes a stream in pieces of every size
// across several blocks and a ragged end, through the cache and (where the
// filesystem takes it) direct, and reads back exactly what was written.
func TestSpillFileWritesEverything(t *testing.T) {
	t.Parallel()
	dirs := map[string]string{"tempdir": t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "spill")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			dirs["tmpfs"] = d
		}
	}
	for name, dir := range dirs {
		for _, size := range []int{0, 1, spillAlign - 1, spillBlock, spillBlock + 1, 3*spillBlock + 12345, (spillBlocks + 3) * spillBlock} {
			want := make([]byte, size)
			rng := rand.New(rand.NewPCG(uint64(size), 7))
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			s, err := createSpill(dir, "stdout", SpillMax)
			if err != nil {
				t.Fatal(err)
			}
			for rest := want; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(300<<10))
				s.Write(rest[:n])
				rest = rest[n:]
			}
			if err := s.Close(); err != nil {
				t.Fatalf("%s %d: Close: %v", name, size, err)
			}
			got, err := os.ReadFile(s.path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s %d: read back %d bytes (%v), want %d", name, size, len(got), err, size)
			}
		}
	}
}

// TestSpillFileWriteError: a file that cannot be written is reported by
// Close (the capture then drops it), and Write neither blocks nor panics.
func TestSpillFileWriteError(t *testing.T) {
	t.Parallel()
	s, err := createSpill(t.TempDir(), "stdout", SpillMax)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing has reached the writer yet, so the file can be swapped for
	// one that refuses writes.
	ro, err := os.Open(s.path)
	if err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	s.f = ro
	s.Write(make([]byte, (spillBlocks+2)*spillBlock))
	if err := s.Close(); err == nil {
		t.Error("Close: no error for a file that was never written")
	}
}

// TestSpillFileIsBounded: a flood until the timeout used to write tens of
// gigabytes to the user's disk; the file keeps the first max bytes, says
// it was cut, and the capture's record and text say so too.
func TestSpillFileIsBounded(t *testing.T) {
	t.Parallel()
	const max = spillBlock + 100
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*spillBlock/16)
	s, err := createSpill(t.TempDir(), "stdout", max)
	if err != nil {
		t.Fatal(err)
	}
	for rest := want; len(rest) > 0; rest = rest[min(len(rest), 70000):] {
		s.Write(rest[:min(len(rest), 70000)])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(s.path)
	if !bytes.Equal(got, want[:max]) || !s.cut {
		t.Fatalf("file has %d bytes (cut %v), want the first %d", len(got), s.cut, max)
	}

	c := newCapture("stdout", 100, 100, t.TempDir())
	c.spillMax = max
	c.write(want)
	st := c.finish()
	if !st.FullCut || st.Total != int64(len(want)) || !strings.Contains(st.Text(), "[first ") {
		t.Fatalf("record %+v, text %q", st, st.Text()[len(st.Text())-80:])
	}
	if fi, err := os.Stat(st.FullPath); err != nil || fi.Size() != max {
		t.Fatalf("spill file: %v, %v", fi, err)
	}
}
