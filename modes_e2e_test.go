package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func execLine(id int, session, callID, tool string, args map[string]any, extra map[string]any) string {
	params := map[string]any{"sessionId": session, "turnId": "t", "toolCallId": callID, "toolName": tool, "args": args}
	for k, v := range extra {
		params[k] = v
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools.execute", "params": params})
	return string(b)
}

// A Write on the line after EnterPlanMode either lands before the switch
// or is refused: once EnterPlanMode has answered, the file is complete or
// will never be written. Before, a Write that passed its mode check was
// still being written after EnterPlanMode answered (15 of 60 runs with a
// 12 MiB file).
func TestWriteAfterEnterPlanModeLandsBeforeTheSwitchOrNotAtAll(t *testing.T) {
	_, h, c, ws, _ := hostWithSession(t, "auto")
	content := strings.Repeat("w", 12<<20)
	id := 10
	for round := range 12 {
		sid := fmt.Sprint("r", round)
		c.call(id, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": ws, "permissionMode": "auto"})
		name := sid + ".txt"
		h.send(t, execLine(id+1, sid, "enter", "EnterPlanMode", map[string]any{}, nil)+"\n"+
			execLine(id+2, sid, "write", "Write", map[string]any{"path": name, "content": content}, nil))
		if r := c.result(id + 1); r["ok"] != true {
			t.Fatalf("%s: EnterPlanMode: %v", sid, r)
		}
		atSwitch, _ := os.ReadFile(filepath.Join(ws, name))
		w := c.result(id + 2)
		switch {
		case w["ok"] == true && len(atSwitch) != len(content):
			t.Fatalf("%s: the Write landed after EnterPlanMode answered (%d of %d bytes there when it did)", sid, len(atSwitch), len(content))
		case w["ok"] != true && w["errorCode"] != "TOOL_DENIED":
			t.Fatalf("%s: the Write: %v", sid, w)
		}
		id += 3
	}
}

// session.configure changes the permission mode only: racing
// EnterPlanMode, it used to write back the mode it had read (9 of 600
// runs left the session in agent mode after EnterPlanMode said plan).
func TestConfigureDoesNotUndoEnterPlanMode(t *testing.T) {
	_, h, c, ws, _ := hostWithSession(t, "ask")
	id := 10
	for round := range 30 {
		sid := fmt.Sprint("c", round)
		c.call(id, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": ws, "permissionMode": "ask"})
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id + 2, "method": "session.configure", "params": map[string]any{"sessionId": sid, "permissionMode": "auto"}})
		h.send(t, execLine(id+1, sid, "enter", "EnterPlanMode", map[string]any{}, nil)+"\n"+string(b))
		enter, conf := c.result(id+1), c.result(id+2)
		got := c.call(id+3, "session.get", map[string]any{"sessionId": sid})
		if enter["ok"] == true && got["mode"] != "plan" {
			t.Fatalf("%s: EnterPlanMode said ok, configure answered mode %v, the session is in %v", sid, conf["mode"], got["mode"])
		}
		id += 4
	}
}

// A delegate's Bash whose card is answered after the session entered Plan
// is refused, as it would be if sent then. A 12 MiB Write between them
// holds the switch back while the Bash is first checked, so the Bash
// mostly gets its card in agent mode; a round where it does not is
// refused at once, which is right too.
func TestDelegateBashApprovedAfterEnterPlanModeIsRefused(t *testing.T) {
	_, h, c, ws, _ := hostWithSession(t, "accept-edits")
	workers := []any{map[string]any{"name": "worker", "tools": "*"}}
	carded := 0
	for round := range 10 {
		sid := fmt.Sprint("d", round)
		id := 10 + 10*round
		// (session.create takes no subagents: given there, they were
		// ignored, and this test's delegate never existed, until unknown
		// members were refused.)
		c.call(id, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": ws, "permissionMode": "accept-edits"})
		c.call(id+9, "session.configure", map[string]any{"sessionId": sid, "subagents": workers})
		file := sid + ".txt"
		h.send(t, execLine(id+1, sid, "enter", "EnterPlanMode", map[string]any{}, nil)+"\n"+
			execLine(id+4, sid, "big", "Write", map[string]any{"path": sid + ".big", "content": strings.Repeat("b", 12<<20)}, nil)+"\n"+
			execLine(id+2, sid, "dlg", "Bash", map[string]any{"command": "echo ran > " + file}, map[string]any{"delegate": "worker"}))
		if r := c.result(id + 1); r["ok"] != true {
			t.Fatalf("EnterPlanMode: %v", r)
		}
		line := h.nextOf(t, `{"method":"permission.request"}`, fmt.Sprintf(`{"id":%d}`, id+2))
		var m struct {
			ID     json.RawMessage
			Method string
			Result map[string]any
		}
		json.Unmarshal([]byte(line), &m)
		if m.Method != "" {
			carded++
			h.answer(t, m.ID, "allow-once")
			m.Result = c.result(id + 2)
		}
		if m.Result["errorCode"] != "TOOL_DENIED" {
			t.Fatalf("%s: the delegate's Bash in plan mode: %v", sid, m.Result)
		}
		if _, err := os.Stat(filepath.Join(ws, file)); err == nil {
			t.Fatalf("%s: the delegate's Bash ran in plan mode", sid)
		}
		// tools.list for the delegate says the same.
		list := c.call(id+3, "tools.list", map[string]any{"sessionId": sid, "delegate": "worker"})
		if b, _ := json.Marshal(list); bytes.Contains(b, []byte(`"Bash"`)) {
			t.Fatalf("tools.list offers the delegate Bash in plan mode: %s", b)
		}
	}
	t.Logf("%d of 10 delegate calls got their card before the switch", carded)
}

// Approving one plan ends the round: the plans submitted beside it are
// superseded and cannot end a later round.
func TestApprovalFromAnEarlierRoundCannotEndALaterOne(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	run := func(id int, callID, tool string, args map[string]any) map[string]any {
		return c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": callID, "toolName": tool, "args": args})
	}
	run(2, "e1", "EnterPlanMode", map[string]any{})
	v1 := run(3, "p1", "SubmitPlan", map[string]any{"markdown": "# v1\n"})
	v2 := run(4, "p2", "SubmitPlan", map[string]any{"markdown": "# v2\n"})
	approvalOf := func(r map[string]any) string { return r["details"].(map[string]any)["approvalId"].(string) }
	if r := c.call(5, "approval.resolve", map[string]any{"sessionId": "s", "approvalId": approvalOf(v2), "decision": "approve"}); r["mode"] != "agent" {
		t.Fatalf("approving v2: %v", r)
	}
	run(6, "e2", "EnterPlanMode", map[string]any{})
	c.send(7, "approval.resolve", map[string]any{"sessionId": "s", "approvalId": approvalOf(v1), "decision": "approve"})
	if _, code := c.answerOf(7); code != "error:CONFLICT" {
		t.Fatalf("approving v1 of the first round in the second: %q", code)
	}
	if got := c.call(8, "session.get", map[string]any{"sessionId": "s"}); got["mode"] != "plan" {
		t.Fatalf("the second round was ended: mode %v", got["mode"])
	}
}

// A Temporary session cannot enter a mode it could never leave (nothing
// can be submitted without a workspace).
func TestTemporarySessionCannotEnterPlanMode(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "session.create", map[string]any{"sessionId": "tmp", "workspaceRoot": nil})
	r := c.call(3, "tools.execute", map[string]any{"sessionId": "tmp", "turnId": "t", "toolCallId": "e", "toolName": "EnterPlanMode", "args": map[string]any{}})
	if r["errorCode"] != "NO_WORKSPACE" {
		t.Fatalf("EnterPlanMode in a Temporary session: %v", r)
	}
}

// A control call refused before it ran keeps its id free: the same call
// succeeds once what stopped it is gone.
func TestRefusedControlCallsCanBeSentAgain(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	task := map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "task1", "toolName": "Task", "args": map[string]any{"subagent": "helper", "prompt": "look"}}
	if r := c.call(2, "tools.execute", task); r["ok"] != false {
		t.Fatalf("Task without subagents: %v", r)
	}
	c.call(3, "session.configure", map[string]any{"sessionId": "s", "subagents": []any{map[string]any{"name": "helper"}}})
	if r := c.call(4, "tools.execute", task); r["ok"] != true {
		t.Fatalf("the same Task once the subagent exists: %v", r)
	}
	bad := map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "enter1", "toolName": "EnterPlanMode", "args": map[string]any{}, "batchSize": 0}
	if r := c.call(5, "tools.execute", bad); r["errorCode"] != "INVALID_ARGUMENT" {
		t.Fatalf("batchSize 0: %v", r)
	}
	bad["batchSize"] = 1
	if r := c.call(6, "tools.execute", bad); r["ok"] != true {
		t.Fatalf("the same EnterPlanMode with batchSize 1: %v", r)
	}
}

// A Write to an outside path refused by plan mode before its path was
// resolved was audited with externalPath null (a review of the cards).
func TestPlanRefusalClassifiesAnOutsidePath(t *testing.T) {
	_, _, c, _, _ := hostWithSession(t, "auto")
	c.call(2, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": t.TempDir(), "mode": "plan", "permissionMode": "auto"})
	r := c.call(3, "tools.execute", map[string]any{"sessionId": "p", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": "/tmp/outside-plan.txt", "content": "x"}})
	if r["errorCode"] != "TOOL_DENIED" {
		t.Fatalf("plan Write: %v", r)
	}
	rows := c.call(4, "audit.query", map[string]any{"sessionId": "p", "toolCallId": "w"})["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["externalPath"] != "denied" {
		t.Fatalf("audit: %v", rows)
	}
}
