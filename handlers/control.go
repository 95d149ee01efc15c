package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
	"unicode"

	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/store"
)

// controlDefs are the tools of design section 2 that steer the agent rather
// than touch files: the mode tools, the submit tools, new_context,
// ToolSearch, Task, asktool and BrowserPreview. Their Modes and Deferred
// fields are the tools.list half of the design section 10 matrix; checkMode
// enforces the same fields on every call.
func controlDefs() []*toolDef {
	agentOnly := []string{perms.OpAgent}
	return []*toolDef{
		{Name: "new_context", Class: perms.ClassControl, Risk: perms.RiskLow, Description: newContextDescription, run: runNewContext},
		{Name: "EnterPlanMode", Class: perms.ClassControl, Risk: perms.RiskLow, Description: enterPlanDescription,
			Modes: agentOnly, NeedsWorkspace: true, precheck: enterPrecheck, run: runEnterMode(perms.OpPlan)},
		{Name: "EnterGoalMode", Class: perms.ClassControl, Risk: perms.RiskLow, Description: enterGoalDescription,
			Modes: agentOnly, NeedsWorkspace: true, precheck: enterPrecheck, run: runEnterMode(perms.OpGoal)},
		{Name: "SubmitPlan", Class: perms.ClassControl, Risk: perms.RiskLow, Description: submitPlanDescription,
			Modes: []string{perms.OpPlan}, NeedsWorkspace: true, precheck: submitPrecheck(perms.OpPlan), run: runSubmit(perms.OpPlan)},
		{Name: "SubmitGoal", Class: perms.ClassControl, Risk: perms.RiskLow, Description: submitGoalDescription,
			Modes: []string{perms.OpGoal}, NeedsWorkspace: true, precheck: submitPrecheck(perms.OpGoal), run: runSubmit(perms.OpGoal)},
		{Name: "ToolSearch", Class: perms.ClassControl, Risk: perms.RiskLow, Description: toolSearchDescription, run: runToolSearch},
		{Name: "Task", Class: perms.ClassControl, Risk: perms.RiskLow, Description: taskDescription,
			Modes: agentOnly, precheck: taskPrecheck, run: runTask},
		{Name: "asktool", Class: perms.ClassControl, Risk: perms.RiskLow, Description: askDescription, precheck: askPrecheck, run: runAsk},
		{Name: "BrowserPreview", Class: perms.ClassRead, Risk: perms.RiskLow, Description: browserPreviewDescription,
			Deferred: true, NeedsWorkspace: true, run: runBrowserPreview},
	}
}

const (
	newContextDescription = "Start a new context window at the next turn boundary. Takes no parameters and changes nothing in the workspace; " +
		"use it when the conversation has grown long and earlier detail is no longer needed."
	enterPlanDescription = "Switch this session from agent mode to plan mode to work out a plan before changing anything. " +
		"Must be the only tool call in its batch. In plan mode Write, Edit and plugin tools are unavailable; finish with SubmitPlan."
	enterGoalDescription = "Switch this session from agent mode to goal mode to agree a goal with the user before working on it. " +
		"Must be the only tool call in its batch. In goal mode Write, Edit and plugin tools are unavailable; finish with SubmitGoal."
	submitPlanDescription = "Submit the finished plan as Markdown for the user's approval. The exact text is saved to a new file under .pi/plan/ in the workspace. " +
		"Only in plan mode, and only as the sole tool call of its batch. Approval returns the session to agent mode."
	submitGoalDescription = "Submit the agreed goal as Markdown for the user's approval. The exact text is saved to a new file under .pi/goal/ in the workspace. " +
		"Only in goal mode, and only as the sole tool call of its batch. Approval returns the session to agent mode."
	toolSearchDescription = "Load on-demand tools listed in the # On-demand tools catalog. Give an exact tool name (or several, comma separated) " +
		"or words describing the capability; the matching tools' schemas are returned and become callable on the next turn. Never touches the workspace."
	taskDescription = "Delegate a bounded piece of work to one of this session's subagents. The subagent runs with only the tools its definition grants."
)

// toolSearchMax bounds the tools one capability query returns.
const toolSearchMax = 5

// runNewContext changes nothing: compaction is the client runtime's job, at
// its next turn boundary (design section 10.1).
func runNewContext(ctx context.Context, c *call) *ToolResult {
	r := okResult("A new context window will start at the next turn boundary.")
	r.Details = map[string]any{"compact": "next-turn-boundary"}
	return r
}

