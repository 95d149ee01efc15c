//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bashCall sends a Bash call of session s.
func bashCall(c rpcClient, id int, session, callID, command string) {
	c.h.send(c.t, execLine(id, session, callID, "Bash", map[string]any{"command": command}, map[string]any{"sessionId": session}))
}

// replyCard answers the permission card id with a reply object.
func replyCard(t *testing.T, h *host, id json.RawMessage, reply map[string]any) {
	t.Helper()
	b, _ := json.Marshal(reply)
	h.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+string(b)+`}`)
}

// denyNextCard waits for a card, denies it, and checks that call id
// ended TOOL_DENIED.
func denyNextCard(t *testing.T, c rpcClient, id int, what string) {
	t.Helper()
	c.h.answer(t, c.h.nextCard(t), "deny")
	if r, _ := c.answerOf(id); r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("%s = %v; want a card, denied", what, r)
	}
}

// options is a card's options.
func options(card map[string]any) []string {
	var out []string
	for _, o := range card["options"].([]any) {
		out = append(out, o.(string))
	}
	return out
}

// auditRuleOf is the ruleId of a call's audit row.
func auditRuleOf(t *testing.T, c rpcClient, id int, callID string) any {
	t.Helper()
	r := c.call(id, "audit.query", map[string]any{"toolCallId": callID})
	rows, _ := r["rows"].([]any)
	if len(rows) != 1 {
		t.Fatalf("audit rows of %s = %v", callID, r)
	}
	return rows[0].(map[string]any)["ruleId"]
}

