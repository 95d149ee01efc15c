package search

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestGrepHugeFileInBoundedMemory searches a file far larger than any
// buffer (HOSTCORE_BIG_GREP=1 makes it 1 GiB; 160 MiB by default, with a
// 40 MiB single line) and checks the heap never grows with the file.
func TestGrepHugeFileInBoundedMemory(t *testing.T) {
	size := int64(160 << 20)
	if os.Getenv("HOSTCORE_BIG_GREP") == "1" {
		size = 1 << 30
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("abcdefghij", 12) + "\n")
	chunk := bytes.Repeat(line, (1<<20)/len(line))
	f.Write([]byte("first line with NEEDLE\n"))
	f.Write(bytes.Repeat([]byte("x"), 40<<20)) // one 40 MiB line
	f.Write([]byte("\n"))
	var written int64
	for written < size {
		n, err := f.Write(chunk)
		if err != nil {
			t.Skipf("no room for a big file: %v", err)
		}
		written += int64(n)
	}
	f.Write([]byte("last line with NEEDLE\n"))
	f.Close()

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	res, err := Grep(t.Context(), GrepOptions{Root: dir, Pattern: "NEEDLE", Mode: ModeContent})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matches != 2 || !strings.Contains(res.Text, "huge.log:1:first line") || !strings.Contains(res.Text, "last line with NEEDLE") {
		t.Fatalf("matches %d, text %q", res.Matches, res.Text)
	}
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("file %d MiB, heap grew at most %d MiB", (size+40<<20)>>20, grew>>20)
	if grew > 64<<20 {
		t.Fatalf("heap grew by %d MiB searching a %d MiB file: memory is not bounded", grew>>20, size>>20)
	}
}
