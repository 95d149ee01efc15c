package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests drive Bash through the built binary, as the sidecar does, and
// prove each way a command can end leaves no process behind: every command
// sleeps on a unique duration (the marker), and /proc is searched for it
// afterwards.

// sleepMarker is a unique sleep duration, e.g. "4821.337".
func sleepMarker() string {
	return fmt.Sprintf("%d.%03d", 3000+rand.IntN(6000), rand.IntN(1000))
}

// survivors lists the pids whose command line is "sleep <m>".
func survivors(m string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && strings.Contains(string(b), "sleep\x00"+m) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// assertNoSurvivors allows a moment for a tree whose killer is the reaper
// noticing hostcore's death; in every other case the tree is already gone
// when the call answers, and the first look finds nothing.
func assertNoSurvivors(t *testing.T, m string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := survivors(m)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived (sleep %s): pids %v", m, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func bashParams(callID, command string, timeout int) map[string]any {
	args := map[string]any{"command": command}
	if timeout > 0 {
		args["timeout"] = timeout
	}
	return map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": callID, "toolName": "Bash", "args": args}
}

// waitOutput waits for a tool.output chunk containing text.
func waitOutput(t *testing.T, h *host, text string) {
	t.Helper()
	for {
		line := h.next(t, `{"method":"tool.output"}`)
		if strings.Contains(line, text) {
			return
		}
	}
}

func details(r map[string]any) map[string]any {
	d, _ := r["details"].(map[string]any)
	return d
}

func TestBashEndsKillTheWholeTree(t *testing.T) {
	// Descendants that leave the process group or session, or are
	// orphaned to init, must die too.
	escapes := func(m string) string {
		return fmt.Sprintf("setsid sleep %[1]s & nohup sleep %[1]s >/dev/null 2>&1 & (sleep %[1]s &); (set -m; sleep %[1]s &); ", m)
	}
	cases := []struct {
		name    string
		command func(m string) string
		timeout int
		end     func(t *testing.T, h *host, c rpcClient) // after "ready" was printed; nil = wait for the timeout
		want    string                                   // errorCode
	}{
		{name: "timeout", command: func(m string) string { return "echo ready; sleep " + m }, timeout: 5, want: "TOOL_TIMEOUT"},
		{name: "term ignored dies by kill", command: func(m string) string { return "trap '' TERM; echo ready; sleep " + m }, timeout: 5, want: "TOOL_TIMEOUT"},
		{name: "escapes on timeout", command: func(m string) string { return escapes(m) + "echo ready; sleep " + m }, timeout: 5, want: "TOOL_TIMEOUT"},
		{name: "tools.cancel", command: func(m string) string { return escapes(m) + "echo ready; sleep " + m },
			end: func(t *testing.T, h *host, c rpcClient) {
				if r := c.call(50, "tools.cancel", map[string]any{"sessionId": "s", "toolCallId": "b"}); r["cancelled"] != true {
					t.Fatalf("tools.cancel: %v", r)
				}
			}, want: "TOOL_ABORTED"},
		{name: "turn.cancel", command: func(m string) string { return "echo ready; sleep " + m },
			end: func(t *testing.T, h *host, c rpcClient) {
				if r := c.call(50, "turn.cancel", map[string]any{"sessionId": "s", "turnId": "turn"}); r["cancelled"] != float64(1) {
					t.Fatalf("turn.cancel: %v", r)
				}
			}, want: "TOOL_ABORTED"},
		{name: "session.delete", command: func(m string) string { return "echo ready; sleep " + m },
			end: func(t *testing.T, h *host, c rpcClient) {
				c.call(50, "session.delete", map[string]any{"sessionId": "s"})
			}, want: "TOOL_ABORTED"},
		{name: "shutdown", command: func(m string) string { return escapes(m) + "echo ready; sleep " + m },
			end: func(t *testing.T, h *host, c rpcClient) { c.send(50, "shutdown", map[string]any{}) }, want: "TOOL_ABORTED"},
		{name: "SIGTERM", command: func(m string) string { return escapes(m) + "echo ready; sleep " + m },
			end: func(t *testing.T, h *host, c rpcClient) { h.cmd.Process.Signal(syscall.SIGTERM) }, want: "TOOL_ABORTED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := sleepMarker()
			h, c, _, _ := sessionHost(t, "auto", nil)
			start := time.Now()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 60
			}
			c.send(10, "tools.execute", bashParams("b", tc.command(m), timeout))
			waitOutput(t, h, "ready")
			ended := time.Now()
			if tc.end != nil {
				tc.end(t, h, c)
			}
			r := c.result(10)
			took := time.Since(start)
			if r["errorCode"] != tc.want {
				t.Fatalf("result %v, want %s", r, tc.want)
			}
			if d := details(r); !strings.Contains(fmt.Sprint(d["stdout"]), "ready") {
				t.Errorf("partial output lost: %v", d)
			}
			assertNoSurvivors(t, m, 0)
			if strings.Contains(tc.command(m), "trap '' TERM") && took < time.Duration(tc.timeout)*time.Second+time.Second {
				t.Errorf("answered after %v: a command ignoring TERM cannot have died before the 1 s grace", took)
			}
			if tc.name == "shutdown" || tc.name == "SIGTERM" {
				if code := h.wait(t); code != 0 {
					t.Fatalf("exit %d", code)
				}
				if d := time.Since(ended); d > 3*time.Second {
					t.Errorf("exit %v after the shutdown, want < 3s", d)
				}
			}
			t.Logf("answered %v after the start, %v after the end", took, time.Since(ended))
		})
	}
}

