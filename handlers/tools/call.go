package tools

import (
	"context"
	"encoding/json"
	"log/slog"

	"hostcore/sandbox"
	"hostcore/store"
)

// Call is what a body gets of its call: the ids, the session, the
// resolved explicit path, and the host's services.
type Call struct {
	SessionID  string
	TurnID     string
	ToolCallID string
	PromptID   string
	MessageID  string
	Delegate   string
	// Shell is the command shell id the client pinned for the turn
	// (optional, Bash only).
	Shell string
	// Name is the tool's name (a plugin tool's exposed name).
	Name string

	// Workspace is the session's workspace root ("" for a Temporary
	// session); Scratch its scratch directory.
	Workspace string
	Scratch   string
	Subagents []Subagent

	// Target is the resolved explicit path, when HasTarget. A body that
	// resolves a path of its own (BrowserPreview) sets them, and the
	// result then names it.
	Target    sandbox.Resolved
	HasTarget bool

	Host Host
}

// Subagent is a delegate definition (design section 10.2).
type Subagent struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
}

// Host is what a body needs of hostcore beyond its arguments, declared
// here where it is used; the envelope implements it per call.
type Host interface {
	// LockPath serialises mutations of one file across sessions.
	LockPath(abs string) (unlock func())
	// SaveSnapshot makes the review snapshot of a workspace mutation
	// durable before the mutation runs; DropSnapshot removes the
	// snapshot of one that did not happen.
	SaveSnapshot(ctx context.Context, b *Before, after []byte) (*store.Snapshot, error)
	DropSnapshot(ctx context.Context, sn *store.Snapshot)
	// CountFailure counts a failed mutation of kind for key within the
	// call's prompt and returns the count (design section 4d).
	CountFailure(kind, key string) int
	// Notify sends the client a notification; Request asks it and waits
	// for its reply (or ctx).
	Notify(ctx context.Context, method string, params any)
	Request(ctx context.Context, method string, params, result any) error
	// VisibleTools lists the tools the session's mode shows.
	VisibleTools() []ToolInfo
	// Skills are the skills plugins contribute (Skill).
	Skills() SkillSet
	Log() *slog.Logger
	// Bash is what the Bash tool needs besides.
	Bash() BashHost
}

// ToolInfo is one entry of tools.list.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Risk        string          `json:"risk"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Deferred    bool            `json:"deferred"`
}
