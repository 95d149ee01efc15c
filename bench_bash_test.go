package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bash through the built binary, as a client sees it (issue 4 targets):
//
//	go test -run '^$' -bench BenchmarkBash -benchtime 3x .
//
// The flood is printable text: tool.output carries it as JSON strings, and
// NUL bytes would cost six bytes each on the wire.

const floodCommand = "yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c "

// startBashBench starts hostcore with session "s" (auto) for the Bash
// benchmarks.
func startBashBench(b *testing.B) *benchHost {
	b.Helper()
	dir := b.TempDir()
	h := startBench(b, buildBinary(b), dir+"/data")
	os.Mkdir(dir+"/ws", 0o755)
	h.call(b, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": dir + "/ws", "permissionMode": "auto"})
	return h
}

// bash runs one command through tools.execute in session "s", handing
// each notification line (tool.output) to onOutput, and returns the
// result.
func (h *benchHost) bash(b testing.TB, command string, onOutput func(line []byte)) map[string]any {
	h.onNote = onOutput
	defer func() { h.onNote = nil }()
	return h.exec(b, "s", "Bash", map[string]any{"command": command, "timeout": 300})
}

// BenchmarkBashFlood200MB compares 200 MB through Bash, streamed to the
// client as tool.output, with the same command into a plain pipe. Target:
// at most 2x.
func BenchmarkBashFlood200MB(b *testing.B) {
	const n = 200_000_000
	b.Run("hostcore", func(b *testing.B) {
		h := startBashBench(b)
		b.SetBytes(n)
		for b.Loop() {
			r := h.bash(b, floodCommand+strconv.Itoa(n), nil)
			if d := r["details"].(map[string]any); d["stdoutBytes"] != float64(n) {
				b.Fatalf("stdoutBytes %v", d["stdoutBytes"])
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			if err := exec.Command("/bin/bash", "-c", floodCommand+strconv.Itoa(n)+" | cat > /dev/null").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBashFloodRSS reports hostcore's peak RSS (VmHWM) over a 1 GB
// flood streamed to the client. Target: under 100 MiB.
func BenchmarkBashFloodRSS(b *testing.B) {
	const n = 1_000_000_000
	var peak int64
	b.SetBytes(n)
	for b.Loop() {
		b.StopTimer()
		h := startBashBench(b)
		b.StartTimer()
		h.bash(b, floodCommand+strconv.Itoa(n), nil)
		hwm, err := procStatus(h.cmd.Process.Pid, "VmHWM")
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, hwm)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
}

// BenchmarkBashFirstChunk measures from the command writing its first
// bytes to the client reading them as tool.output, while the command keeps
// running (so it is the coalescing timer, not EOF, that sends them).
// Target: within 50 ms.
func BenchmarkBashFirstChunk(b *testing.B) {
	h := startBashBench(b)
	var total, worst time.Duration
	for b.Loop() {
		var got time.Duration
		h.bash(b, `echo "$EPOCHREALTIME"; sleep 0.2`, func(line []byte) {
			now := time.Now()
			if got != 0 {
				return
			}
			var m struct{ Params struct{ Data string } }
			json.Unmarshal(line, &m)
			sec, err := strconv.ParseFloat(strings.TrimSpace(m.Params.Data), 64)
			if err != nil {
				b.Fatalf("bad timestamp %q", m.Params.Data)
			}
			got = now.Sub(time.UnixMicro(int64(sec * 1e6)))
		})
		total += got
		worst = max(worst, got)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "first-chunk-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}