func TestBashShellExitKillsBackgroundAtOnce(t *testing.T) {
	t.Parallel()
	m := sleepMarker()
	h, c, _, _ := sessionHost(t, "auto", nil)
	start := time.Now()
	r := c.call(10, "tools.execute", bashParams("b", fmt.Sprintf("sleep %[1]s & setsid sleep %[1]s & (sleep %[1]s &); echo done", m), 60))
	took := time.Since(start)
	if r["ok"] != true || details(r)["stdout"] != "done\n" {
		t.Fatalf("result %v", r)
	}
	if took > 5*time.Second {
		t.Errorf("the call waited %v on children holding its pipes", took)
	}
	assertNoSurvivors(t, m, 0)
	h.stdin.Close()
	h.wait(t)
}

// Commands run as normal tasks, as in the user's terminal; with
// --batch-commands (or HOSTCORE_BATCH_COMMANDS=1) as batch tasks, with
// what they start (Linux: policy 3 in field 41 of /proc/PID/stat), in
// the warm reaper's path too: see process.forkBatch.
func TestBashBatchCommandsWhenAsked(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("SCHED_BATCH is Linux's")
	}
	if f := statFields(os.Getpid()); len(f) < 39 || f[38] != "0" {
		t.Skip("the tests do not run as normal tasks here: nothing to compare with")
	}
	const policies = `set -- $(cat /proc/$$/stat); printf '%s ' "${41}"; sh -c 'set -- $(cat /proc/$$/stat); printf "%s" "${41}"'`
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{nil, "0 0"},
		{[]string{"--batch-commands"}, "3 3"},
		{[]string{"--batch-commands", "--warm-reaper"}, "3 3"},
	} {
		h, cl, _, _ := sessionHost(t, "auto", nil, c.flags...)
		for i := range 2 { // the second through the warm reaper, if any
			r := cl.call(10+i, "tools.execute", bashParams(fmt.Sprint("b", i), policies, 60))
			if r["ok"] != true || details(r)["stdout"] != c.want {
				t.Fatalf("%v: policies of the command and its child: %v (want %q)", c.flags, r, c.want)
			}
		}
		h.stdin.Close()
		h.wait(t)
	}
}

// TestBashHostcoreSIGKILLedTakesItsCommands: the command tree dies with
// hostcore, and so does the idle reaper it kept (--warm-reaper) for the
// next command.
func TestBashHostcoreSIGKILLedTakesItsCommands(t *testing.T) {
	t.Parallel()
	m := sleepMarker()
	h, c, _, _ := sessionHost(t, "auto", nil, "--warm-reaper")
	if r := c.call(9, "tools.execute", bashParams("a", "true", 60)); r["ok"] != true {
		t.Fatalf("true: %v", r)
	}
	idle := settled(t, h.cmd.Process.Pid, wantIdle)
	// Under a terminal the command starts a reaper of its own: the idle
	// one stays idle.
	p := bashParams("b", fmt.Sprintf("setsid sleep %[1]s & (sleep %[1]s &); echo ready; sleep %[1]s", m), 60)
	p["args"].(map[string]any)["tty"] = true
	c.send(10, "tools.execute", p)
	waitOutput(t, h, "ready")
	if len(survivors(m)) == 0 {
		t.Fatal("the command is not running")
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	assertNoSurvivors(t, m, 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !procAlive(idle) {
			return
		}
	}
	t.Errorf("the idle reaper %d outlived hostcore's SIGKILL", idle)
}

func TestBashClientVanishingKillsCommands(t *testing.T) {
	t.Parallel()
	m := sleepMarker()
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	cmd := exec.Command(bin, "--data-dir", data)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	send := func(v any) {
		b, _ := json.Marshal(v)
		stdin.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.create", "params": map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"}})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools.execute", "params": bashParams("b", fmt.Sprintf("setsid sleep %[1]s & echo ready; sleep %[1]s", m), 60)})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "ready") {
	}
	// The client stops reading and keeps stdin open.
	stdout.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
		t.Fatal("hostcore did not notice its client vanished")
	}
	assertNoSurvivors(t, m, 0)
}

