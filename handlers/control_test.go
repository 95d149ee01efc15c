package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox/process"
	"hostcore/scratch"
	"hostcore/store"
)

// fakeClient stands in for the client side of the connection.
type fakeClient struct {
	call func(ctx context.Context, method string, params any) (json.RawMessage, error)

	mu    sync.Mutex
	notes []string // "method params-json"
}

func (f *fakeClient) Call(ctx context.Context, method string, params, result any) error {
	if f.call == nil {
		return errors.New("no client")
	}
	raw, err := f.call(ctx, method, params)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, result)
}

func (f *fakeClient) CallWithin(ctx context.Context, d time.Duration, method string, params, result any) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return f.Call(ctx, method, params, result)
}

func (f *fakeClient) Notify(ctx context.Context, method string, params any) error {
	b, _ := json.Marshal(params)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, method+" "+string(b))
	return nil
}

func (f *fakeClient) notifications(method string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, n := range f.notes {
		if strings.HasPrefix(n, method+" ") {
			out = append(out, strings.TrimPrefix(n, method+" "))
		}
	}
	return out
}

func newTestServer(t *testing.T, fc *fakeClient) *Server {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(Config{DataDir: filepath.Join(dir, "data"), PermissionTimeout: time.Second}, st, fc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// newSession creates a session over a fresh workspace and returns it.
func newSession(t *testing.T, s *Server, id, mode, permMode string) string {
	t.Helper()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	raw, _ := json.Marshal(map[string]any{"sessionId": id, "workspaceRoot": ws, "mode": mode, "permissionMode": permMode})
	if _, err := s.sessionCreate(t.Context(), raw); err != nil {
		t.Fatal(err)
	}
	return ws
}

func run(t *testing.T, s *Server, p ExecuteParams) *ToolResult {
	t.Helper()
	if p.TurnID == "" {
		p.TurnID = "t1"
	}
	raw, _ := json.Marshal(p)
	out, err := s.execute(t.Context(), raw, nil)
	if err != nil {
		t.Fatalf("%s: %v", p.ToolName, err)
	}
	return out.(*ToolResult)
}

// pendingTools are built-ins written in other files; until they are
// registered the list checks below skip them rather than fail.
var pendingTools = []string{"Glob", "Grep", "Bash", "Edit"}

func TestToolsListPerMode(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	if _, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"p","grants":["agent.tool.register"],"tools":[{"name":"x","description":"X."}]}`)); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		perms.OpAgent: {"Bash", "BashOutput", "BrowserPreview", "Edit", "EnterGoalMode", "EnterPlanMode", "Glob", "Grep", "KillShell", "PluginCheck", "PluginPack", "PluginScaffold", "Read", "ToolSearch", "Write", "asktool", "new_context", "plugin_p_x"},
		perms.OpPlan:  {"Bash", "BashOutput", "BrowserPreview", "Glob", "Grep", "KillShell", "PluginCheck", "Read", "SubmitPlan", "ToolSearch", "asktool", "new_context"},
		perms.OpGoal:  {"Bash", "BashOutput", "BrowserPreview", "Glob", "Grep", "KillShell", "PluginCheck", "Read", "SubmitGoal", "ToolSearch", "asktool", "new_context"},
	}
	wantDeferred := map[string][]string{
		perms.OpAgent: {"BashOutput", "BrowserPreview", "Glob", "Grep", "KillShell", "PluginCheck", "PluginPack", "PluginScaffold", "plugin_p_x"},
		// Section 2.1 limits only Glob and Grep's deferral to Agent;
		// BashOutput and KillShell are on demand wherever Bash is.
		perms.OpPlan: {"BashOutput", "BrowserPreview", "KillShell", "PluginCheck"},
		perms.OpGoal: {"BashOutput", "BrowserPreview", "KillShell", "PluginCheck"},
	}
	for mode, names := range want {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool {
			return slices.Contains(pendingTools, n) && s.tools.Get(n) == nil
		})
		tools, catalog := s.visibleTools(store.Session{ID: "s", Mode: mode, Subagents: "[]", WorkspaceRoot: "/ws"}, "")
		var got, gotDeferred []string
		for _, ti := range tools {
			got = append(got, ti.Name)
			if ti.Deferred {
				gotDeferred = append(gotDeferred, ti.Name)
			}
			if len(ti.InputSchema) == 0 || ti.Risk == "" || ti.Description == "" {
				t.Errorf("%s: %s lacks schema, risk or description", mode, ti.Name)
			}
		}
		if diff := gocmp.Diff(names, got); diff != "" {
			t.Errorf("%s mode tools (-want +got):\n%s", mode, diff)
		}
		wd := slices.DeleteFunc(slices.Clone(wantDeferred[mode]), func(n string) bool { return !slices.Contains(names, n) })
		if diff := gocmp.Diff(wd, gotDeferred); diff != "" {
			t.Errorf("%s deferred (-want +got):\n%s", mode, diff)
		}
		if !strings.HasPrefix(catalog, "# On-demand tools\n") {
			t.Errorf("catalog %q", catalog)
		}
		for _, n := range wd {
			if !strings.Contains(catalog, "- "+n+": ") {
				t.Errorf("catalog lacks %s:\n%s", n, catalog)
			}
		}
	}
	// Task appears with a subagent definition, in agent mode only.
	withDefs := `[{"name":"r","tools":["Read"]}]`
	for mode, visible := range map[string]bool{perms.OpAgent: true, perms.OpPlan: false, perms.OpGoal: false} {
		shown, _ := s.visibleTools(store.Session{ID: "s", Mode: mode, Subagents: withDefs}, "")
		has := slices.ContainsFunc(shown, func(ti tools.ToolInfo) bool { return ti.Name == "Task" })
		if has != visible {
			t.Errorf("%s mode with a subagent: Task visible = %v, want %v", mode, has, visible)
		}
	}
}

func TestCatalogIsBounded(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	for _, id := range []string{"big", "bigger"} {
		var tools []string
		for i := range 200 {
			tools = append(tools, fmt.Sprintf(`{"name":"tool%03d","description":"%s"}`, i, strings.Repeat("word ", 40)))
		}
		raw := `{"pluginId":"` + id + `","grants":["agent.tool.register"],"tools":[` + strings.Join(tools, ",") + `]}`
		if _, err := s.pluginsRegister(t.Context(), json.RawMessage(raw)); err != nil {
			t.Fatal(err)
		}
	}
	_, catalog := s.visibleTools(store.Session{ID: "s", Mode: perms.OpAgent, Subagents: "[]"}, "")
	if len(catalog) > catalogMax+200 || !strings.Contains(catalog, "more: search with ToolSearch") {
		t.Errorf("catalog is %d bytes (bound %d), ends %q", len(catalog), catalogMax, catalog[max(0, len(catalog)-80):])
	}
}

// TestSubmitExactBytes is the round trip of design section 10.1: what the
// model submits is what lands on disk, byte for byte, in a new file.
func TestSubmitExactBytes(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	ws := newSession(t, s, "s1", perms.OpPlan, perms.ModeAsk)
	markdown := "# Plan \r\n\r\n- step one   \r\n- émoji 🚀 and ZWJ 👩‍💻\ttab\n\nno trailing newline  "
	args, _ := json.Marshal(map[string]string{"markdown": markdown})
	var paths []string
	for _, id := range []string{"sp1", "sp2"} {
		r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: id, ToolName: "SubmitPlan", Args: args})
		if !r.OK || r.Root != "workspace" || !strings.HasPrefix(r.Path, ".pi/plan/") || !strings.HasSuffix(r.Path, ".md") {
			t.Fatalf("SubmitPlan: %+v", r)
		}
		got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(r.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != markdown {
			t.Errorf("artifact bytes differ:\n got %q\nwant %q", got, markdown)
		}
		fi, _ := os.Stat(filepath.Join(ws, filepath.FromSlash(r.Path)))
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("artifact mode %v", fi.Mode())
		}
		ap, err := s.store.GetApproval(t.Context(), "s1", "s1:"+id)
		if err != nil || ap.State != "pending" || ap.Kind != "plan" || ap.ArtifactPath != r.Path {
			t.Errorf("approval %+v, %v", ap, err)
		}
		paths = append(paths, r.Path)
	}
	if paths[0] == paths[1] {
		t.Errorf("two submits share %s", paths[0])
	}
	// Read through the protocol returns the same lines.
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "r1", ToolName: "Read", Args: json.RawMessage(fmt.Sprintf(`{"path":%q}`, paths[0]))})
	if !r.OK || !strings.Contains(r.Content[0].Text, "- émoji 🚀 and ZWJ 👩‍💻\ttab") {
		t.Errorf("Read back: %+v", r)
	}
	notes := fc.notifications("approval.requested")
	if len(notes) != 2 || !strings.Contains(notes[0], `"approvalId":"s1:sp1"`) || !strings.Contains(notes[0], `"kind":"plan"`) {
		t.Errorf("approval.requested: %v", notes)
	}
}

func TestSubmitRefusesSymlinkOut(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "s1", perms.OpGoal, perms.ModeAuto)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".pi")); err != nil {
		t.Fatal(err)
	}
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "sg1", ToolName: "SubmitGoal", Args: json.RawMessage(`{"markdown":"x"}`)})
	if r.OK || r.ErrorCode != tools.CodeToolDenied || r.Decision != decPolicy {
		t.Errorf("SubmitGoal through a symlink out: %+v", r)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the workspace: %v", ents)
	}
	if _, err := s.store.GetApproval(t.Context(), "s1", "s1:sg1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an approval was recorded: %v", err)
	}
}

func TestBrowserPreviewRefusesSymlinkOut(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	ws := newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.html"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(outside, "x.html"), filepath.Join(ws, "link.html"))
	os.Symlink(outside, filepath.Join(ws, "dir"))
	os.WriteFile(filepath.Join(ws, "in.html"), []byte("x"), 0o644)
	os.Symlink("in.html", filepath.Join(ws, "inlink.html"))
	for _, p := range []string{"link.html", "dir/x.html"} {
		r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: p, ToolName: "BrowserPreview", Args: json.RawMessage(fmt.Sprintf(`{"path":%q}`, p))})
		if r.OK || r.ErrorCode != tools.CodeToolDenied || r.Timing.Prompted {
			t.Errorf("%s: %+v", p, r)
		}
	}
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "in", ToolName: "BrowserPreview", Args: json.RawMessage(`{"path":"inlink.html"}`)})
	if !r.OK || r.Path != "in.html" {
		t.Errorf("a symlink inside the workspace: %+v", r)
	}
	if n := fc.notifications("browser.preview"); len(n) != 1 || !strings.Contains(n[0], `"path":"in.html"`) {
		t.Errorf("browser.preview: %v", n)
	}
}

func TestPluginTimeoutAndErrors(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	// A short tool timeout: the default is pluginTimeout.
	s.pluginTimeout = 50 * time.Millisecond
	if _, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"p","grants":["agent.tool.register"],"tools":[{"name":"slow"},{"name":"bad"}]}`)); err != nil {
		t.Fatal(err)
	}
	fc.call = func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		b, _ := json.Marshal(params)
		if strings.Contains(string(b), `"toolName":"bad"`) {
			return nil, errors.New("renderer crashed")
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "c1", ToolName: "plugin_p_slow"})
	if r.OK || r.ErrorCode != tools.CodeToolTimeout {
		t.Errorf("slow plugin: %+v", r)
	}
	r = run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "c2", ToolName: "plugin_p_bad"})
	if r.OK || r.ErrorCode != tools.CodeToolFailed || !strings.Contains(r.Message, "renderer crashed") {
		t.Errorf("error reply: %+v", r)
	}
	if got := s.tools.Get("plugin_p_bad").Risk; got != perms.RiskMedium {
		t.Errorf("default risk %q", got)
	}
}

