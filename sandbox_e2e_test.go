//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hostcore/sandbox/landlock"
)

// These tests drive the command sandbox (handlers/sandbox.go) through the
// built binary: the run-time spellings of a secret's path that pass the
// text denylist meet the kernel's refusal, writes land only in the roots,
// builds still work, and leaving the sandbox always asks a person.

const fakeKey = "FAKE-PRIVATE-KEY-5e1f"

// secretSpellings name ~/.ssh/id_rsa only when the shell runs: the
// denylist reads the text and lets them pass; the kernel does not.
var secretSpellings = []string{
	`d=.ssh; cat ~/$d/id_rsa`,
	"cat `printf %s ~/.ss`h/id_rsa",
	`printf -v p '%s/.ssh/id_rsa' ~; cat $p`,
}

func needLandlock(t *testing.T) {
	t.Helper()
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip("no Landlock here: " + reason)
	}
}

// fakeHome is a home with a private key in it, for hostcore's HOME.
func fakeHome(t *testing.T, dir string) string {
	t.Helper()
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte(fakeKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// sandboxHost starts hostcore with a fake home (HOME, and the go build
// cache under its .cache) and session "s" in the given permission mode.
// The home, the workspace and the data dir lie under /var/tmp, as a
// user's lie outside /tmp: a denied path inside /tmp (the key, the data
// dir) would carve /tmp into its entries, where no new file can be made.
func sandboxHost(t *testing.T, mode string, env ...string) (h *host, c rpcClient, ws, data, home string) {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "hostcore-sandbox-")
	if err != nil {
		base = t.TempDir()
		env = append(env, "TMPDIR="+filepath.Join(base, "tmp"))
		os.MkdirAll(filepath.Join(base, "tmp"), 0o700)
	} else {
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	base, _ = filepath.EvalSymlinks(base)
	home = fakeHome(t, base)
	ws, data = filepath.Join(base, "ws"), filepath.Join(base, "data")
	os.MkdirAll(ws, 0o755)
	env = append([]string{"HOME=" + home, "GOCACHE=" + filepath.Join(home, ".cache", "go-build"), "GOTOOLCHAIN=local", "GOFLAGS="}, env...)
	h = startHostEnv(t, buildBinary(t), env, "--data-dir", data)
	c = rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": mode})
	return h, c, ws, data, home
}

// runBash runs command as call id and returns its result.
func runBashCall(c rpcClient, id int, callID, command string, extra map[string]any) map[string]any {
	args := map[string]any{"command": command}
	for k, v := range extra {
		args[k] = v
	}
	c.send(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": callID, "toolName": "Bash", "args": args})
	return c.result(id)
}

func resultText(r map[string]any) string {
	b, _ := json.Marshal(r["content"])
	return string(b)
}

func TestSandboxRefusesRunTimeSpellingsOfASecret(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	_, c, _, _, _ := sandboxHost(t, "auto")
	for i, cmd := range secretSpellings {
		r := runBashCall(c, 10+i, fmt.Sprint("spell", i), cmd, nil)
		d := details(r)
		if r["ok"] != false || strings.Contains(fmt.Sprint(r), fakeKey) || d["sandbox"] != "landlock" {
			t.Errorf("%s: the key was read, or the call did not run sandboxed: %v", cmd, r)
		}
		if !strings.Contains(resultText(r), "may write only in") {
			t.Errorf("%s: no sandbox hint in the result: %s", cmd, resultText(r))
		}
	}
}

func TestSandboxWritesOnlyInItsRoots(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	_, c, ws, data, _ := sandboxHost(t, "auto")
	outside, err := os.MkdirTemp("/var/tmp", "hostcore-outside-")
	if err != nil {
		t.Skip("no /var/tmp: ", err)
	}
	defer os.RemoveAll(outside)

	r := runBashCall(c, 10, "out", "echo x > "+outside+"/f", nil)
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil || r["ok"] != false {
		t.Errorf("a write outside the roots ran: %v", r)
	}
	r = runBashCall(c, 11, "in", `echo x > ws.txt && echo y > "$PI_SCRATCH_DIR/s.txt" && echo z > "${TMPDIR:-/tmp}/hostcore-sb-$$" && rm "${TMPDIR:-/tmp}/hostcore-sb-$$"`, nil)
	if b, _ := os.ReadFile(filepath.Join(ws, "ws.txt")); r["ok"] != true || string(b) != "x\n" {
		t.Errorf("a write in the workspace, the scratch and /tmp failed: %v", r)
	}
	// hostcore's own data (the audit database) is closed to commands.
	r = runBashCall(c, 12, "db", "cat "+filepath.Join(data, "hostcore.db")+" > /dev/null", nil)
	if r["ok"] != false {
		t.Errorf("a command read the audit database: %v", r)
	}
}

func TestSandboxedGoBuildWorks(t *testing.T) {
	needLandlock(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	t.Parallel()
	// The fake home's .cache is the test's own cache dir (a link to the
	// parent of its GOCACHE, resolved as the sandbox resolves it): a
	// cold cache would compile the runtime, a minute and more on CI.
	var env []string
	if out, err := exec.Command(goBin, "env", "GOCACHE").Output(); err == nil && filepath.IsAbs(strings.TrimSpace(string(out))) {
		real := strings.TrimSpace(string(out))
		cacheParent := t.TempDir()
		link := filepath.Join(cacheParent, "cache")
		os.Symlink(filepath.Dir(real), link)
		env = []string{"XDG_CACHE_HOME=" + link, "GOCACHE=" + filepath.Join(link, filepath.Base(real))}
	}
	h, c, ws, _, _ := sandboxHost(t, "auto", env...)
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"built in the sandbox\") }\n"), 0o644)
	c.send(10, "tools.execute", map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": "build", "toolName": "Bash",
		"args": map[string]any{"command": goBin + " build -o app . && ./app", "timeout": 300}})
	// A cold build cache compiles the runtime: longer than c.result waits.
	var msg struct{ Result map[string]any }
	json.Unmarshal([]byte(h.nextWithin(t, 290*time.Second, `{"id":10}`)), &msg)
	r := msg.Result
	if r["ok"] != true || !strings.Contains(fmt.Sprint(details(r)["stderr"]), "built in the sandbox") {
		t.Fatalf("go build in the workspace failed under the sandbox: %v", r)
	}
}

func TestSandboxReadOnlySettings(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	h, c, ws, _, _ := sandboxHost(t, "auto")
	c.call(2, "settings.update", map[string]any{"commandSandbox": "read-only"})
	r := runBashCall(c, 10, "ro", "echo x > ro.txt", nil)
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil || r["ok"] != false {
		t.Errorf("read-only: a workspace write ran: %v", r)
	}
	if r := runBashCall(c, 11, "ro-scratch", `echo x > "$PI_SCRATCH_DIR/s.txt"`, nil); r["ok"] != true {
		t.Errorf("read-only: a scratch write failed: %v", r)
	}

	// planBashReadOnly: a Plan session's Bash cannot write the
	// workspace, an Agent session's can.
	c.call(3, "settings.update", map[string]any{"commandSandbox": nil, "planBashReadOnly": true})
	c.call(4, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": ws, "mode": "plan", "permissionMode": "auto"})
	c.send(12, "tools.execute", map[string]any{"sessionId": "p", "turnId": "turn", "toolCallId": "plan", "toolName": "Bash", "args": map[string]any{"command": "echo x > plan.txt"}})
	r = c.result(12)
	if _, err := os.Stat(filepath.Join(ws, "plan.txt")); err == nil || r["ok"] != false {
		t.Errorf("planBashReadOnly: a Plan session wrote the workspace: %v", r)
	}
	if r := runBashCall(c, 13, "agent", "echo x > agent.txt", nil); r["ok"] != true {
		t.Errorf("planBashReadOnly: an Agent session could not write the workspace: %v", r)
	}
	_ = h
}

func TestSandboxOffAlwaysAsksAndIsNotRemembered(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	h, c, _, _, _ := sandboxHost(t, "auto")
	off := map[string]any{"sandbox": "off", "justification": "needs the ssh agent's key"}
	for i := range 2 {
		c.send(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": fmt.Sprint("off", i), "toolName": "Bash",
			"args": map[string]any{"command": secretSpellings[0], "sandbox": "off", "justification": off["justification"]}})
		card, id := cardOf(t, h)
		preview := fmt.Sprint(card["preview"])
		if !strings.Contains(preview, "OUTSIDE the sandbox") || !strings.Contains(preview, "needs the ssh agent's key") {
			t.Fatalf("the card does not say the command runs outside the sandbox: %q", preview)
		}
		h.answer(t, id, "allow-session") // acts as allow-once
		r := c.result(10 + i)
		if r["ok"] != true || details(r)["sandbox"] != "off" || !strings.Contains(fmt.Sprint(details(r)["stdout"]), fakeKey) {
			t.Fatalf("approved unsandboxed call: %v", r)
		}
	}
	// In auto mode a sandboxed command still asks no one.
	if r := runBashCall(c, 20, "plain", "true", nil); r["ok"] != true || details(r)["sandbox"] != "landlock" {
		t.Fatalf("plain call: %v", r)
	}
	// Without a justification the call is refused before any card.
	c.send(21, "tools.execute", map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": "nojust", "toolName": "Bash", "args": map[string]any{"command": "true", "sandbox": "off"}})
	if r := c.result(21); r["errorCode"] != "INVALID_ARGUMENT" {
		t.Fatalf("sandbox off without a justification: %v", r)
	}
}

func TestSandboxOffIgnoresASessionGrantForBash(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	h, c, _, _, _ := sandboxHost(t, "ask")
	c.send(10, "tools.execute", bashParams("g", "true", 0))
	h.answer(t, h.nextCard(t), "allow-session")
	if r := c.result(10); r["ok"] != true {
		t.Fatalf("granted call: %v", r)
	}
	if r := runBashCall(c, 11, "g2", "true", nil); r["ok"] != true {
		t.Fatalf("the session grant did not hold: %v", r)
	}
	c.send(12, "tools.execute", map[string]any{"sessionId": "s", "turnId": "turn", "toolCallId": "off", "toolName": "Bash",
		"args": map[string]any{"command": "true", "sandbox": "off", "justification": "test"}})
	h.answer(t, h.nextCard(t), "deny")
	if r := c.result(12); r["ok"] != false || r["decision"] != "deny" {
		t.Fatalf("denied unsandboxed call: %v", r)
	}
}

func TestSandboxSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	h, c, _, _, _ := sandboxHost(t, "auto")
	init := c.call(2, "initialize", map[string]any{"protocolVersion": "1"})
	sb, _ := init["sandbox"].(map[string]any)
	if abi, _ := landlock.Available(); abi > 0 && (sb["kind"] != "landlock" || sb["abi"] != float64(abi)) || abi == 0 && sb["kind"] != "none" {
		t.Errorf("initialize sandbox: %v", sb)
	}
	got := c.call(3, "settings.get", map[string]any{})
	if got["commandSandbox"] != "workspace-write" || got["planBashReadOnly"] != false || fmt.Sprint(got["sandboxWritableDirs"]) != "[]" || got["sandbox"] == nil {
		t.Errorf("default settings: %v", got)
	}
	got = c.call(4, "settings.update", map[string]any{"commandSandbox": "off", "sandboxWritableDirs": []string{"/opt/cache"}, "planBashReadOnly": true})
	if got["commandSandbox"] != "off" || got["planBashReadOnly"] != true || fmt.Sprint(got["sandboxWritableDirs"]) != "[/opt/cache]" {
		t.Errorf("updated settings: %v", got)
	}
	if r := runBashCall(c, 5, "off", "true", nil); details(r)["sandbox"] != "off" {
		t.Errorf("commandSandbox off: %v", r)
	}
	for i, bad := range []map[string]any{{"commandSandbox": "strict"}, {"sandboxWritableDirs": []string{"rel"}}, {"sandboxWritableDirs": []string{"/"}}, {"planBashReadOnly": "yes"}} {
		c.send(6+i, "settings.update", bad)
		if _, code := c.answerOf(6 + i); code == "" {
			t.Errorf("settings.update %v was accepted", bad)
		}
	}
	got = c.call(20, "settings.update", map[string]any{"commandSandbox": nil, "sandboxWritableDirs": nil, "planBashReadOnly": nil})
	if got["commandSandbox"] != "workspace-write" || got["planBashReadOnly"] != false || fmt.Sprint(got["sandboxWritableDirs"]) != "[]" {
		t.Errorf("settings reset: %v", got)
	}
	_ = h
}

// TestNoLandlockSaysSo: on a kernel without Landlock (simulated with
// HOSTCORE_LANDLOCK=off) commands run as without a sandbox, and hostcore
// says so everywhere: initialize, settings, the card, the details.
func TestNoLandlockSaysSo(t *testing.T) {
	t.Parallel()
	h, c, _, _, _ := sandboxHost(t, "ask", "HOSTCORE_LANDLOCK=off")
	init := c.call(2, "initialize", map[string]any{"protocolVersion": "1"})
	if sb, _ := init["sandbox"].(map[string]any); sb["kind"] != "none" || !strings.Contains(fmt.Sprint(sb["reason"]), "HOSTCORE_LANDLOCK") {
		t.Errorf("initialize sandbox: %v", sb)
	}
	if sb, _ := c.call(3, "settings.get", map[string]any{})["sandbox"].(map[string]any); sb["kind"] != "none" {
		t.Errorf("settings sandbox: %v", sb)
	}
	c.send(10, "tools.execute", bashParams("none", "echo hi", 0))
	card, id := cardOf(t, h)
	if !strings.Contains(fmt.Sprint(card["preview"]), "no command sandbox") {
		t.Errorf("the card does not say there is no sandbox: %v", card["preview"])
	}
	h.answer(t, id, "allow-once")
	r := c.result(10)
	if d := details(r); r["ok"] != true || d["sandbox"] != "none" || !strings.Contains(fmt.Sprint(d["sandboxReason"]), "HOSTCORE_LANDLOCK") {
		t.Errorf("details: %v", r)
	}
}

// sandboxNobodyHost starts hostcore as nobody (uid 65534), as a desktop user
// runs it, from a copy of the binary in a dir made under parent, with a
// fake home there and session "s" (auto) on the workspace dir/ws. It
// skips where it cannot drop to nobody.
func sandboxNobodyHost(t *testing.T, parent string) (c rpcClient, dir, ws string) {
	t.Helper()
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to drop to nobody (uid 65534)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to drop to nobody")
	}
	dir, err = os.MkdirTemp(parent, "hostcore-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "hostcore")
	src, err := os.ReadFile(buildBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, src, 0o755)
	home := fakeHome(t, dir)
	ws, data := filepath.Join(dir, "ws"), filepath.Join(dir, "data")
	os.MkdirAll(ws, 0o755)
	for _, p := range []string{dir, home, filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh", "id_rsa"), ws} {
		os.Chown(p, 65534, 65534)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "--data-dir", data)
	cmd.Env = append(os.Environ(), "HOME="+home, "USER=nobody", "HOSTCORE_LOG_LEVEL=debug")
	h := startCmd(t, cmd)
	c = rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	if r := runBashCall(c, 9, "whoami", "id -u", nil); !strings.Contains(fmt.Sprint(details(r)["stdout"]), "65534") {
		t.Fatalf("not running as nobody: %v", r)
	}
	return c, dir, ws
}

// TestSandboxAsAnOrdinaryUser runs hostcore as nobody, as a desktop user
// runs it: the secret stays closed to the run-time spellings, a write
// outside the roots fails, and Plan made read-only writes nothing.
func TestSandboxAsAnOrdinaryUser(t *testing.T) {
	t.Parallel()
	// Not under /tmp: in workspace-write mode commands may write in the
	// temp dirs, so an "outside" dir there would be writable.
	c, dir, ws := sandboxNobodyHost(t, "/var/tmp")
	for i, cmd := range secretSpellings {
		r := runBashCall(c, 10+i, fmt.Sprint("spell", i), cmd, nil)
		if r["ok"] != false || strings.Contains(fmt.Sprint(r), fakeKey) || details(r)["sandbox"] != "landlock" {
			t.Errorf("as nobody, %s: %v", cmd, r)
		}
	}
	if r := runBashCall(c, 20, "ws", "echo x > ws.txt", nil); r["ok"] != true {
		t.Errorf("as nobody, a workspace write failed: %v", r)
	}
	// Outside the roots, in a dir nobody may write without the sandbox.
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(outside, 0o755)
	os.Chown(outside, 65534, 65534)
	if r := runBashCall(c, 21, "out", "echo x > "+filepath.Join(outside, "x.txt"), nil); r["ok"] != false {
		t.Errorf("as nobody, a write outside the roots ran: %v", r)
	}
	// Plan made read-only refuses a workspace write.
	c.call(22, "settings.update", map[string]any{"planBashReadOnly": true})
	c.call(23, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": ws, "mode": "plan", "permissionMode": "auto"})
	c.send(24, "tools.execute", map[string]any{"sessionId": "p", "turnId": "turn", "toolCallId": "plan", "toolName": "Bash", "args": map[string]any{"command": "echo x > plan.txt"}})
	if r := c.result(24); r["ok"] != false {
		t.Errorf("as nobody, a read-only Plan session wrote the workspace: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "plan.txt")); err == nil {
		t.Error("as nobody, plan.txt was written by a read-only Plan session")
	}
}

// TestSandboxReadOnlyWorkspaceUnderTmp: read-only modes do not grant the
// shared temp dirs, so a workspace under /tmp stays read-only (in the
// read-only setting and in a read-only Plan session), while a command
// that writes where $TMPDIR says (mktemp) still works: TMPDIR is the
// command's own dir in the session's scratch.
func TestSandboxReadOnlyWorkspaceUnderTmp(t *testing.T) {
	t.Parallel()
	c, _, ws := sandboxNobodyHost(t, "/tmp")
	tmpUse := `t=$(mktemp) && echo hi > "$t" && cat "$t" && echo "$TMPDIR"`
	if r := runBashCall(c, 10, "ww", "echo x > ws.txt", nil); r["ok"] != true {
		t.Fatalf("workspace-write: a workspace write failed: %v", r)
	}
	c.call(11, "settings.update", map[string]any{"commandSandbox": "read-only"})
	if r := runBashCall(c, 12, "ro", "echo x > ro.txt", nil); r["ok"] != false {
		t.Errorf("read-only, workspace under /tmp: the write ran: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
		t.Error("read-only, workspace under /tmp: ro.txt was written")
	}
	if r := runBashCall(c, 13, "ro-tmp", "echo x > /tmp/hostcore-ro-$$", nil); r["ok"] != false {
		t.Errorf("read-only: a write to the shared /tmp ran: %v", r)
	}
	r := runBashCall(c, 14, "ro-mktemp", tmpUse, nil)
	if out := fmt.Sprint(details(r)["stdout"]); r["ok"] != true || !strings.Contains(out, "hi") || !strings.Contains(out, "/scratch/") {
		t.Errorf("read-only: a tool writing to $TMPDIR failed, or TMPDIR is not in the scratch: %v", r)
	}
	// A read-only Plan session refuses the workspace write the same way.
	c.call(15, "settings.update", map[string]any{"commandSandbox": nil, "planBashReadOnly": true})
	c.call(16, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": ws, "mode": "plan", "permissionMode": "auto"})
	for i, cmd := range []string{"echo x > plan.txt", tmpUse} {
		c.send(17+i, "tools.execute", map[string]any{"sessionId": "p", "turnId": "turn", "toolCallId": fmt.Sprint("plan", i), "toolName": "Bash", "args": map[string]any{"command": cmd}})
		if r, want := c.result(17+i), i == 1; r["ok"] != want {
			t.Errorf("read-only Plan, %s: ok=%v, want %v: %v", cmd, r["ok"], want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "plan.txt")); err == nil {
		t.Error("read-only Plan, workspace under /tmp: plan.txt was written")
	}
}

// A credentials file a login writes while a background command runs
// stays closed to that command: the directory a missing denied path
// would appear in (~/.config for ~/.config/gcloud) is not granted whole.
func TestSandboxDeniedPathCreatedWhileACommandRuns(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	_, c, ws, _, home := sandboxHost(t, "auto")
	if err := os.MkdirAll(filepath.Join(home, ".config", "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	shellID := bgStart(t, c, 10, "bg", `echo started; for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done
cat "$(printf '%s/.config/g%s/credentials.db' "$HOME" cloud)" || echo REFUSED; echo done`)
	bgUntil(t, c, 11, shellID, "started")
	if err := os.MkdirAll(filepath.Join(home, ".config", "gcloud"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "gcloud", "credentials.db"), []byte(fakeKey), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reads := bgUntil(t, c, 100, shellID, "done")
	if out := fmt.Sprint(reads); strings.Contains(out, fakeKey) || !strings.Contains(out, "REFUSED") || !strings.Contains(out, "Permission denied") {
		t.Errorf("the running command read the credentials made after it started: %v", reads)
	}
}
