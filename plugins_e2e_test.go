package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func register(id string, grants []string, tools ...map[string]any) map[string]any {
	if tools == nil {
		tools = []map[string]any{}
	}
	return map[string]any{"pluginId": id, "grants": grants, "tools": tools}
}

var toolGrant = []string{"agent.tool.register"}

// toolNames lists tools.list's names for a session.
func toolNames(c rpcClient, id int, session string) []string {
	var names []string
	for _, t := range c.call(id, "tools.list", map[string]any{"sessionId": session})["tools"].([]any) {
		names = append(names, t.(map[string]any)["name"].(string))
	}
	return names
}

// A plugin schema 4,500 levels deep (a 95 KB line) took 75 s to compile,
// inline: every line after it waited, and cards answered meanwhile timed
// out. Schemas are now bounded in depth and size, and refused at once.
func TestPluginSchemaBoundsAreRefusedAtOnce(t *testing.T) {
	_, h, c, _, _ := hostWithSession(t, "auto")
	for _, depth := range []int{100, 4500} {
		deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"properties":{"a":`, depth) + `{}` + strings.Repeat(`}}`, depth) + `}}`
		h.send(t, `{"jsonrpc":"2.0","id":2,"method":"plugins.register","params":{"pluginId":"deep","grants":["agent.tool.register"],"tools":[{"name":"t","inputSchema":`+deep+`}]}}`)
		var m struct{ Error struct{ Message string } }
		json.Unmarshal([]byte(h.next(t, `{"id":2}`)), &m)
		if want := map[int]string{100: "deeper than", 4500: "at most 64 KiB"}[depth]; !strings.Contains(m.Error.Message, want) {
			t.Fatalf("schema %d deep: %+v", depth, m)
		}
	}
	wide := map[string]any{}
	for i := range 5000 {
		wide[strings.Repeat("p", 8)+string(rune('a'+i%26))+strings.Repeat("x", i%50)+string(rune('A'+i/200))] = map[string]any{"type": "string", "description": "a property of the tool"}
	}
	c.send(3, "plugins.register", register("wide", toolGrant, map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object", "properties": wide}}))
	if _, code := c.answerOf(3); code != "error:INVALID_ARGUMENT" {
		t.Fatalf("a schema over 64 KiB: %q", code)
	}
	if names := toolNames(c, 4, "s"); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "plugin_") }) {
		t.Fatalf("a refused registration left tools: %v", names)
	}
}

// The tool a call runs is the one its line named when read: a
// registration on a later line does not take it away (5 of 5 runs
// answered UNKNOWN_TOOL). One withdrawn while the call's card is open
// does not run.
func TestPluginToolIsTheOneTheLineNamed(t *testing.T) {
	_, h, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "plugins.register", register("p", toolGrant, map[string]any{"name": "t"}))
	pipe(t, h,
		execLine(3, "s", "c1", "plugin_p_t", map[string]any{}, nil),
		line(4, "plugins.register", register("p", toolGrant)))
	var inv struct {
		ID json.RawMessage
	}
	json.Unmarshal([]byte(h.next(t, `{"method":"plugin.invoke"}`)), &inv)
	h.send(t, `{"jsonrpc":"2.0","id":`+string(inv.ID)+`,"result":{"content":[{"type":"text","text":"done"}]}}`)
	if r, _ := c.answerOf(3); r["ok"] != true {
		t.Errorf("a call read before its tool was withdrawn: %v", r)
	}
	c.answerOf(4)

	// Withdrawn while its card is open.
	c.call(5, "session.configure", map[string]any{"sessionId": "s", "permissionMode": "ask"})
	c.call(6, "plugins.register", register("p", toolGrant, map[string]any{"name": "t"}))
	c.send(7, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c2", "toolName": "plugin_p_t", "args": map[string]any{}})
	card := h.nextCard(t)
	c.call(8, "plugins.register", register("p", toolGrant))
	h.answer(t, card, "allow-once")
	if r, _ := c.answerOf(7); r["ok"] != false || r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("a tool withdrawn while its card was open: %v", r)
	}
	for _, l := range h.held {
		if strings.Contains(l, `"plugin.invoke"`) {
			t.Errorf("plugin.invoke sent for a withdrawn tool: %s", l)
		}
	}
}

// A plugin registering again without the grant keeps none of its tools
// (they stayed listed and callable).
func TestPluginWithoutTheGrantLosesItsTools(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "plugins.register", register("p", toolGrant, map[string]any{"name": "n"}))
	r := c.call(3, "plugins.register", register("p", []string{}))
	if !strings.Contains(r["message"].(string), "withdrawn") {
		t.Errorf("answer: %v", r)
	}
	if names := toolNames(c, 4, "s"); slices.Contains(names, "plugin_p_n") {
		t.Fatalf("tools.list still offers plugin_p_n: %v", names)
	}
	if r, _ := c.call(5, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "x", "toolName": "plugin_p_n", "args": map[string]any{}}), ""; r["errorCode"] != "UNKNOWN_TOOL" {
		t.Fatalf("plugin_p_n still runs: %v", r)
	}
}

// A Temporary session is offered only what it can run (design section
// 4b: high-risk tools are unavailable without a project); a high-risk
// plugin tool ran there, with no card under auto.
func TestTemporarySessionOffersOnlyWhatItCanRun(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "plugins.register", register("deploy", toolGrant, map[string]any{"name": "push", "risk": "high"}, map[string]any{"name": "look", "risk": 5}))
	c.call(3, "session.create", map[string]any{"sessionId": "tmp", "workspaceRoot": nil, "permissionMode": "auto"})
	names := toolNames(c, 4, "tmp")
	for _, n := range []string{"Write", "Edit", "Bash", "BrowserPreview", "EnterPlanMode", "EnterGoalMode", "plugin_deploy_push"} {
		if slices.Contains(names, n) {
			t.Errorf("a Temporary session is offered %s: %v", n, names)
		}
	}
	for _, n := range []string{"Read", "Glob", "Grep", "plugin_deploy_look"} {
		if !slices.Contains(names, n) {
			t.Errorf("a Temporary session lacks %s: %v", n, names)
		}
	}
	if r := c.call(5, "tools.execute", map[string]any{"sessionId": "tmp", "turnId": "t", "toolCallId": "x", "toolName": "plugin_deploy_push", "args": map[string]any{}}); r["errorCode"] != "NO_WORKSPACE" {
		t.Fatalf("a high-risk plugin tool in a Temporary session: %v", r)
	}
	// A risk that is not a string defaults to medium (design section 11)
	// instead of refusing the registration.
	for _, ti := range c.call(6, "tools.list", map[string]any{"sessionId": "s"})["tools"].([]any) {
		if m := ti.(map[string]any); m["name"] == "plugin_deploy_look" && m["risk"] != "medium" {
			t.Errorf("risk 5: %v", m["risk"])
		}
	}
}

// A plugin.invoke reply without content was an empty success; an image
// block lost its data without a word; an error reply's message came with
// the library's framing and unredacted (reviews of the plugin tools).
func TestPluginRepliesAreCheckedAndRedacted(t *testing.T) {
	_, h, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "plugins.register", register("p", toolGrant, map[string]any{"name": "t"}))
	for i, tc := range []struct {
		reply   string
		ok      bool
		want    string
		notWant string
	}{
		{`"result":{"foo":1}`, false, "content is required", ""},
		{`"result":null`, false, "content is required", ""},
		{`"result":{"content":[{"type":"image","data":"AAAA"}]}`, true, `block of type \"image\"`, ""},
		{`"error":{"code":5,"message":"upstream said token=sk-abcdefghijklmnopqrstuv"}`, false, "upstream said", "sk-abcdefghijklmnopqrstuv"},
	} {
		c.send(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c" + string(rune('a'+i)), "toolName": "plugin_p_t", "args": map[string]any{}})
		var inv struct{ ID json.RawMessage }
		json.Unmarshal([]byte(h.next(t, `{"method":"plugin.invoke"}`)), &inv)
		h.send(t, `{"jsonrpc":"2.0","id":`+string(inv.ID)+`,`+tc.reply+`}`)
		r, _ := c.answerOf(10 + i)
		b, _ := json.Marshal(r)
		if r["ok"] != tc.ok || !strings.Contains(string(b), tc.want) || (tc.notWant != "" && strings.Contains(string(b), tc.notWant)) || strings.Contains(string(b), "jsonrpc2:") {
			t.Errorf("reply %s: %s", tc.reply, b)
		}
	}
}