func TestAskWithoutClientIsSkipped(t *testing.T) {
	fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		return nil, errors.New("client cannot answer: input closed")
	}}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpGoal, perms.ModeAsk)
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "a1", ToolName: "asktool", Args: json.RawMessage(`{"questions":[{"id":"a","question":"?"},{"id":"b","question":"?","multiSelect":true}]}`)})
	want := tools.AskDetails{Answers: map[string]any{"a": "", "b": []string{}}, Skipped: true}
	if diff := gocmp.Diff(want, r.Details); !r.OK || diff != "" {
		t.Errorf("ok=%v details (-want +got):\n%s", r.OK, diff)
	}
	if n := fc.notifications("ask.cancelled"); len(n) != 0 {
		t.Errorf("ask.cancelled sent to a client that is gone: %v", n)
	}
}

func TestAskAnswersAreBounded(t *testing.T) {
	long := strings.Repeat("é", tools.AskAnswerMax)
	fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"answers": map[string]any{"a": long}})
	}}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAsk)
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "a1", ToolName: "asktool", Args: json.RawMessage(`{"questions":[{"id":"a","question":"?"}]}`)})
	got := r.Details.(tools.AskDetails).Answers["a"].(string)
	if len(got) > tools.AskAnswerMax+16 || !strings.HasSuffix(got, "…[cut]") || !json.Valid([]byte(fmt.Sprintf("%q", got))) {
		t.Errorf("answer of %d bytes came back as %d bytes", len(long), len(got))
	}
}