// runEnterMode moves the session from agent to the given contract mode.
// checkMode has already required agent mode and batchSize 1; here the mode
// is changed by compare-and-set, so two racing transitions cannot both win,
// and only when no other call of the session is in flight (the active-turn
// boundary of design section 10.1): a Write already past the mode check
// must not land after the session entered Plan.
func runEnterMode(to string) func(ctx context.Context, c *call) *ToolResult {
	return func(ctx context.Context, c *call) *ToolResult {
		if n := c.othersRunning(); n > 0 {
			return failResult(CodeNotAlone, "%s must run alone: %d other tool call(s) of this session are still running", c.tool.Name, n)
		}
		// Calls on later lines that Plan and Goal refuse and that are past
		// their mode check finish first; the others are checked after.
		// A delegate's Bash can take minutes: the wait ends with a cancel.
		if !lockCtx(ctx, c.rt.modeGate.TryLock, c.rt.modeGate.Lock, c.rt.modeGate.Unlock) {
			return failResult(CodeToolAborted, "%s was cancelled while later calls finished; the mode was not changed", c.tool.Name)
		}
		err := c.s.store.SwapMode(context.WithoutCancel(ctx), c.sess.ID, perms.OpAgent, to)
		c.rt.modeGate.Unlock()
		switch {
		case errors.Is(err, store.ErrStale):
			return failResult(CodeWrongMode, "%s is only available in agent mode; the session is no longer in agent mode", c.tool.Name)
		case err != nil:
			return failResult(CodeToolFailed, "cannot change the session mode: %v", err)
		}
		submit := "SubmitPlan"
		if to == perms.OpGoal {
			submit = "SubmitGoal"
		}
		r := okResult(fmt.Sprintf("The session is now in %s mode. Read, Glob, Grep, BrowserPreview and Bash remain available; "+
			"Write, Edit and plugin tools are not. When ready, call %s with the complete Markdown; the user's approval returns the session to agent mode.", to, submit))
		r.Details = map[string]any{"mode": to, "previousMode": perms.OpAgent}
		return r
	}
}

// The prechecks below refuse a control call before its id is reserved, so
// the same call can be sent again once what stopped it has changed (an ask
// answered, a plan approved). The bodies check again where a race could
// change the answer.

func enterPrecheck(ctx context.Context, c *call) *ToolResult {
	if n := c.othersRunning(); n > 0 {
		return failResult(CodeNotAlone, "%s must run alone: %d other tool call(s) of this session are still running", c.tool.Name, n)
	}
	return nil
}

func submitPrecheck(kind string) func(ctx context.Context, c *call) *ToolResult {
	return func(ctx context.Context, c *call) *ToolResult {
		return submitModeCheck(ctx, c, kind)
	}
}

// submitModeCheck reads the mode again: an approval resolved since the call
// arrived may have ended the contract mode.
func submitModeCheck(ctx context.Context, c *call, kind string) *ToolResult {
	if cur, err := c.s.store.GetSession(ctx, c.sess.ID); err != nil {
		return failResult(CodeToolFailed, "cannot read the session: %v", err)
	} else if cur.Mode != kind {
		return failResult(CodeWrongMode, "%s is only available in %s mode; the session is in %s mode", c.tool.Name, kind, cur.Mode)
	}
	return nil
}

// othersRunning counts the session's calls in flight that arrived before
// this one. Calls on later lines are registered as soon as they are read,
// but they are not counted: each checks the session's mode again right
// before its body (decideAndRun), so one that starts after the switch is
// judged in the new mode, and "EnterPlanMode, then a Read" in one write
// works.
func (c *call) othersRunning() int {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	n := 0
	for id, r := range c.rt.running {
		if id != c.p.ToolCallID && (c.entry == nil || r.seq < c.entry.seq) {
			n++
		}
	}
	return n
}

// submitAttempts bounds the retries when a fresh artifact name is taken.
const submitAttempts = 8