// An allow-always-command answer remembers the card's prefix for the
// workspace: a later command of that prefix runs without a card, a
// chained line does not, the rule outlives a restart, is listed, named in
// the audit, and once removed the card comes back.
func TestRememberedCommandRule(t *testing.T) {
	bin, h, c, ws, data := hostWithSession(t, "ask")
	os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"scripts":{"test":"echo tested"}}`), 0o644)

	bashCall(c, 2, "s", "b1", "npm test -- --watch=false")
	card, id := cardOf(t, h)
	if got := options(card); !slices.Equal(got, []string{"allow-once", "allow-session", "allow-always", "allow-always-command", "deny"}) || card["suggestedPrefix"] != "npm test" {
		t.Fatalf("card = %v; want the remembered answers and the suggestion npm test", card)
	}
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command"}) // no prefix: the suggestion
	if r := c.result(2); r["decision"] != "allow-always-command" || r["timing"].(map[string]any)["prompted"] != true {
		t.Fatalf("b1 = %v", r)
	}
	list := c.call(3, "permissions.list", map[string]any{"sessionId": "s"})
	rules, _ := list["rules"].([]any)
	if len(rules) != 1 {
		t.Fatalf("permissions.list = %v", list)
	}
	rule := rules[0].(map[string]any)
	if rule["kind"] != "command" || rule["prefix"] != "npm test" || rule["workspace"] != ws || rule["toolName"] != "Bash" || rule["toolCallId"] != "b1" {
		t.Errorf("rule = %v", rule)
	}
	ruleID := rule["ruleId"].(string)
	if got := auditRuleOf(t, c, 4, "b1"); got != ruleID {
		t.Errorf("b1's audit ruleId = %v, want %s (the rule its answer made)", got, ruleID)
	}

	// The same program and first words, other arguments: no card.
	bashCall(c, 5, "s", "b2", "npm test -- x")
	if r := c.result(5); r["decision"] != "allow-always-command" || r["timing"].(map[string]any)["prompted"] != false {
		t.Fatalf("b2 = %v; want it allowed by the rule without a card", r)
	}
	if got := auditRuleOf(t, c, 6, "b2"); got != ruleID {
		t.Errorf("b2's audit ruleId = %v, want %s", got, ruleID)
	}
	// Chained with a command no rule allows: a card, with no rule offered.
	bashCall(c, 7, "s", "b3", "npm test && echo x")
	card, id = cardOf(t, h)
	if slices.Contains(options(card), "allow-always-command") || !strings.Contains(card["prefixNote"].(string), "2 commands") {
		t.Errorf("card for a chained line = %v; want no command rule and a note saying why", card)
	}
	h.answer(t, id, "deny")
	if r, _ := c.answerOf(7); r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("b3 = %v", r)
	}
	if got := auditRuleOf(t, c, 8, "b3"); got != nil {
		t.Errorf("b3's audit ruleId = %v, want null", got)
	}
	h.terminate(t)

	// A restart on the same data dir keeps the rule.
	h = startHost(t, bin, "--data-dir", data)
	c = rpcClient{t, h}
	bashCall(c, 10, "s", "b4", "npm test -- y")
	if r := c.result(10); r["decision"] != "allow-always-command" || r["timing"].(map[string]any)["prompted"] != false {
		t.Fatalf("b4 after a restart = %v", r)
	}
	if got := c.call(11, "permissions.list", map[string]any{"workspace": ws}); len(got["rules"].([]any)) != 1 {
		t.Errorf("permissions.list by workspace after a restart = %v", got)
	}
	if got := c.call(12, "permissions.list", map[string]any{"workspace": filepath.Join(ws, "elsewhere")}); len(got["rules"].([]any)) != 0 {
		t.Errorf("permissions.list of another workspace = %v", got)
	}
	removed := c.call(13, "permissions.remove", map[string]any{"ruleId": ruleID})
	if removed["removed"].(map[string]any)["ruleId"] != ruleID {
		t.Errorf("permissions.remove = %v", removed)
	}
	c.send(14, "permissions.remove", map[string]any{"ruleId": ruleID})
	if _, code := c.answerOf(14); code == "" {
		t.Error("removing a removed rule succeeded")
	}
	if got := c.call(15, "permissions.list", map[string]any{}); len(got["rules"].([]any)) != 0 {
		t.Errorf("permissions.list after remove = %v", got)
	}
	bashCall(c, 16, "s", "b5", "npm test")
	denyNextCard(t, c, 16, "b5 after the rule was removed")
}

// A shortened prefix is kept as given; one that is not the suggestion's
// first words is a deny and keeps nothing.
func TestRememberedPrefixShortened(t *testing.T) {
	h, c, _, _ := sessionHost(t, "ask", nil)
	bashCall(c, 2, "s", "b1", "echo one two")
	_, id := cardOf(t, h)
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command", "prefix": "echo two"})
	if r, _ := c.answerOf(2); r["errorCode"] != "TOOL_DENIED" || !strings.Contains(r["message"].(string), "is not the card's suggestion") {
		t.Errorf("a prefix that is not the suggestion's start = %v; want a deny saying so", r)
	}
	bashCall(c, 3, "s", "b2", "echo one two")
	_, id = cardOf(t, h)
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command", "prefix": "echo"})
	if r := c.result(3); r["decision"] != "allow-always-command" {
		t.Fatalf("b2 = %v", r)
	}
	list := c.call(4, "permissions.list", map[string]any{"sessionId": "s"})
	if rules := list["rules"].([]any); len(rules) != 1 || rules[0].(map[string]any)["prefix"] != "echo" {
		t.Errorf("rules = %v; want one, echo", list)
	}
	bashCall(c, 5, "s", "b3", "echo three > /dev/null")
	if r := c.result(5); r["decision"] != "allow-always-command" || r["ok"] != true {
		t.Errorf("b3 = %v", r)
	}
	bashCall(c, 6, "s", "b4", "echo $(id)")
	denyNextCard(t, c, 6, "b4 (a substitution)")
}

// A rule's command writes no workspace file without a card (echo >>
// .git/config and a git rule would run a fsmonitor hook), and a shell
// named by its path gets no rule: the card offers none, a reply naming it
// is a deny, and /bin/bash -c still gets its card.
func TestRuleRefusesWritesAndShells(t *testing.T) {
	h, c, ws, _ := sessionHost(t, "ask", nil)
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	config := filepath.Join(ws, ".git", "config")
	os.WriteFile(config, []byte("[user]\n"), 0o644)
	bashCall(c, 2, "s", "b1", "echo one")
	_, id := cardOf(t, h)
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command", "prefix": "echo"})
	if r := c.result(2); r["decision"] != "allow-always-command" {
		t.Fatalf("b1 = %v", r)
	}
	bashCall(c, 3, "s", "b2", "echo hi 2>/dev/null")
	if r := c.result(3); r["decision"] != "allow-always-command" {
		t.Errorf("b2 = %v; want it allowed by the echo rule", r)
	}
	bashCall(c, 4, "s", "b3", `echo '[core]' >> .git/config ; echo '  fsmonitor = "id >&2"' >> .git/config`)
	denyNextCard(t, c, 4, "b3 (echo into .git/config)")
	bashCall(c, 5, "s", "b4", "echo x > "+config)
	denyNextCard(t, c, 5, "b4 (echo over .git/config by its absolute path)")
	if b, _ := os.ReadFile(config); string(b) != "[user]\n" {
		t.Errorf(".git/config = %q; want it untouched", b)
	}

	bashCall(c, 6, "s", "b5", "/bin/bash --version")
	card, id := cardOf(t, h)
	if slices.Contains(options(card), "allow-always-command") || !strings.Contains(fmt.Sprint(card["prefixNote"]), "/bin/bash runs") {
		t.Errorf("card for /bin/bash = %v; want no command rule and a note saying why", card)
	}
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command", "prefix": "/bin/bash"})
	if r, _ := c.answerOf(6); r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("a reply naming /bin/bash = %v; want a deny", r)
	}
	bashCall(c, 7, "s", "b6", "/bin/bash -c 'echo via-bash'")
	denyNextCard(t, c, 7, "b6 (/bin/bash -c)")
	list := c.call(8, "permissions.list", map[string]any{"sessionId": "s"})
	if rules := list["rules"].([]any); len(rules) != 1 || rules[0].(map[string]any)["prefix"] != "echo" {
		t.Errorf("rules = %v; want echo only", list)
	}
}

// A command that runs unconfined gets no rule and is matched by none:
// not with the commandSandbox setting off, not without Landlock.
func TestRuleOnlyUnderTheSandbox(t *testing.T) {
	h, c, _, _ := sessionHost(t, "ask", nil)
	bashCall(c, 2, "s", "b1", "echo one")
	card, id := cardOf(t, h)
	if !slices.Contains(options(card), "allow-always-command") {
		t.Skipf("no command rule offered under the sandbox (no Landlock here?): %v", card)
	}
	replyCard(t, h, id, map[string]any{"decision": "allow-always-command", "prefix": "echo"})
	if r := c.result(2); r["decision"] != "allow-always-command" {
		t.Fatalf("b1 = %v", r)
	}
	c.call(3, "settings.update", map[string]any{"commandSandbox": "off"})
	bashCall(c, 4, "s", "b2", "echo two")
	card, id = cardOf(t, h)
	if slices.Contains(options(card), "allow-always-command") || slices.Contains(options(card), "allow-always") {
		t.Errorf("card with the sandbox off = %v; want no remembered answers", card)
	}
	h.answer(t, id, "deny")
	if r, _ := c.answerOf(4); r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("b2 with the sandbox off = %v; want its card, denied", r)
	}

	h, c, _, _ = sessionHost(t, "ask", []string{"HOSTCORE_LANDLOCK=off"})
	bashCall(c, 2, "s", "b1", "echo one")
	card, id = cardOf(t, h)
	if slices.Contains(options(card), "allow-always-command") || slices.Contains(options(card), "allow-always") {
		t.Errorf("card without Landlock = %v; want no remembered answers", card)
	}
	h.answer(t, id, "deny")
	c.answerOf(2)
}

// allow-always for a tool covers that tool in that workspace, for every
// session on it; not another tool, not another workspace, not an outside
// path, not a call leaving the sandbox; and Plan mode still denies.
func TestRememberedToolRule(t *testing.T) {
	h, c, ws, _ := sessionHost(t, "ask", nil)
	write := func(id int, session, callID, path string) {
		c.send(id, "tools.execute", map[string]any{"sessionId": session, "turnId": "t", "toolCallId": callID, "toolName": "Write", "args": map[string]any{"path": path, "content": "x\n"}})
	}
	write(2, "s", "w1", "a.txt")
	card, id := cardOf(t, h)
	if got := options(card); !slices.Equal(got, []string{"allow-once", "allow-session", "allow-always", "deny"}) || card["suggestedPrefix"] != nil {
		t.Fatalf("Write card = %v", card)
	}
	h.answer(t, id, "allow-always")
	if r := c.result(2); r["decision"] != "allow-always" || r["ok"] != true {
		t.Fatalf("w1 = %v", r)
	}
	// Another session on the same workspace: no card.
	c.call(3, "session.create", map[string]any{"sessionId": "s2", "workspaceRoot": ws, "permissionMode": "ask"})
	write(4, "s2", "w2", "b.txt")
	if r := c.result(4); r["decision"] != "allow-always" || r["timing"].(map[string]any)["prompted"] != false {
		t.Fatalf("w2 = %v", r)
	}
	rule := c.call(5, "permissions.list", map[string]any{"sessionId": "s2"})["rules"].([]any)[0].(map[string]any)
	if rule["kind"] != "tool" || rule["toolName"] != "Write" || rule["prefix"] != nil {
		t.Errorf("rule = %v", rule)
	}
	if got := auditRuleOf(t, c, 6, "w2"); got != rule["ruleId"] {
		t.Errorf("w2's audit ruleId = %v, want %v", got, rule["ruleId"])
	}
	// Another tool: a card.
	c.send(7, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "e1", "toolName": "Edit", "args": map[string]any{"path": "a.txt", "old_string": "x", "new_string": "y"}})
	denyNextCard(t, c, 7, "e1, another tool")
	// An outside path: its own card, with no remembered answer offered.
	outside := filepath.Join(filepath.Dir(ws), "out")
	os.MkdirAll(outside, 0o755)
	write(8, "s", "w3", filepath.Join(outside, "x.txt"))
	card, id = cardOf(t, h)
	if card["reason"] != "outside-path" || !slices.Equal(options(card), []string{"allow-once", "allow-session", "deny"}) {
		t.Errorf("outside card = %v", card)
	}
	h.answer(t, id, "deny")
	if r, _ := c.answerOf(8); r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("w3 = %v", r)
	}
	// Another workspace: a card.
	other, _ := newWorkspace(t)
	c.call(9, "session.create", map[string]any{"sessionId": "o", "workspaceRoot": other, "permissionMode": "ask"})
	write(10, "o", "w4", "a.txt")
	denyNextCard(t, c, 10, "w4 in another workspace")
	// Plan mode still denies Write, rule or not, before any card.
	c.call(11, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": ws, "permissionMode": "ask", "mode": "plan"})
	write(12, "p", "w5", "c.txt")
	if r, _ := c.answerOf(12); r["errorCode"] != "TOOL_DENIED" || r["timing"].(map[string]any)["prompted"] != false {
		t.Errorf("w5 in plan mode = %v; want TOOL_DENIED without a card", r)
	}

	// A Bash tool rule; a call leaving the sandbox still gets its card,
	// which offers no remembered answer and takes none.
	bashCall(c, 13, "s", "b1", "echo hi")
	h.answer(t, h.nextCard(t), "allow-always")
	c.result(13)
	bashCall(c, 14, "s", "b2", "echo again && echo more")
	if r := c.result(14); r["decision"] != "allow-always" {
		t.Errorf("b2 under the Bash rule = %v", r)
	}
	// The sensitive-path denylist holds before any rule is read.
	bashCall(c, 16, "s", "b4", "cat ~/.ssh/id_rsa")
	if r, _ := c.answerOf(16); r["errorCode"] != "TOOL_DENIED" || r["decision"] != "policy-deny" {
		t.Errorf("a sensitive path under the Bash rule = %v; want policy-deny", r)
	}
	off := map[string]any{"command": "echo out", "sandbox": "off", "justification": "a test"}
	c.h.send(t, execLine(15, "s", "b3", "Bash", off, nil))
	card, id = cardOf(t, h)
	if !slices.Equal(options(card), []string{"allow-once", "allow-session", "deny"}) {
		t.Errorf("unsandboxed card = %v", card)
	}
	h.answer(t, id, "allow-always")
	if r, _ := c.answerOf(15); r["errorCode"] != "TOOL_DENIED" || !strings.Contains(r["message"].(string), "is not allow-once, allow-session or deny") {
		t.Errorf("allow-always on an unsandboxed card = %v; want a deny", r)
	}
}