func TestBashStdinEOFLetsRunningCommandFinish(t *testing.T) {
	t.Parallel()
	h, c, _, _ := sessionHost(t, "auto", nil)
	c.send(10, "tools.execute", bashParams("b", "echo started; sleep 1; echo finished", 0))
	waitOutput(t, h, "started")
	h.stdin.Close()
	r := c.result(10)
	if r["ok"] != true || details(r)["stdout"] != "started\nfinished\n" {
		t.Fatalf("result after stdin EOF: %v", r)
	}
	if code := h.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestBashOutputPrecedesResponse reads hostcore's lines in the order they
// were written: every tool.output of the call comes before its response,
// in seq order per stream, and the chunks add up to the streams.
func TestBashOutputPrecedesResponse(t *testing.T) {
	t.Parallel()
	h, c, _, _ := sessionHost(t, "auto", nil)
	cmd := `for i in $(seq 1 200); do echo "out $i"; echo "err $i" >&2; done; head -c 300000 /dev/zero | tr '\0' x; printf 'é%.0s' $(seq 1 20000) >&2`
	c.send(10, "tools.execute", bashParams("b", cmd, 0))
	streams := map[string]*strings.Builder{"stdout": {}, "stderr": {}}
	next := map[string]float64{"stdout": 0, "stderr": 0}
	for line := range h.lines {
		var msg struct {
			ID     *int           `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
			Result map[string]any `json:"result"`
		}
		json.Unmarshal([]byte(line), &msg)
		if msg.Method == "tool.output" {
			s := msg.Params["stream"].(string)
			if msg.Params["seq"] != next[s] {
				t.Fatalf("%s seq %v, want %v", s, msg.Params["seq"], next[s])
			}
			next[s]++
			streams[s].WriteString(msg.Params["data"].(string))
			continue
		}
		if msg.ID == nil || *msg.ID != 10 {
			continue
		}
		d := details(msg.Result)
		if msg.Result["ok"] != true || d["stdoutBytes"] != float64(streams["stdout"].Len()) || d["stderrBytes"] != float64(streams["stderr"].Len()) {
			t.Fatalf("streamed %d+%d bytes before the response; result %v", streams["stdout"].Len(), streams["stderr"].Len(), d)
		}
		if d["stdoutTruncated"] != true || d["stderrTruncated"] != true {
			t.Fatalf("want both streams truncated: %v", d)
		}
		full, _ := os.ReadFile(d["stdoutFile"].(string))
		if string(full) != streams["stdout"].String() {
			t.Fatalf("spill file (%d bytes) differs from the streamed stdout (%d bytes)", len(full), streams["stdout"].Len())
		}
		return
	}
	t.Fatal("no response")
}

// TestBashCommandsTheKernelCannotPass: a command over 128 KiB used to fail
// to start ("argument list too long", TOOL_FAILED) and one with a NUL byte
// likewise; both are bad arguments, said before any card, with a way out.
func TestBashCommandsTheKernelCannotPass(t *testing.T) {
	t.Parallel()
	h, c, _, _ := sessionHost(t, "auto", nil)
	r := c.call(10, "tools.execute", bashParams("long", "echo "+strings.Repeat("x", 128<<10), 0))
	if r["errorCode"] != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(r["message"]), "PI_SCRATCH_DIR") {
		t.Errorf("128 KiB command: %v", r)
	}
	r = c.call(11, "tools.execute", bashParams("nul", "echo a\x00b", 0))
	if r["errorCode"] != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(r["message"]), "NUL") {
		t.Errorf("command with NUL: %v", r)
	}
	r = c.call(12, "tools.execute", bashParams("ok", "echo "+strings.Repeat("x", 100<<10)+" | wc -c", 0))
	if r["ok"] != true || details(r)["stdout"] != "102401\n" {
		t.Errorf("100 KiB command: %v", details(r))
	}
	h.stdin.Close()
	h.wait(t)
}

// TestBashReaperFrozenByATracer: a command that ptraces its reaper (root
// may, and so may any process where the kernel lets one trace a
// non-descendant) froze it: SIGKILL left it unreapable while the tracer
// lived, and the call was never answered (a review waited 631 s). The
// reaper is now non-dumpable (a tracer without CAP_SYS_PTRACE is refused)
// and Run answers within its bounds, killing the tree, the tracer with it.
func TestBashReaperFrozenByATracer(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	_, _, c, _, _ := hostWithSession(t, "auto")
	m := fmt.Sprint(700000 + time.Now().UnixNano()%100000)
	tracer := `import ctypes, os, signal, sys, time, subprocess
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen(["sleep", "` + m + `"])
seen = set()
for _ in range(3):
    for t in os.listdir("/proc/%d/task" % pid):
        if int(t) not in seen:
            libc.ptrace(0x4206, int(t), None, None)
            libc.ptrace(0x4207, int(t), None, None)
            seen.add(int(t))
time.sleep(100)`
	c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "b", "toolName": "Bash",
		"args": map[string]any{"command": "python3 -c '" + tracer + "' $PPID & sleep 0.5; echo shell-done; sleep 5", "timeout": 1}})
	answered := make(chan map[string]any, 1)
	sent := time.Now()
	go func() { answered <- c.result(2) }()
	select {
	case r := <-answered:
		t.Logf("answered after %v: %v", time.Since(sent).Round(time.Millisecond), r["errorCode"])
		if r["ok"] == true {
			t.Logf("the tracer did not freeze the reaper here: %v", r["content"])
		}
	case <-time.After(40 * time.Second):
		exec.Command("pkill", "-9", "-f", "0x4206").Run()
		exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
		t.Fatal("the call was not answered: the frozen reaper held it")
	}
	time.Sleep(200 * time.Millisecond)
	if out, _ := exec.Command("pgrep", "-f", "sleep "+m).Output(); len(out) > 0 {
		exec.Command("pkill", "-9", "-f", "0x4206").Run()
		exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
		t.Fatalf("survivors: %s", out)
	}
}

// TestEscapeeOfAKilledReaperWithAFreshEnvironmentDies: a command that
// starts a process in a new session with a fresh environment (so neither
// the session kill nor the run's mark finds it) and then kills its own
// reaper left that process to init, alive (a review's finding). hostcore is
// now the subreaper above its reapers: the orphan becomes its child, and is
// killed and reaped.
func TestEscapeeOfAKilledReaperWithAFreshEnvironmentDies(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	m := fmt.Sprint(800000 + time.Now().UnixNano()%100000)
	for i, cmd := range []string{
		"setsid env -i /bin/sleep " + m + " </dev/null >/dev/null 2>&1 & sleep 0.2; kill -9 $PPID",
		"setsid bash -c 'exec -c sleep " + m + "' </dev/null >/dev/null 2>&1 & sleep 0.2; kill -USR1 $PPID",
	} {
		c.call(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("k", i), "toolName": "Bash",
			"args": map[string]any{"command": cmd}})
		time.Sleep(300 * time.Millisecond)
		if out, _ := exec.Command("pgrep", "-f", "sleep "+m).Output(); len(out) > 0 {
			exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
			t.Fatalf("%s: the escapee survived: %s", cmd, out)
		}
	}
}

// TestManyEscapeesOfAKilledReaper: 400 orphans of a killed reaper are
// killed in one scan of /proc per pass, not one per orphan (a review saw
// 1,000 take 45 s and stall an unrelated call of the same hostcore), and
// concurrent sweeps never act on the same pids.
func TestManyEscapeesOfAKilledReaper(t *testing.T) {
	_, h, c, _, _ := hostWithSession(t, "auto")
	m := fmt.Sprint(900000 + time.Now().UnixNano()%90000)
	cmd := "for i in $(seq 400); do setsid env -i /bin/sleep " + m + " </dev/null >/dev/null 2>&1 & done; sleep 1; echo killing; kill -9 $PPID"
	c.send(20, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "many", "toolName": "Bash", "args": map[string]any{"command": cmd}})
	h.next(t, `{"method":"tool.output","params":{"toolCallId":"many","data":"killing\n"}}`)
	killed := time.Now()
	c.send(21, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "other", "toolName": "Bash", "args": map[string]any{"command": "echo other"}})
	c.result(20)
	sweep := time.Since(killed)
	c.result(21)
	other := time.Since(killed)
	time.Sleep(300 * time.Millisecond)
	if out, _ := exec.Command("pgrep", "-f", "sleep "+m).Output(); len(out) > 0 {
		exec.Command("pkill", "-9", "-f", "sleep "+m).Run()
		t.Fatalf("escapees survived: %d", len(strings.Fields(string(out))))
	}
	t.Logf("answered %v after the kill; an unrelated call %v", sweep.Round(time.Millisecond), other.Round(time.Millisecond))
	if sweep > 5*time.Second || other > 5*time.Second {
		t.Fatalf("the sweep took too long: the call %v after the kill, an unrelated call %v", sweep, other)
	}
}

// TestSlowClientGetsTheWholeOutput: a client that stops reading for a while
// gets every byte of a command that ended meanwhile. The drain deadline
// (2 s after the command ends, for writers that escaped the tree) used to
// pass while hostcore waited on the client, and what was still in the
// command's pipe, about 750 KB of 2 MB, was dropped without a word.
func TestSlowClientGetsTheWholeOutput(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	cmd := exec.Command(bin, "--data-dir", data)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"session.create","params":{"sessionId":"s","workspaceRoot":%q,"permissionMode":"auto"}}`+"\n", ws)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools.execute","params":{"sessionId":"s","turnId":"t","toolCallId":"b","toolName":"Bash","args":{"command":"seq 1 300000"}}}`)
	time.Sleep(4 * time.Second) // not reading: the command ends, hostcore waits on us
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     int
			Result struct {
				Details struct{ StdoutBytes int64 }
			}
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == 2 {
			if want := int64(1988895); m.Result.Details.StdoutBytes != want {
				t.Fatalf("stdoutBytes %d, want %d: the end of the output was lost", m.Result.Details.StdoutBytes, want)
			}
			return
		}
	}
	t.Fatal("no answer")
}

// TestBashLoginPathSurvivesAProfileThatSetsPath: the login shell's PATH
// (design section 5) reaches the command even when bash -lc's profile
// files set PATH outright, as Debian's and Ubuntu's /etc/profile do (an
// acceptance check: the probed entries were lost there), and the command
// sees no BASH_ENV of hostcore's. So in both modes of bashShellMode: the
// snapshot's restore script and the login mode's BASH_ENV script are
// written again when a command deletes them.
func TestBashLoginPathSurvivesAProfileThatSetsPath(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("PATH=/profile/bin:/usr/bin:/bin\nexport PATH\n"), 0o600)
	shell := filepath.Join(dir, "loginshell")
	os.WriteFile(shell, []byte("#!/bin/sh\nprintf %s \"/probed/bin:$PATH\"\n"), 0o755)
	h := startHostEnv(t, bin, []string{"HOME=" + home, "SHELL=" + shell}, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	const show = `printf '%s|%s|%s' "$PATH" "${BASH_ENV-unset}" "${HOSTCORE_COMMAND_PATH-unset}"`
	for m, mode := range []struct{ name, script string }{
		{"login", "bash_env.sh"},
		{"snapshot", "shell-snapshot-*.sh"},
	} {
		c.call(2+m, "settings.update", map[string]any{"bashShellMode": mode.name})
		for i := range 2 {
			if i == 1 {
				// A script deleted (by whoever can: the command sandbox
				// keeps commands from it) is not lost for the next command.
				files, _ := filepath.Glob(filepath.Join(data, mode.script))
				for _, f := range files {
					os.Remove(f)
				}
			}
			id := 10 + 10*m + i
			c.send(id, "tools.execute", bashParams(fmt.Sprint("b", m, i), show, 0))
			r := c.result(id)
			out, _ := details(r)["stdout"].(string)
			if r["ok"] != true || !strings.HasPrefix(out, "/probed/bin:") || !strings.Contains(out, ":/profile/bin") || !strings.HasSuffix(out, "|unset|unset") {
				t.Fatalf("%s: command %d saw %q (%v)", mode.name, i+1, out, r["message"])
			}
		}
		// A sandboxed command cannot delete it.
		id := 12 + 10*m
		c.send(id, "tools.execute", bashParams(fmt.Sprint("rm", m), `rm "$PI_SCRATCH_DIR"/../../`+mode.script, 0))
		if r := c.result(id); details(r)["sandbox"] == "landlock" && r["ok"] != false {
			t.Fatalf("%s: a sandboxed command deleted the script: %v", mode.name, r)
		}
		id = 13 + 10*m
		c.send(id, "tools.execute", bashParams(fmt.Sprint("b", m, 3), `printf %s "$PATH"`, 0))
		if out, _ := details(c.result(id))["stdout"].(string); !strings.HasPrefix(out, "/probed/bin:") {
			t.Fatalf("%s: after the script was deleted the command saw %q", mode.name, out)
		}
	}
}
