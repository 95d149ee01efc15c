package frontend

import (
	"context"
	"strings"
	"testing"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// memStore is a session table in memory.
type memStore map[string]store.Session

func (m memStore) GetSession(_ context.Context, id string) (store.Session, error) {
	s, ok := m[id]
	if !ok {
		return s, store.ErrNotFound
	}
	return s, nil
}

func (m memStore) CreateSession(_ context.Context, s store.Session) error {
	if _, ok := m[s.ID]; ok {
		return store.ErrExists
	}
	m[s.ID] = s
	return nil
}

func (m memStore) UpdateSession(_ context.Context, s store.Session) error {
	m[s.ID] = s
	return nil
}

// TestOneSessionPerWorkspace: the same workspace gives the same session,
// created in agent mode and carrying the mode the frontend started with
// last; another workspace another session.
func TestOneSessionPerWorkspace(t *testing.T) {
	st := memStore{}
	id, err := EnsureSession(t.Context(), st, "mcp", "/ws/a", perms.ModeAsk)
	if err != nil || !strings.HasPrefix(id, "mcp-") || id != SessionID("mcp", "/ws/a") {
		t.Fatalf("first: %q, %v", id, err)
	}
	again, err := EnsureSession(t.Context(), st, "mcp", "/ws/a", perms.ModeAuto)
	if err != nil || again != id || st[id].PermissionMode != perms.ModeAuto || st[id].Mode != perms.OpAgent {
		t.Fatalf("again: %q, %v, session %+v", again, err, st[id])
	}
	if other := SessionID("mcp", "/ws/b"); other == id {
		t.Fatal("two workspaces share a session")
	}
	// A session of that id bound elsewhere is refused, not rebound.
	st[id] = store.Session{ID: id, WorkspaceRoot: "/elsewhere"}
	if _, err := EnsureSession(t.Context(), st, "mcp", "/ws/a", perms.ModeAsk); err == nil {
		t.Fatal("rebound a session bound to another workspace")
	}
}

func def(name string, class perms.Class, risk string) *tools.Def {
	d := &tools.Def{}
	d.Name, d.Class, d.Risk = name, class, risk
	return d
}

// TestServesFileToolsAndCommands: a frontend lists the file tools and
// Bash, marked as reading or destructive, and none of the control tools,
// BrowserPreview or plugin tools.
func TestServesFileToolsAndCommands(t *testing.T) {
	for _, c := range []struct {
		d                   *tools.Def
		served, destructive bool
	}{
		{def("Read", perms.ClassRead, perms.RiskLow), true, false},
		{def("Write", perms.ClassEdit, perms.RiskMedium), true, true},
		{def("Bash", perms.ClassExec, perms.RiskHigh), true, true},
		{def("BrowserPreview", perms.ClassRead, perms.RiskLow), false, false},
		{def("EnterPlanMode", perms.ClassControl, perms.RiskLow), false, false},
		{def("mcp_x", perms.ClassPlugin, perms.RiskLow), false, false},
	} {
		ft, ok := Serves(c.d)
		if ok != c.served || (ok && (ft.Destructive != c.destructive || ft.ReadOnly == c.destructive || ft.Name != c.d.Name)) {
			t.Errorf("%s: served %v as %+v", c.d.Name, ok, ft)
		}
	}
}

// TestModeWithoutCard names the least permissive mode that runs the call
// without a card: accept-edits for a Write, auto for a path outside.
func TestModeWithoutCard(t *testing.T) {
	w := def("Write", perms.ClassEdit, perms.RiskMedium)
	if got := ModeWithoutCard(w, perms.ReasonTool); got != perms.ModeAcceptEdits {
		t.Errorf("Write: %q", got)
	}
	if got := ModeWithoutCard(w, perms.ReasonOutsidePath); got != perms.ModeAuto {
		t.Errorf("Write outside: %q", got)
	}
}
