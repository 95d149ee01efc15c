//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcpWire is "hostcore mcp" driven line by line, past the SDK client, as a
// hand-written or broken client would.
func mcpWire(t *testing.T, extra ...string) (h *host, ws, data string) {
	t.Helper()
	bin := buildBinary(t)
	ws, data = newWorkspace(t)
	h = startHost(t, bin, append([]string{"mcp", "--workspace", ws, "--data-dir", data, "--permission-mode", "auto"}, extra...)...)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	h.next(t, `{"id":1}`)
	h.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h, ws, data
}

func mcpCall(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// SIGTERM cancels a running command at once, and hostcore exits 0 with
// the call audited as aborted; before, the SDK waited for the command to
// end by itself (up to its 300 s timeout). SIGHUP does the same (before,
// it killed hostcore on the spot, with no audit row).
func TestMCPSIGTERMCancelsRunningCalls(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			skipIfIgnored(t, sig)
			h, ws, data := mcpWire(t)
			m := fmt.Sprint(700000 + time.Now().UnixNano()%100000)
			h.send(t, mcpCall(2, "Bash", map[string]any{"command": "sleep " + m}))
			deadline := time.Now().Add(10 * time.Second)
			for len(withMarker(m)) == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			start := time.Now()
			h.cmd.Process.Signal(sig)
			if code := h.wait(t); code != 0 {
				t.Fatalf("exit %d after %v", code, sig)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("exit took %v after %v, want < 3s", took, sig)
			}
			if left := withMarker(m); len(left) > 0 {
				exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
				t.Fatalf("the command survived: %v", left)
			}
			rows := auditOf(t, ws, data)
			if len(rows) != 1 || rows[0].ErrorCode != "TOOL_ABORTED" {
				t.Fatalf("audit: %+v", rows)
			}
		})
	}
}

// A process that leaves its session with a fresh environment and kills
// its reaper is caught in MCP mode too: hostcore is the subreaper there as
// well.
func TestMCPEscapeeOfAKilledReaperDies(t *testing.T) {
	h, _, _ := mcpWire(t)
	m := fmt.Sprint(600000 + time.Now().UnixNano()%100000)
	h.send(t, mcpCall(2, "Bash", map[string]any{"command": "setsid env -i /bin/sleep " + m + " </dev/null >/dev/null 2>&1 & sleep 0.3; kill -9 $PPID; sleep 1"}))
	h.next(t, `{"id":2}`)
	time.Sleep(300 * time.Millisecond)
	if left := withMarker(m); len(left) > 0 {
		exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
		t.Fatalf("the escapee survived: %v", left)
	}
}

// Without --data-dir each workspace gets a database of its own, so two
// projects' servers run at once; before, the second waited 10 s on the
// first's lock and exited 1.
func TestMCPServersOfTwoWorkspacesRunAtOnce(t *testing.T) {
	bin := buildBinary(t)
	xdg := t.TempDir()
	var hosts []*host
	for i := range 2 {
		ws, _ := newWorkspace(t)
		cmd := []string{"mcp", "--workspace", ws}
		h := startHostEnv(t, bin, []string{"XDG_DATA_HOME=" + xdg, "HOSTCORE_DATA_DIR="}, cmd...)
		h.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
		if got := h.next(t, `{"id":1}`); !strings.Contains(got, `"result"`) {
			t.Fatalf("server %d: %s", i, got)
		}
		hosts = append(hosts, h)
	}
	if dbs, _ := filepath.Glob(filepath.Join(xdg, "hostcore", "mcp", "*", "hostcore.db")); len(dbs) != 2 {
		t.Fatalf("databases: %v", dbs)
	}
}

