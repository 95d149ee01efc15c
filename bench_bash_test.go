package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// bashBench is hostcore on pipes with a client that reads as fast as it can.
type bashBench struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	n     int
}

func startBashBench(b *testing.B) *bashBench {
	b.Helper()
	bin := buildBinary(b)
	dir := b.TempDir()
	ws := dir + "/ws"
	os.Mkdir(ws, 0o755)
	cmd := exec.Command(bin, "--data-dir", dir+"/data", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	h := &bashBench{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	h.send(`{"jsonrpc":"2.0","id":0,"method":"session.create","params":{"sessionId":"s","workspaceRoot":%q,"permissionMode":"auto"}}`, ws)
	h.readUntil(b, 0, nil)
	return h
}

func (h *bashBench) send(format string, a ...any) {
	fmt.Fprintf(h.stdin, format+"\n", a...)
}

// readUntil reads lines until the response to id, handing each
// tool.output line to onOutput, and returns the response.
func (h *bashBench) readUntil(b *testing.B, id int, onOutput func(line []byte)) map[string]any {
	prefix := []byte(fmt.Sprintf(`{"id":%d,`, id))
	var line []byte
	for {
		part, err := h.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line = append(line, part...)
			continue
		}
		if err != nil {
			b.Fatalf("reading hostcore: %v", err)
		}
		if line != nil {
			part = append(line, part...)
			line = nil
		}
		if bytes.HasPrefix(part, prefix) {
			var m struct{ Result map[string]any }
			json.Unmarshal(part, &m)
			return m.Result
		}
		if onOutput != nil && bytes.Contains(part[:min(len(part), 64)], []byte("tool.output")) {
			onOutput(part)
		}
	}
}

// bash runs one command through tools.execute and returns the result.
func (h *bashBench) bash(b *testing.B, command string, onOutput func(line []byte)) map[string]any {
	h.n++
	h.send(`{"jsonrpc":"2.0","id":%d,"method":"tools.execute","params":{"sessionId":"s","turnId":"t","toolCallId":"c%d","toolName":"Bash","args":{"command":%q,"timeout":300}}}`, h.n, h.n, command)
	r := h.readUntil(b, h.n, onOutput)
	if r["ok"] != true {
		b.Fatalf("%s: %v", command, r)
	}
	return r
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