// TestEnterModeRace: two mode transitions racing in one session never both
// win, and the stored mode is the winner's.
func TestEnterModeRace(t *testing.T) {
	for i := range 20 {
		s := newTestServer(t, &fakeClient{})
		id := fmt.Sprintf("s%d", i)
		newSession(t, s, id, perms.OpAgent, perms.ModeAsk)
		var wg sync.WaitGroup
		results := make([]*ToolResult, 2)
		for j, tool := range []string{"EnterPlanMode", "EnterGoalMode"} {
			wg.Go(func() {
				raw, _ := json.Marshal(ExecuteParams{SessionID: id, TurnID: "t", ToolCallID: tool, ToolName: tool})
				out, err := s.execute(context.Background(), raw, nil)
				if err != nil {
					t.Error(err)
					return
				}
				results[j] = out.(*ToolResult)
			})
		}
		wg.Wait()
		sess, _ := s.store.GetSession(t.Context(), id)
		wins := 0
		mode := perms.OpAgent
		for j, r := range results {
			if r != nil && r.OK {
				wins++
				mode = []string{perms.OpPlan, perms.OpGoal}[j]
			}
		}
		if wins > 1 || sess.Mode != mode {
			t.Fatalf("wins=%d stored mode %q want %q: %+v %+v", wins, sess.Mode, mode, results[0], results[1])
		}
	}
}

