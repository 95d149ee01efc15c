//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"hostcore/handlers/frontend"
	"hostcore/store"
)

// mcpHost is "hostcore mcp" spawned by the Go SDK's own client.
type mcpHost struct {
	cs     *sdk.ClientSession
	stderr *syncWriter
}

// startMCP spawns the built binary as an MCP server. A nil opts gives a
// client without the elicitation capability.
func startMCP(t *testing.T, opts *sdk.ClientOptions, args ...string) *mcpHost {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"mcp"}, args...)...)
	return connectMCP(t, sdk.NewClient(&sdk.Implementation{Name: "hostcore-test", Version: "1"}, opts), cmd)
}

// connectMCP starts cmd ("hostcore mcp ...") under client.
func connectMCP(t *testing.T, client *sdk.Client, cmd *exec.Cmd) *mcpHost {
	t.Helper()
	stderr := &syncWriter{w: &bytes.Buffer{}}
	cmd.Stderr = stderr
	// As the other end-to-end tests do: the login-shell PATH probe must not
	// run the developer's own rc files.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	h := &mcpHost{cs: cs, stderr: stderr}
	t.Cleanup(func() {
		h.close()
		if t.Failed() {
			t.Logf("hostcore stderr:\n%s", stderr.String())
		}
	})
	return h
}

// close ends the session: stdin closes and the process exits, so the
// audit can be read from the data dir.
func (h *mcpHost) close() { h.cs.Close() }

func (h *mcpHost) call(t *testing.T, ctx context.Context, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := h.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, r *sdk.CallToolResult) map[string]any {
	t.Helper()
	m, ok := r.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent is %T, want an object", r.StructuredContent)
	}
	return m
}

