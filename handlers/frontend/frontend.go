package frontend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// Tool is one tool as a frontend lists it.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// ReadOnly tools only read (Read, Glob, Grep); Destructive ones may
	// change or delete what is there (Write, Edit, Bash).
	ReadOnly    bool
	Destructive bool
}

// SessionID is the session a frontend serves for a workspace: the same
// canonical workspace always gives the same id, so restarting the
// frontend on the same data dir continues the session (its audit, its
// call ids) instead of piling up new ones.
func SessionID(frontend, canonicalWorkspace string) string {
	sum := sha256.Sum256([]byte(canonicalWorkspace))
	return frontend + "-" + hex.EncodeToString(sum[:8])
}

// Store is where a frontend's session is kept.
type Store interface {
	GetSession(ctx context.Context, id string) (store.Session, error)
	CreateSession(ctx context.Context, s store.Session) error
	UpdateSession(ctx context.Context, s store.Session) error
}

// EnsureSession creates, or reuses, the agent-mode session of a frontend
// bound to the canonical workspace root, and stores permissionMode on
// it: the mode a frontend was started with is the one that applies,
// whatever an earlier run used.
func EnsureSession(ctx context.Context, st Store, frontend, root, permissionMode string) (string, error) {
	id := SessionID(frontend, root)
	for range 2 {
		row, err := st.GetSession(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			row = store.Session{ID: id, WorkspaceRoot: root, PermissionMode: permissionMode, Mode: perms.OpAgent, Subagents: "[]", CreatedAt: store.Now()}
			err = st.CreateSession(ctx, row)
			if errors.Is(err, store.ErrExists) {
				continue // another frontend process created it first
			}
			if err != nil {
				return "", fmt.Errorf("creating session: %w", err)
			}
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("looking up session: %w", err)
		}
		if row.WorkspaceRoot != root {
			return "", fmt.Errorf("session %s is bound to %s, not %s", id, row.WorkspaceRoot, root)
		}
		if row.PermissionMode != permissionMode {
			row.PermissionMode = permissionMode
			if err := st.UpdateSession(ctx, row); err != nil {
				return "", fmt.Errorf("updating session: %w", err)
			}
		}
		return id, nil
	}
	return "", fmt.Errorf("session %s: created and missing at once", id)
}

// Serves says whether a frontend lists t, and how: the tools that only
// make sense to hostcore's own agent runtime are left out. Control tools
// (mode and submit tools, whose approval needs approval.resolve;
// new_context; ToolSearch, as every tool is listed at once; Task;
// asktool) and BrowserPreview (it opens a panel of the native client)
// are; so are plugin tools, which only a native client can register.
func Serves(t *tools.Def) (Tool, bool) {
	switch {
	case t.Name == "BrowserPreview":
		return Tool{}, false
	// KillShell ends what the frontend's own Bash ran in the background.
	case t.Class == perms.ClassRead, t.Class == perms.ClassEdit, t.Class == perms.ClassExec, t.Name == "KillShell":
		return Tool{Name: t.Name, Description: t.Description, InputSchema: t.SchemaJSON,
			ReadOnly: t.Class == perms.ClassRead, Destructive: t.Class != perms.ClassRead}, true
	}
	return Tool{}, false
}

// ModeWithoutCard names the least permissive permission mode under which
// a call of t that needed a card (reason "tool" or "outside-path") runs
// without one, or "" when none does. A frontend that cannot show cards
// says it in its fail-closed message.
func ModeWithoutCard(t *tools.Def, reason string) string {
	for _, m := range []string{perms.ModeAcceptEdits, perms.ModeAuto} {
		v := perms.Decide(perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: perms.OpAgent, PermMode: m,
			Outside: reason == perms.ReasonOutsidePath})
		if v.Outcome == perms.Allow {
			return m
		}
	}
	return ""
}
