package store

import (
	"context"
	"encoding/json"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// rulesSchema is the migration that adds remembered approvals (the
// allow-always answers of permission cards) and the audit column naming
// the rule that allowed a call. A rule is kept per workspace, not per
// session: it is the user's standing answer for a project, and survives
// restarts and the sessions that made it. The unique index makes the same
// answer given twice one rule.
const rulesSchema = `CREATE TABLE permission_rules (
		id TEXT PRIMARY KEY,
		workspace TEXT NOT NULL,
		kind TEXT NOT NULL,
		tool_name TEXT NOT NULL,
		plugin_id TEXT NOT NULL DEFAULT '',
		plugin_tool TEXT NOT NULL DEFAULT '',
		prefix TEXT NOT NULL DEFAULT '[]',
		session_id TEXT NOT NULL,
		tool_call_id TEXT NOT NULL,
		created_at TEXT NOT NULL
	);
	CREATE UNIQUE INDEX permission_rules_what ON permission_rules (workspace, kind, tool_name, plugin_id, plugin_tool, prefix);
	ALTER TABLE audit ADD COLUMN rule_id TEXT;`

// Rule is a remembered approval: every call of a tool in a workspace
// (kind "tool"), or the Bash commands that start with Prefix (kind
// "command"; see perms/rules).
type Rule struct {
	ID        string
	Workspace string
	Kind      string
	// ToolName is the tool's name as called; PluginID and PluginTool
	// name a plugin's tool apart, as allow-session grants do.
	ToolName, PluginID, PluginTool string
	Prefix                         []string
	// SessionID and ToolCallID are the card whose answer made the rule.
	SessionID, ToolCallID string
	CreatedAt             string
}

const ruleCols = `id, workspace, kind, tool_name, plugin_id, plugin_tool, prefix, session_id, tool_call_id, created_at`

func scanRule(st *sqlite.Stmt) Rule {
	r := Rule{
		ID: st.ColumnText(0), Workspace: st.ColumnText(1), Kind: st.ColumnText(2), ToolName: st.ColumnText(3),
		PluginID: st.ColumnText(4), PluginTool: st.ColumnText(5), SessionID: st.ColumnText(7), ToolCallID: st.ColumnText(8),
		CreatedAt: st.ColumnText(9),
	}
	json.Unmarshal([]byte(st.ColumnText(6)), &r.Prefix)
	return r
}

// AddRule stores r and returns the rule as stored: an equal rule stored
// before (same workspace, kind, tool and prefix) is returned as it is,
// with its own id.
func (s *Store) AddRule(ctx context.Context, r Rule) (Rule, error) {
	if r.Prefix == nil {
		r.Prefix = []string{}
	}
	prefix, err := json.Marshal(r.Prefix)
	if err != nil {
		return Rule{}, err
	}
	var out Rule
	err = s.write(ctx, func(conn *sqlite.Conn) error {
		err := sqlitex.Execute(conn, `INSERT OR IGNORE INTO permission_rules (`+ruleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, &sqlitex.ExecOptions{
			Args: []any{r.ID, r.Workspace, r.Kind, r.ToolName, r.PluginID, r.PluginTool, string(prefix), r.SessionID, r.ToolCallID, r.CreatedAt},
		})
		if err != nil {
			return err
		}
		return sqlitex.Execute(conn, `SELECT `+ruleCols+` FROM permission_rules
			WHERE workspace = ? AND kind = ? AND tool_name = ? AND plugin_id = ? AND plugin_tool = ? AND prefix = ?`, &sqlitex.ExecOptions{
			Args:       []any{r.Workspace, r.Kind, r.ToolName, r.PluginID, r.PluginTool, string(prefix)},
			ResultFunc: func(st *sqlite.Stmt) error { out = scanRule(st); return nil },
		})
	})
	return out, err
}

// Rules lists the rules of a workspace, or of every workspace when
// workspace is "", oldest first.
func (s *Store) Rules(ctx context.Context, workspace string) ([]Rule, error) {
	out := []Rule{}
	q, args := `SELECT `+ruleCols+` FROM permission_rules ORDER BY created_at, id`, []any(nil)
	if workspace != "" {
		q, args = `SELECT `+ruleCols+` FROM permission_rules WHERE workspace = ? ORDER BY created_at, id`, []any{workspace}
	}
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, q, &sqlitex.ExecOptions{
			Args:       args,
			ResultFunc: func(st *sqlite.Stmt) error { out = append(out, scanRule(st)); return nil },
		})
	})
	return out, err
}

// RemoveRule deletes a rule and returns it; ErrNotFound if there is none.
func (s *Store) RemoveRule(ctx context.Context, id string) (Rule, error) {
	var out Rule
	found := false
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		err := sqlitex.Execute(conn, `SELECT `+ruleCols+` FROM permission_rules WHERE id = ?`, &sqlitex.ExecOptions{
			Args:       []any{id},
			ResultFunc: func(st *sqlite.Stmt) error { out, found = scanRule(st), true; return nil },
		})
		if err != nil || !found {
			return err
		}
		return sqlitex.Execute(conn, `DELETE FROM permission_rules WHERE id = ?`, &sqlitex.ExecOptions{Args: []any{id}})
	})
	if err == nil && !found {
		return Rule{}, ErrNotFound
	}
	return out, err
}