// routeExec registers a tools.execute as the read loop does (its place in
// arrival order is taken now) and returns the call to run.
func routeExec(s *Server, p ExecuteParams) func() *ToolResult {
	f := routeExecCtx(s, p)
	return func() *ToolResult { return f(context.Background()) }
}

func routeExecCtx(s *Server, p ExecuteParams) func(context.Context) *ToolResult {
	if p.TurnID == "" {
		p.TurnID = "t1"
	}
	raw, _ := json.Marshal(p)
	f, _ := s.Methods()["tools.execute"].Prepare(raw)
	return func(ctx context.Context) *ToolResult {
		out, err := f(ctx)
		if err != nil {
			return failResult(tools.CodeToolFailed, "%v", err)
		}
		return out.(*ToolResult)
	}
}

// EnterPlanMode waits for a later call that Plan refuses and that is
// already past its mode check (a plugin tool, here in its body): the
// switch comes after that body, never during it.
func TestEnterPlanModeWaitsForARefusableCallInItsBody(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	if _, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"p","grants":["agent.tool.register"],"tools":[{"name":"mut","risk":"low"}]}`)); err != nil {
		t.Fatal(err)
	}
	inBody, release := make(chan struct{}), make(chan struct{})
	fc.call = func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		close(inBody)
		<-release
		return json.RawMessage(`{"ok":true,"content":[{"type":"text","text":"done"}]}`), nil
	}
	enter := routeExec(s, ExecuteParams{SessionID: "s1", ToolCallID: "enter", ToolName: "EnterPlanMode"})
	plugin := routeExec(s, ExecuteParams{SessionID: "s1", ToolCallID: "mut", ToolName: "plugin_p_mut"})
	pluginDone := make(chan *ToolResult, 1)
	go func() { pluginDone <- plugin() }()
	<-inBody
	enterDone := make(chan *ToolResult, 1)
	go func() { enterDone <- enter() }()
	select {
	case r := <-enterDone:
		t.Fatalf("EnterPlanMode answered while a plugin call was in its body: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	if sess, _ := s.store.GetSession(t.Context(), "s1"); sess.Mode != perms.OpAgent {
		t.Fatalf("the session entered %s while a plugin call ran", sess.Mode)
	}
	// A Write that arrives meanwhile waits for the switch; a cancel ends
	// its wait at once.
	write := routeExecCtx(s, ExecuteParams{SessionID: "s1", ToolCallID: "w", ToolName: "Write", Args: json.RawMessage(`{"path":"w.txt","content":"x"}`)})
	wctx, cancelWrite := context.WithCancel(context.Background())
	writeDone := make(chan *ToolResult, 1)
	go func() { writeDone <- write(wctx) }()
	time.Sleep(100 * time.Millisecond)
	cancelWrite()
	select {
	case r := <-writeDone:
		if r.ErrorCode != tools.CodeToolAborted {
			t.Fatalf("the cancelled Write: %+v", r)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a Write waiting for the mode switch could not be cancelled")
	}
	close(release)
	if r := <-pluginDone; !r.OK {
		t.Fatalf("plugin call: %+v", r)
	}
	if r := <-enterDone; !r.OK {
		t.Fatalf("EnterPlanMode: %+v", r)
	}
}

// A delegate's Bash whose card is answered after the session entered Plan
// is judged in Plan: refused, as if it had been sent then.
func TestDelegateBashRecheckedAfterItsCard(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	ws := newSession(t, s, "s1", perms.OpAgent, perms.ModeAsk)
	if _, err := s.sessionConfigure(t.Context(), json.RawMessage(`{"sessionId":"s1","subagents":[{"name":"worker","tools":"*"}]}`)); err != nil {
		t.Fatal(err)
	}
	fc.call = func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		if method == "permission.request" {
			// The switch lands while the card is open.
			if err := s.store.SwapMode(context.Background(), "s1", perms.OpAgent, perms.OpPlan); err != nil {
				t.Error(err)
			}
			return json.RawMessage(`{"decision":"allow-once"}`), nil
		}
		return nil, errors.New("unexpected " + method)
	}
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "b", ToolName: "Bash", Delegate: "worker", Args: json.RawMessage(`{"command":"echo ran > ran.txt"}`)})
	if r.OK || r.ErrorCode != tools.CodeToolDenied {
		t.Fatalf("delegate Bash approved after the switch to plan: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatal("it ran")
	}
	process.LoginPath() // the probe Bash's check started ends before the leak check
}

// A delegate's name is shown on the card (design section 10.2): a name
// holding an escape sequence reached the card raw. Such names are refused
// when defined (and the card escapes the name all the same). An empty
// tools list declares none: Read, Glob, Grep.
func TestDelegateNamesArePrintable(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAsk)
	for _, name := range []string{`helper\u001b[31m`, `a\u202eb`, `x\u0000`} {
		if _, err := s.sessionConfigure(t.Context(), json.RawMessage(`{"sessionId":"s1","subagents":[{"name":"`+name+`","tools":["Write"]}]}`)); err == nil {
			t.Errorf("subagent name %s accepted", name)
		}
	}
	if _, err := s.sessionConfigure(t.Context(), json.RawMessage(`{"sessionId":"s1","subagents":[{"name":"e","tools":[]}]}`)); err != nil {
		t.Fatal(err)
	}
	sess, _ := s.store.GetSession(t.Context(), "s1")
	if defs := subagentsOf(sess); len(defs) != 1 || !slices.Equal(defs[0].Tools, []string{"Read", "Glob", "Grep"}) {
		t.Errorf("tools: [] gives %+v", defs)
	}
}

// A call whose body ran and whose audit row then could not be written (a
// full disk) was answered as a storage error: the model was told a Write
// that landed had failed, and lost the snapshot id that undoes it. The
// result now says what happened, and that the audit failed.
func TestAuditFailureAfterTheBodyKeepsTheResult(t *testing.T) {
	fc := &fakeClient{}
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{DataDir: filepath.Join(dir, "data"), PermissionTimeout: time.Second}, st, fc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	if _, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"p","grants":["agent.tool.register"],"tools":[{"name":"t"}]}`)); err != nil {
		t.Fatal(err)
	}
	fc.call = func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		st.Close() // the store fails from here on
		return json.RawMessage(`{"content":[{"type":"text","text":"deployed"}]}`), nil
	}
	raw, _ := json.Marshal(ExecuteParams{SessionID: "s1", TurnID: "t1", ToolCallID: "c", ToolName: "plugin_p_t"})
	out, err := s.execute(t.Context(), raw, nil)
	if err != nil {
		t.Fatalf("the body ran, yet the answer is an error: %v", err)
	}
	r := out.(*ToolResult)
	if !r.OK || r.Content[0].Text != "deployed" || !strings.Contains(r.AuditError, "audit row could not be written") {
		t.Fatalf("result: %+v", r)
	}
}

