//go:build linux

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMCPBackgroundCommands: over MCP the background tools work as over
// the native protocol, KillShell included (the session started what it
// ends), and the connection's end is the session's: what still runs is
// killed with its tree.
func TestMCPBackgroundCommands(t *testing.T) {
	t.Parallel()
	ws, data := newWorkspace(t)
	h := startMCP(t, nil, "--workspace", ws, "--data-dir", data, "--permission-mode", "auto")
	list, err := h.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]string{}
	for _, tool := range list.Tools {
		if a := tool.Annotations; a != nil {
			hints[tool.Name] = fmt.Sprintf("readOnly=%v idempotent=%v destructive=%v", a.ReadOnlyHint, a.IdempotentHint, a.DestructiveHint != nil && *a.DestructiveHint)
		}
	}
	// A read returns what is new since the last: not idempotent.
	for name, want := range map[string]string{
		"BashOutput": "readOnly=true idempotent=false destructive=false",
		"KillShell":  "readOnly=false idempotent=false destructive=true",
	} {
		if hints[name] != want {
			t.Errorf("%s: %q, want %q", name, hints[name], want)
		}
	}
	ctx := t.Context()
	m, kept := sleepMarker(), sleepMarker()
	start := func(command string) string {
		t.Helper()
		res := h.call(t, ctx, "Bash", map[string]any{"command": command, "runInBackground": true})
		id, _ := details(structured(t, res))["shellId"].(string)
		if res.IsError || !strings.HasPrefix(id, "bash_") {
			t.Fatalf("Bash in the background: %q %v", text(res), res.StructuredContent)
		}
		return id
	}
	killed := start(fmt.Sprintf("echo up; setsid sleep %[1]s & sleep %[1]s", m))
	start("sleep " + kept)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res := h.call(t, ctx, "BashOutput", map[string]any{"shellId": killed})
		if strings.Contains(fmt.Sprint(details(structured(t, res))["stdout"]), "up") {
			break
		}
		if res.IsError || time.Now().After(deadline) {
			t.Fatalf("BashOutput: %q", text(res))
		}
	}
	waitSurvivors(t, m, 2)
	res := h.call(t, ctx, "KillShell", map[string]any{"shellId": killed})
	if res.IsError || details(structured(t, res))["killed"] != true {
		t.Fatalf("KillShell: %q", text(res))
	}
	if left := survivors(m); len(left) > 0 {
		t.Fatalf("KillShell left %v", left)
	}
	waitSurvivors(t, kept, 1)
	h.close()
	assertNoSurvivors(t, kept, 5*time.Second)
}
