package handlers

import (
	"encoding/json"
	"slices"
	"testing"

	"hostcore/perms"
)

// TestRulesOnlyUnderTheSandbox: a Bash card offers allow-always and
// allow-always-command, and a remembered rule is looked up, only when the
// command runs under Landlock; a call that asks sandbox "off", the
// commandSandbox setting off and a system without Landlock all run it
// unconfined, where a rule would let any command it covers reach the
// whole machine.
func TestRulesOnlyUnderTheSandbox(t *testing.T) {
	bashArgs := json.RawMessage(`{"command":"npm test"}`)
	offers := func(c *call) bool {
		c.sess.WorkspaceRoot = t.TempDir()
		return slices.Contains(c.offer(perms.ReasonTool).options, perms.AllowAlwaysCommand)
	}

	t.Setenv(landlockOffVar, "")
	if sandboxStatus().Kind != "none" {
		if c := cardCall(t, "Bash", bashArgs, ""); !c.ruleable() || !offers(c) {
			t.Errorf("sandboxed Bash call: ruleable %v, offer %v; want a rule offered", c.ruleable(), c.offer(perms.ReasonTool).options)
		}
	}
	c := cardCall(t, "Bash", json.RawMessage(`{"command":"npm test","sandbox":"off","justification":"x"}`), "")
	if c.ruleable() || offers(c) {
		t.Errorf(`sandbox "off" call: ruleable %v, offer %v`, c.ruleable(), c.offer(perms.ReasonTool).options)
	}
	c = cardCall(t, "Bash", bashArgs, "")
	if err := c.s.store.SetSetting(t.Context(), keyCommandSandbox, sandboxOff); err != nil {
		t.Fatal(err)
	}
	if c.ruleable() || offers(c) || slices.Contains(c.offer(perms.ReasonTool).options, perms.AllowAlways) {
		t.Errorf("commandSandbox off: ruleable %v, offer %v", c.ruleable(), c.offer(perms.ReasonTool).options)
	}
	t.Setenv(landlockOffVar, "off")
	c = cardCall(t, "Bash", bashArgs, "")
	if c.ruleable() || offers(c) {
		t.Errorf("no Landlock: ruleable %v, offer %v", c.ruleable(), c.offer(perms.ReasonTool).options)
	}
	// Other tools' rules do not depend on the command sandbox.
	if c := cardCall(t, "Write", json.RawMessage(`{"file_path":"/x","content":""}`), "/x"); !c.ruleable() {
		t.Error("a Write call is not ruleable without Landlock")
	}
}