// auditOf reads the MCP session's audit rows, newest first, once hostcore
// has exited.
func auditOf(t *testing.T, ws, data string) []store.AuditRow {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(data)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.QueryAudit(t.Context(), store.AuditFilter{SessionID: frontend.SessionID("mcp", ws)})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// elicitor answers permission forms from a script of decisions and keeps
// what it was shown.
type elicitor struct {
	mu       sync.Mutex
	answers  []string // "" = block until the request is cancelled
	messages []string
	entered  chan struct{}
}

func (e *elicitor) handle(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	var ans string
	if len(e.answers) > 0 {
		ans, e.answers = e.answers[0], e.answers[1:]
	}
	e.mu.Unlock()
	if e.entered != nil {
		e.entered <- struct{}{}
	}
	if ans == "" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if ans == "decline" {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": ans}}, nil
}

func TestMCPListsToolsAndReads(t *testing.T) {
	ws, data := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	h := startMCP(t, nil, "--workspace", ws, "--data-dir", data)
	ctx := t.Context()

	list, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"Read", "Glob", "Grep", "Write", "Edit"} {
		if byName[name] == nil {
			t.Fatalf("tools/list lacks %s: %v", name, keys(byName))
		}
	}
	for _, name := range []string{"EnterPlanMode", "SubmitPlan", "ToolSearch", "new_context", "asktool", "BrowserPreview"} {
		if byName[name] != nil {
			t.Errorf("tools/list offers %s, which is not served over MCP", name)
		}
	}
	for _, name := range []string{"Read", "Glob", "Grep"} {
		if a := byName[name].Annotations; a == nil || !a.ReadOnlyHint {
			t.Errorf("%s: want readOnlyHint, got %+v", name, a)
		}
	}
	for _, name := range []string{"Write", "Edit", "Bash"} {
		if byName[name] == nil {
			continue // Bash: see TestMCPBashProgressAndCancel
		}
		if a := byName[name].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("%s: want destructiveHint, got %+v", name, a)
		}
	}
	schema, _ := json.Marshal(byName["Read"].InputSchema)
	if !strings.Contains(string(schema), `"path"`) || !strings.Contains(string(schema), `"required"`) {
		t.Errorf("Read's inputSchema is not the tool's schema: %s", schema)
	}

	res := h.call(t, ctx, "Read", map[string]any{"path": "a.txt"})
	if res.IsError || !strings.Contains(text(res), "beta") {
		t.Fatalf("Read: isError=%v %q", res.IsError, text(res))
	}
	sc := structured(t, res)
	if sc["ok"] != true || sc["root"] != "workspace" || sc["path"] != "a.txt" || sc["decision"] != "auto-allow" {
		t.Errorf("Read structuredContent: %v", sc)
	}

	// Containment is the envelope's: a bad argument is a tool error the
	// model sees, not a protocol error.
	res = h.call(t, ctx, "Read", map[string]any{"path": 7})
	if !res.IsError || structured(t, res)["errorCode"] != "INVALID_ARGUMENT" {
		t.Errorf("Read with a number path: isError=%v %v", res.IsError, res.StructuredContent)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestMCPWriteAskedThroughElicitation(t *testing.T) {
	ws, data := newWorkspace(t)
	e := &elicitor{answers: []string{"allow-once", "deny", "decline"}}
	h := startMCP(t, &sdk.ClientOptions{ElicitationHandler: e.handle}, "--workspace", ws, "--data-dir", data)
	ctx := t.Context()

	res := h.call(t, ctx, "Write", map[string]any{"path": "ok.txt", "content": "hello\n"})
	if res.IsError {
		t.Fatalf("allowed Write: %s", text(res))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ok.txt")); string(b) != "hello\n" {
		t.Fatalf("ok.txt = %q", b)
	}
	sc := structured(t, res)
	if sc["decision"] != "allow-once" || sc["review"] == nil {
		t.Errorf("allowed Write structuredContent: %v", sc)
	}

	for _, name := range []string{"denied.txt", "declined.txt"} {
		res = h.call(t, ctx, "Write", map[string]any{"path": name, "content": "no\n"})
		if !res.IsError || structured(t, res)["errorCode"] != "TOOL_DENIED" || !strings.Contains(text(res), "denied") {
			t.Errorf("%s: isError=%v %q", name, res.IsError, text(res))
		}
		if _, err := os.Stat(filepath.Join(ws, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written after a deny", name)
		}
	}
	e.mu.Lock()
	msgs := e.messages
	e.mu.Unlock()
	if len(msgs) != 3 || !strings.Contains(msgs[0], "Write") || !strings.Contains(msgs[0], "ok.txt") || !strings.Contains(msgs[0], "hello") {
		t.Errorf("elicitation messages: %q", msgs)
	}

	h.close()
	rows := auditOf(t, ws, data)
	var got []string
	for _, r := range rows {
		if r.ToolName == "Write" {
			got = append(got, r.Decision+"/"+strconv.FormatBool(r.Prompted)+"/"+r.ErrorCode)
		}
	}
	want := []string{"deny/true/TOOL_DENIED", "deny/true/TOOL_DENIED", "allow-once/true/"}
	if !slices.Equal(got, want) {
		t.Errorf("audit rows (newest first): got %v, want %v", got, want)
	}
}

// logSays waits up to 5 s for hostcore's stderr to hold s: it is copied
// by a goroutine of its own, which may lag behind the answer on stdout.
func logSays(w *syncWriter, s string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(w.String(), s) {
			return true
		}
	}
	return false
}

func TestMCPFailsClosedWithoutElicitation(t *testing.T) {
	ws, data := newWorkspace(t)
	h := startMCP(t, nil, "--workspace", ws, "--data-dir", data)
	ctx := t.Context()
	res := h.call(t, ctx, "Write", map[string]any{"path": "x.txt", "content": "x"})
	// The model is not told which mode would let it through (design
	// section 6); the person who starts hostcore reads it in the log.
	if !res.IsError || strings.Contains(text(res), "--permission-mode") || !strings.Contains(text(res), "elicitation") {
		t.Errorf("Write without elicitation: isError=%v %q", res.IsError, text(res))
	}
	if !logSays(h.stderr, "--permission-mode accept-edits") {
		t.Errorf("the log does not say which mode lets Write run")
	}
	if structured(t, res)["errorCode"] != "TOOL_DENIED" {
		t.Errorf("structuredContent: %v", res.StructuredContent)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("x.txt was written although nobody could approve it")
	}
	if hasTool(t, h, "Bash") {
		res = h.call(t, ctx, "Bash", map[string]any{"command": "touch ran"})
		if !res.IsError || strings.Contains(text(res), "--permission-mode") || !logSays(h.stderr, "--permission-mode auto") {
			t.Errorf("Bash without elicitation: %q", text(res))
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Errorf("Bash ran although nobody could approve it")
		}
	}
	h.close()

	// The mode the server is started with applies to the same session.
	h = startMCP(t, nil, "--workspace", ws, "--data-dir", data, "--permission-mode", "accept-edits")
	res = h.call(t, ctx, "Write", map[string]any{"path": "x.txt", "content": "x"})
	if res.IsError {
		t.Fatalf("Write under accept-edits: %s", text(res))
	}
	h.close()
	rows := auditOf(t, ws, data)
	if len(rows) < 2 || rows[0].Decision != "auto-allow" || !rows[0].OK || rows[len(rows)-1].Decision != "deny" {
		t.Errorf("audit of one session across both runs: %+v", rows)
	}
}

func hasTool(t *testing.T, h *mcpHost, name string) bool {
	t.Helper()
	list, err := h.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == name {
			return true
		}
	}
	return false
}

func TestMCPPermissionTimeoutDenies(t *testing.T) {
	ws, data := newWorkspace(t)
	e := &elicitor{answers: []string{""}} // never answers
	h := startMCP(t, &sdk.ClientOptions{ElicitationHandler: e.handle}, "--workspace", ws, "--data-dir", data, "--permission-timeout", "500ms")
	start := time.Now()
	res := h.call(t, t.Context(), "Write", map[string]any{"path": "late.txt", "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "not granted in time") || structured(t, res)["decision"] != "timeout" {
		t.Errorf("unanswered card: %q %v", text(res), res.StructuredContent)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	if _, err := os.Stat(filepath.Join(ws, "late.txt")); err == nil {
		t.Errorf("late.txt written after the card timed out")
	}
}

func TestMCPCancelWhileAsking(t *testing.T) {
	ws, data := newWorkspace(t)
	e := &elicitor{answers: []string{""}, entered: make(chan struct{}, 1)}
	h := startMCP(t, &sdk.ClientOptions{ElicitationHandler: e.handle}, "--workspace", ws, "--data-dir", data)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-e.entered; cancel() }()
	_, err := h.cs.CallTool(ctx, &sdk.CallToolParams{Name: "Write", Arguments: map[string]any{"path": "c.txt", "content": "x"}})
	if err == nil {
		t.Fatal("a cancelled call returned a result")
	}
	if _, err := os.Stat(filepath.Join(ws, "c.txt")); err == nil {
		t.Errorf("c.txt written after the call was cancelled")
	}
	h.close()
	rows := auditOf(t, ws, data)
	if len(rows) != 1 || rows[0].Decision != "cancelled" || rows[0].ErrorCode != "TOOL_ABORTED" {
		t.Errorf("audit of the cancelled call: %+v", rows)
	}
}

func TestMCPBashProgressAndCancel(t *testing.T) {
	ws, data := newWorkspace(t)
	var mu sync.Mutex
	var chunks []string
	started := make(chan struct{}, 8)
	opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		chunks = append(chunks, req.Params.Message)
		mu.Unlock()
		if strings.Contains(req.Params.Message, "started") {
			started <- struct{}{}
		}
	}}
	h := startMCP(t, opts, "--workspace", ws, "--data-dir", data, "--permission-mode", "auto")
	if !hasTool(t, h, "Bash") {
		t.Fatal("tools/list offers no Bash")
	}
	ctx := t.Context()

	p := &sdk.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo one; sleep 0.2; echo two >&2; echo three"}}
	p.SetProgressToken("tok-1")
	res, err := h.cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("Bash: %v %v", err, res)
	}
	// The client handles notifications on its own queue, so the last chunk
	// may be handled just after the result is returned. That last chunk
	// need not be stdout's: stderr's "two" is a stream of its own, and a
	// loaded machine saw it come after "three" (the wait ended at "three",
	// and "two" then counted as progress of the next call).
	var all string
	has := func(wants ...string) bool {
		for _, want := range wants {
			if !strings.Contains(all, want) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		all = strings.Join(chunks, "")
		mu.Unlock()
		if has("one", "two", "three") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"one", "two", "three"} {
		if !strings.Contains(all, want) {
			t.Errorf("progress messages %q lack %q", all, want)
		}
	}

	// Without a progressToken nothing streams.
	mu.Lock()
	n := len(chunks)
	mu.Unlock()
	h.call(t, ctx, "Bash", map[string]any{"command": "echo quiet"})
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	if len(chunks) != n {
		t.Errorf("progress without a progressToken: %q", chunks[n:])
	}
	mu.Unlock()

	// notifications/cancelled kills the whole tree.
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-started; cancel() }()
	p = &sdk.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "sleep 300 & echo $! > sleep.pid; echo started; wait"}}
	p.SetProgressToken("tok-2")
	start := time.Now()
	if _, err := h.cs.CallTool(cctx, p); err == nil {
		t.Fatal("cancelled Bash returned a result")
	}
	b, err := os.ReadFile(filepath.Join(ws, "sleep.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for syscall.Kill(pid, 0) == nil {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("sleep %d still alive after the call was cancelled", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.close()
	rows := auditOf(t, ws, data)
	if len(rows) == 0 || rows[0].ToolName != "Bash" || rows[0].ErrorCode != "TOOL_ABORTED" {
		t.Errorf("audit of the cancelled Bash: %+v", rows)
	}
}

// TestMCPNodeClient drives hostcore with the official TypeScript SDK's
// client (clients/mcp-node; CI runs npm ci there first).
func TestMCPNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat("clients/mcp-node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		t.Skip("clients/mcp-node/node_modules missing: run npm ci in clients/mcp-node")
	}
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("from node\n"), 0o644)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "clients/mcp-node/client.mjs", bin, ws, data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Tools       []string `json:"tools"`
		ReadText    string   `json:"readText"`
		WriteError  bool     `json:"writeError"`
		Elicited    []string `json:"elicited"`
		DeniedError bool     `json:"deniedError"`
		DeniedCode  string   `json:"deniedCode"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %q: %v\n%s", out, err, stderr.String())
	}
	if !slices.Contains(got.Tools, "Read") || !slices.Contains(got.Tools, "Write") {
		t.Errorf("tools: %v", got.Tools)
	}
	if !strings.Contains(got.ReadText, "from node") {
		t.Errorf("Read: %q", got.ReadText)
	}
	if got.WriteError || len(got.Elicited) != 2 || !got.DeniedError || got.DeniedCode != "TOOL_DENIED" {
		t.Errorf("node run: %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "node.txt")); string(b) != "written by node\n" {
		t.Errorf("node.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); err == nil {
		t.Errorf("denied.txt written")
	}
}