// BrowserPreview opened "index.html/", a name Read refuses as a directory.
func TestBrowserPreviewRefusesADirectoryName(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	ws := newSession(t, s, "s1", perms.OpAgent, perms.ModeAsk)
	os.WriteFile(filepath.Join(ws, "index.html"), []byte("<p>hi</p>"), 0o644)
	for _, p := range []string{"index.html/", "index.html/."} {
		r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "b" + p, ToolName: "BrowserPreview", Args: json.RawMessage(`{"path":"` + p + `"}`)})
		if r.OK || r.ErrorCode != tools.CodeInvalidArgument {
			t.Errorf("%s: %+v", p, r)
		}
	}
	if n := fc.notifications("browser.preview"); len(n) != 0 {
		t.Errorf("browser.preview sent: %v", n)
	}
}

// A plugin's integer argument written 1.0 was refused: hostcore's check
// for its own int fields ran on plugin schemas too, whose args reach the
// client as sent (JSON Schema counts 1.0 as an integer).
func TestPluginIntegerArgumentsFollowTheSchema(t *testing.T) {
	fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
	}}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	if _, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"p","grants":["agent.tool.register"],"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}]}`)); err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "a", ToolName: "plugin_p_t", Args: json.RawMessage(`{"n":1.0}`)}); !r.OK {
		t.Errorf("n: 1.0: %+v", r)
	}
	if r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "b", ToolName: "plugin_p_t", Args: json.RawMessage(`{"n":1.5}`)}); r.OK || r.ErrorCode != tools.CodeInvalidArgument {
		t.Errorf("n: 1.5: %+v", r)
	}
}