// runSubmit stores the exact Markdown bytes in a new artifact and opens one
// pending approval (design section 10.1). The artifact is created with
// O_EXCL through the workspace's os.Root, so it never overwrites anything
// and cannot be redirected out of the workspace by a planted symlink.
func runSubmit(kind string) func(ctx context.Context, c *call) *ToolResult {
	return func(ctx context.Context, c *call) *ToolResult {
		var a struct {
			Markdown string `json:"markdown"`
		}
		if err := json.Unmarshal(c.args, &a); err != nil {
			return failResult(CodeInvalidArgument, "invalid arguments: %v", err)
		}
		if r := submitModeCheck(ctx, c, kind); r != nil {
			return r
		}
		data := []byte(a.Markdown)
		var res sandbox.Resolved
		var warning string // saved, but not synced
		for attempt := 0; ; attempt++ {
			rel := ".pi/" + kind + "/" + artifactName(time.Now())
			var err error
			res, err = sandbox.Roots{Workspace: c.sess.WorkspaceRoot}.Resolve(rel)
			if err != nil {
				return failResult(CodeToolFailed, "cannot resolve %s: %v", rel, err)
			}
			if res.Root != sandbox.RootWorkspace {
				return policyDenied(".pi/%s leads outside the workspace (a symlink?); the %s was not saved", kind, kind)
			}
			warning, err = sandbox.Durable(sandbox.CreateExclusive(res, data))
			if err == nil {
				break
			}
			if errors.Is(err, fs.ErrExist) && attempt+1 < submitAttempts {
				continue
			}
			if errors.Is(err, sandbox.ErrChanged) {
				return failResult(CodeToolDenied, "the workspace changed while the %s was saved; it was not saved: %v", kind, err)
			}
			return failResult(CodeToolFailed, "cannot save the %s: %v", kind, err)
		}
		// One tool call opens at most one approval, and tool-call ids are
		// unique within a session, so the id is derived from both: unique,
		// and reproducible for the client that made the call.
		ap := store.Approval{
			ID: c.sess.ID + ":" + c.p.ToolCallID, SessionID: c.sess.ID, Kind: kind,
			ArtifactPath: res.Display, State: "pending", CreatedAt: store.Now(),
		}
		if err := c.s.store.InsertApproval(context.WithoutCancel(ctx), ap); err != nil {
			sandbox.Remove(res)
			return failResult(CodeToolFailed, "cannot record the approval request: %v", err)
		}
		c.s.client.Notify(context.WithoutCancel(ctx), "approval.requested", map[string]string{
			"sessionId": c.sess.ID, "approvalId": ap.ID, "kind": kind, "artifactPath": ap.ArtifactPath,
		})
		sum := sha256.Sum256(data)
		r := okResult(fmt.Sprintf("Saved the %s to %s (%d bytes) and asked the user to approve it. "+
			"Stop here and wait for the user's decision; approval returns the session to agent mode.", kind, res.Display, len(data)))
		r.Root, r.Path = sandbox.RootWorkspace, res.Display
		r.Details = map[string]any{
			"approvalId": ap.ID, "kind": kind, "artifactPath": res.Display, "absPath": res.Abs,
			"bytes": len(data), "sha256": hex.EncodeToString(sum[:]),
		}
		notDurable(r, warning)
		return r
	}
}

// artifactName is a new file name that sorts by creation time.
func artifactName(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]) + ".md"
}

// runToolSearch finds tools among those the session's mode shows: exact
// names first (any visible tool), otherwise capability words matched
// against the deferred tools' names and descriptions. The host does not
// track what is "loaded": activation for the next turn is the sidecar's,
// and it resets per prompt (design section 2.1). Nothing here touches the
// workspace.
func runToolSearch(ctx context.Context, c *call) *ToolResult {
	var a struct {
		Query string `json:"query"`
	}
	json.Unmarshal(c.args, &a)
	visible, _ := c.s.visibleTools(c.sess, "")
	matches := searchTools(visible, a.Query)
	if len(matches) == 0 {
		var names []string
		for _, t := range visible {
			if t.Deferred {
				names = append(names, t.Name)
			}
		}
		text := fmt.Sprintf("No tool matches %q.", a.Query)
		if len(names) > 0 {
			text += " On-demand tools: " + strings.Join(names, ", ") + "."
		}
		r := okResult(text)
		r.Details = map[string]any{"query": a.Query, "matches": []ToolInfo{}}
		return r
	}
	var b strings.Builder
	names := make([]string, len(matches))
	for i, t := range matches {
		names[i] = t.Name
		fmt.Fprintf(&b, "## %s\n%s\nrisk: %s\ninput schema: %s\n\n", t.Name, t.Description, t.Risk, t.InputSchema)
	}
	r := okResult("Available from the next turn: " + strings.Join(names, ", ") + "\n\n" + strings.TrimRight(b.String(), "\n"))
	r.Details = map[string]any{"query": a.Query, "matches": matches}
	return r
}

