//go:build linux || darwin

package process

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const floodBytes = 200_000_000

// BenchmarkFlood compares 200 MB of output through Run (reaper, bounded
// capture) with the same bytes piped to /dev/null by a plain shell.
func BenchmarkFlood(b *testing.B) {
	b.Run("Run", func(b *testing.B) {
		b.SetBytes(floodBytes)
		for b.Loop() {
			res, err := Run(context.Background(), bash("head -c "+strconv.Itoa(floodBytes)+" /dev/zero"))
			if err != nil || res.Stdout.Total != floodBytes {
				b.Fatalf("total %d: %v", res.Stdout.Total, err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(floodBytes)
		for b.Loop() {
			if err := exec.Command("/bin/bash", "-c", "head -c "+strconv.Itoa(floodBytes)+" /dev/zero | cat > /dev/null").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFirstChunk measures how long after the command wrote its first
// bytes OnOutput received them (the command keeps running, so it is the
// 50 ms coalescing timer, not EOF, that delivers them). Reported as
// first-chunk-ms; it should stay at or a little above 50.
func BenchmarkFirstChunk(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		got := make(chan time.Duration, 1)
		s := bash(`echo "$EPOCHREALTIME"; sleep 0.2`)
		s.OnOutput = eachChunk(func(_ string, seq int, data []byte) {
			now := time.Now()
			if seq != 0 {
				return
			}
			sec, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
			if err != nil {
				b.Errorf("bad timestamp %q", data)
				return
			}
			got <- now.Sub(time.UnixMicro(int64(sec * 1e6)))
		})
		if _, err := Run(context.Background(), s); err != nil {
			b.Fatal(err)
		}
		total += <-got
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "first-chunk-ms")
}