// A deny that reached the call as a tools.cancel arrived was answered as
// TOOL_ABORTED, audited "cancelled", and the cancel claimed it (a review
// found 39 of 40 such races so). The user's deny stands: TOOL_DENIED,
// "deny", and the cancel ended nothing.
func TestDenyRacingACancelStaysADeny(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAsk)
	open := make(chan struct{})
	fc.call = func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		close(open)
		<-ctx.Done() // the deny lands as the cancel does
		return json.RawMessage(`{"decision":"deny"}`), nil
	}
	raw, _ := json.Marshal(ExecuteParams{SessionID: "s1", TurnID: "t1", ToolCallID: "w", ToolName: "Write", Args: json.RawMessage(`{"path":"x.txt","content":"x"}`)})
	done := make(chan *ToolResult, 1)
	go func() {
		out, err := s.execute(context.Background(), raw, nil)
		if err != nil {
			t.Error(err)
		}
		done <- out.(*ToolResult)
	}()
	<-open
	got, err := s.toolsCancel(t.Context(), json.RawMessage(`{"sessionId":"s1","toolCallId":"w"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.ErrorCode != tools.CodeToolDenied || r.Decision != decDeny {
		t.Errorf("result %s %s, want TOOL_DENIED deny", r.ErrorCode, r.Decision)
	}
	if got.(map[string]bool)["cancelled"] {
		t.Errorf("tools.cancel claimed a denied call: %v", got)
	}
	rows, err := s.store.QueryAudit(t.Context(), store.AuditFilter{SessionID: "s1", ToolCallID: "w"})
	if err != nil || len(rows) != 1 || rows[0].Decision != decDeny {
		t.Errorf("audit %+v %v, want one deny row", rows, err)
	}
}

// A call read before its session was deleted, and started after, was
// audited "policy-deny": no policy refused it; it was cancelled.
func TestCallOfADeletedSessionIsAuditedCancelled(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	raw, _ := json.Marshal(ExecuteParams{SessionID: "s1", TurnID: "t1", ToolCallID: "r", ToolName: "Read", Args: json.RawMessage(`{"path":"missing.txt"}`)})
	runIt, _ := s.Methods()["tools.execute"].Prepare(raw)
	deleted := make(chan error, 1)
	go func() {
		_, err := s.sessionDelete(context.Background(), json.RawMessage(`{"sessionId":"s1"}`))
		deleted <- err
	}()
	// The call starts once the delete has begun (and waits for it).
	rt := s.runtime("s1")
	for {
		rt.mu.Lock()
		d := rt.deleted
		rt.mu.Unlock()
		if d {
			break
		}
		time.Sleep(time.Millisecond)
	}
	out, err := runIt(t.Context())
	if derr := <-deleted; derr != nil {
		t.Fatal(derr)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := out.(*ToolResult)
	if r.ErrorCode != tools.CodeToolAborted || r.Decision != decCancel {
		t.Errorf("result %s %q, want TOOL_ABORTED cancelled", r.ErrorCode, r.Decision)
	}
}

// An outside path a Temporary session refuses for want of a workspace is
// still classified in the audit (design section 9: externalPath whenever
// an explicit path is present), as the mode matrix's refusals are.
func TestNoWorkspaceRefusalClassifiesItsPath(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	if _, err := s.sessionCreate(t.Context(), json.RawMessage(`{"sessionId":"tmp","workspaceRoot":null,"permissionMode":"auto"}`)); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x.txt")
	scratchPath := filepath.Join(scratch.Dir(s.cfg.DataDir, "tmp"), "y.txt")
	for id, path := range map[string]string{"out": outside, "scr": scratchPath, "rel": "z.txt"} {
		r := run(t, s, ExecuteParams{SessionID: "tmp", ToolCallID: id, ToolName: "Write", Args: json.RawMessage(fmt.Sprintf(`{"path":%q,"content":"x"}`, path))})
		if r.ErrorCode != tools.CodeNoWorkspace {
			t.Fatalf("%s: %+v", id, r)
		}
		rows, err := s.store.QueryAudit(t.Context(), store.AuditFilter{SessionID: "tmp", ToolCallID: id})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: audit %v %v", id, rows, err)
		}
		if want := map[string]string{"out": "denied"}[id]; rows[0].ExternalPath != want {
			t.Errorf("%s: externalPath %q, want %q", id, rows[0].ExternalPath, want)
		}
	}
}