// searchTools is ToolSearch's matcher, pure so it can be tested alone.
func searchTools(visible []ToolInfo, query string) []ToolInfo {
	byName := map[string]ToolInfo{}
	byFold := map[string]ToolInfo{}
	for _, t := range visible {
		byName[t.Name] = t
		byFold[strings.ToLower(t.Name)] = t
	}
	// Exact names: "Glob" or "Glob, Grep" (or "select:Glob,Grep").
	parts := strings.FieldsFunc(strings.TrimPrefix(strings.TrimSpace(query), "select:"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	var exact []ToolInfo
	for _, p := range parts {
		t, ok := byName[p]
		if !ok {
			t, ok = byFold[strings.ToLower(p)]
		}
		if !ok {
			exact = nil
			break
		}
		exact = append(exact, t)
	}
	if len(exact) > 0 {
		return dedupe(exact)
	}
	words := searchWords(query)
	if len(words) == 0 {
		return nil
	}
	type scored struct {
		t     ToolInfo
		score int
	}
	var hits []scored
	for _, t := range visible {
		if !t.Deferred {
			continue
		}
		tokens := searchWords(splitCamel(t.Name) + " " + t.Description)
		score := 0
		for _, w := range words {
			for _, tok := range tokens {
				if tok == w || (len(w) >= 3 && strings.HasPrefix(tok, w)) || (len(tok) >= 4 && strings.HasPrefix(w, tok)) {
					score++
					break
				}
			}
		}
		if score > 0 {
			hits = append(hits, scored{t, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	var out []ToolInfo
	for i := 0; i < len(hits) && i < toolSearchMax; i++ {
		out = append(out, hits[i].t)
	}
	return out
}

func dedupe(ts []ToolInfo) []ToolInfo {
	seen := map[string]bool{}
	var out []ToolInfo
	for _, t := range ts {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// searchStop are words too common to say anything about a capability.
var searchStop = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true, "and": true, "or": true,
	"by": true, "with": true, "from": true, "is": true, "it": true, "this": true, "that": true, "tool": true, "tools": true,
	"use": true, "can": true, "be": true, "as": true, "at": true, "my": true, "me": true, "i": true, "want": true, "need": true,
}

func searchWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 2 && !searchStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// splitCamel turns "BrowserPreview" into "Browser Preview" and
// "plugin_x_lint" into "plugin x lint".
func splitCamel(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		if r == '_' || r == '-' {
			b.WriteByte(' ')
		} else {
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// runTask validates a delegation and hands the delegate's tool set back to
// the client, which runs the delegate's model loop; the delegate's calls
// come back through tools.execute with delegate set (design section 10.2).
func runTask(ctx context.Context, c *call) *ToolResult {
	d, r := taskSubagent(c)
	if r != nil {
		return r
	}
	var a struct {
		Prompt string `json:"prompt"`
	}
	json.Unmarshal(c.args, &a)
	r = okResult(fmt.Sprintf("Delegated to subagent %q with tools %s.", d.Name, strings.Join(d.Tools, ", ")))
	r.Details = map[string]any{"subagent": d.Name, "prompt": a.Prompt, "tools": d.Tools}
	return r
}

func taskPrecheck(ctx context.Context, c *call) *ToolResult {
	_, r := taskSubagent(c)
	return r
}

// taskSubagent finds the definition a Task names, or says why it cannot.
func taskSubagent(c *call) (Subagent, *ToolResult) {
	var a struct {
		Subagent string `json:"subagent"`
	}
	json.Unmarshal(c.args, &a)
	defs := subagentsOf(c.sess)
	if len(defs) == 0 {
		return Subagent{}, failResult(CodeToolDenied, "Task is not available: this session has no subagent definitions")
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		if d.Name == a.Subagent {
			return d, nil
		}
		names[i] = d.Name
	}
	return Subagent{}, failResult(CodeInvalidArgument, "invalid arguments: args.subagent: unknown subagent %q; this session defines %s", a.Subagent, strings.Join(names, ", "))
}