// Pipelined mutations apply in the order they were sent, as in the native
// mode: each tools/call is registered as its line is read, though the SDK
// runs the handlers on goroutines of their own (before, 1 of 40 files
// ended with an earlier Write's content). A tools/call the SDK refuses
// itself (an unknown tool) does not hold up the ones after it.
func TestMCPPipelinedWritesApplyInOrder(t *testing.T) {
	h, ws, _ := mcpWire(t)
	id := 100
	for round := range 20 {
		name := fmt.Sprintf("f%d.txt", round)
		var lines []string
		for v := range 5 {
			lines = append(lines, mcpCall(id+v, "Write", map[string]any{"path": name, "content": fmt.Sprint(v)}))
		}
		lines = append(lines[:2], append([]string{mcpCall(id+5, "NoSuchTool", map[string]any{})}, lines[2:]...)...)
		h.send(t, strings.Join(lines, "\n"))
		for v := range 6 {
			h.next(t, fmt.Sprintf(`{"id":%d}`, id+v))
		}
		if got, _ := os.ReadFile(filepath.Join(ws, name)); string(got) != "4" {
			t.Fatalf("round %d: %s holds %q after Writes 0..4 sent in order", round, name, got)
		}
		id += 10
	}
}

// Calls piped in right before stdin closes were aborted without an audit
// row when their handlers never started (a newcomer's review: a Write had
// its row, a Bash none). Each call whose line was read is audited.
func TestMCPCallsReadBeforeEOFAreAudited(t *testing.T) {
	for round := range 5 {
		h, _, data := mcpWire(t)
		h.send(t, mcpCall(2, "Write", map[string]any{"path": "w.txt", "content": "x"})+"\n"+
			mcpCall(3, "Bash", map[string]any{"command": "sleep 2; echo done > bash.txt"}))
		h.stdin.Close()
		h.wait(t)
		bin := buildBinary(t)
		h2 := startHost(t, bin, "--data-dir", data)
		rows := rpcClient{t, h2}.call(1, "audit.query", map[string]any{})["rows"].([]any)
		tools := map[string]int{}
		for _, r := range rows {
			row := r.(map[string]any)
			tools[row["toolName"].(string)]++
			// Aborted before anything was decided is not a policy's refusal.
			if row["errorCode"] == "TOOL_ABORTED" && row["decision"] == "policy-deny" {
				t.Errorf("round %d: %s aborted, audited as policy-deny", round, row["toolName"])
			}
		}
		if tools["Write"] != 1 || tools["Bash"] != 1 {
			t.Fatalf("round %d: audit rows by tool %v (want one Write, one Bash)", round, tools)
		}
	}
}

// A signal during the wind-down after the client vanished still stops
// hostcore in order: the command's tree is killed, its call audited, exit
// 0. Before, noticing the vanished client handed SIGTERM, SIGINT and
// SIGHUP back to their default, and the signal killed hostcore on the spot
// with the call unaudited (found by review).
func TestMCPSignalAfterTheClientVanishedStillStopsInOrder(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			skipIfIgnored(t, sig)
			bin := buildBinary(t)
			ws, data := newWorkspace(t)
			cmd := exec.Command(bin, "mcp", "--workspace", ws, "--data-dir", data, "--permission-mode", "auto", "--log-level", "debug")
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			in, _ := cmd.StdinPipe()
			outR, _ := cmd.StdoutPipe()
			var stderr syncWriter
			stderr.w = &bytes.Buffer{}
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			out := bufio.NewReader(outR)
			fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
			out.ReadString('\n')
			fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			// The command ignores TERM: its kill takes the 1 s grace, the
			// window the signal arrives in.
			m := fmt.Sprint(710000 + time.Now().UnixNano()%100000)
			fmt.Fprintln(in, mcpCall(2, "Bash", map[string]any{"command": "trap '' TERM; sleep " + m}))
			for deadline := time.Now().Add(10 * time.Second); len(withMarker(m)) == 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			outR.Close()                       // the client vanishes
			time.Sleep(400 * time.Millisecond) // noticed within 200 ms
			cmd.Process.Signal(sig)
			if code := waitCmd(t, cmd, 10*time.Second); code != 0 {
				t.Fatalf("exit %d after the client vanished and %v\n%s", code, sig, stderr.String())
			}
			if left := withMarker(m); len(left) > 0 {
				exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
				t.Fatalf("the command survived: %v", left)
			}
			if rows := auditOf(t, ws, data); len(rows) != 1 || rows[0].ErrorCode != "TOOL_ABORTED" {
				t.Fatalf("audit: %+v", rows)
			}
		})
	}
}
