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
