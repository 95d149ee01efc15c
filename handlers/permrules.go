package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/perms/redact"
	"hostcore/perms/rules"
	"hostcore/store"
)

// The decisions of calls a remembered rule let through (and of the call
// whose card made it), as the ToolResult and the audit say them.
const (
	decAlways        = perms.AllowAlways
	decAlwaysCommand = perms.AllowAlwaysCommand
)

// ruleOffer is what a card offers beyond allow-once, allow-session and
// deny: allow-always where a rule may apply (a card for the tool itself,
// run in the sandbox, in a session with a workspace), and for Bash
// allow-always-command with the suggested prefix, or a note saying why
// there is none.
type ruleOffer struct {
	options []string
	prefix  []string
	note    string
}

// offer is what c's card for reason offers.
func (c *call) offer(reason string) ruleOffer {
	if reason != perms.ReasonTool || !c.ruleable() || c.sess.WorkspaceRoot == "" {
		return ruleOffer{options: perms.Options}
	}
	o := ruleOffer{options: []string{perms.AllowOnce, perms.AllowSession, perms.AllowAlways}}
	if a, ok := c.typed.(*tools.BashArgs); ok && c.tool.PluginID == "" {
		if o.prefix, o.note = rules.Suggest(a.Command); o.prefix != nil {
			o.options = append(o.options, perms.AllowAlwaysCommand)
		}
	}
	o.options = append(o.options, perms.DenyAnswer)
	return o
}

// addTo puts the offer on a card.
func (o ruleOffer) addTo(card map[string]any) {
	card["options"] = o.options
	if o.prefix != nil {
		card["suggestedPrefix"] = redact.EscapeText(rules.Quote(o.prefix))
	}
	if o.note != "" {
		card["prefixNote"] = o.note
	}
}

// ruleable says whether a remembered rule may decide c: any call but a
// Bash call that runs unconfined (it asks sandbox "off", the
// commandSandbox setting is off, or the system has no Landlock; the
// same reading bashSandbox makes), where a command a rule lets through
// would reach the whole machine. Settings that cannot be read are
// unconfined.
func (c *call) ruleable() bool {
	if _, ok := c.typed.(*tools.BashArgs); !ok || c.tool.Name != "Bash" || c.tool.PluginID != "" {
		return true
	}
	if c.unsandboxed() {
		return false
	}
	var set Settings
	if err := c.s.sandboxSettings(context.Background(), &set); err != nil {
		return false
	}
	return set.CommandSandbox != sandboxOff && set.Sandbox.Kind != tools.SandboxNone
}

// replyPrefix reads an allow-always-command reply's prefix: absent, null
// or "" takes the card's suggestion; any other value that is not a string
// is refused (ok false), not read as no prefix.
func replyPrefix(reply map[string]json.RawMessage) (prefix string, ok bool) {
	raw, found := reply["prefix"]
	if !found || string(raw) == "null" {
		return "", true
	}
	err := json.Unmarshal(raw, &prefix)
	return prefix, err == nil
}

// remembered looks for a rule of the session's workspace that allows c
// without its card: a tool rule for the tool, or for Bash command rules
// that allow every part of the command. It returns the decision to report
// ("" for none) and names the rules in a.rule. A rule that cannot be read
// is no rule: the card is shown.
func (s *Server) remembered(ctx context.Context, c *call, a *auditing) string {
	ws := c.sess.WorkspaceRoot
	if ws == "" || !c.ruleable() {
		return ""
	}
	list, err := s.store.Rules(ctx, ws)
	if err != nil {
		s.log.Warn("reading the remembered rules failed; the card is shown", "toolCallId", c.p.ToolCallID, "err", err)
		return ""
	}
	var cmds []rules.Rule
	for _, r := range list {
		switch {
		case r.Kind == rules.KindTool && r.ToolName == c.tool.Name && r.PluginID == c.tool.PluginID && r.PluginTool == c.tool.PluginTool:
			a.rule = r.ID
			return decAlways
		case r.Kind == rules.KindCommand && r.ToolName == c.tool.Name && c.tool.PluginID == "":
			cmds = append(cmds, rules.Rule{ID: r.ID, Prefix: r.Prefix})
		}
	}
	bash, ok := c.typed.(*tools.BashArgs)
	if !ok || len(cmds) == 0 {
		return ""
	}
	ids, ok := rules.Match(bash.Command, cmds, rules.Roots{Workspace: ws, Scratch: c.scratchDir()})
	if !ok {
		return ""
	}
	a.rule = strings.Join(ids, " ")
	return decAlwaysCommand
}

// remember stores the rule an allow-always or allow-always-command answer
// gave and sets the call's decision. A prefix the card did not offer is a
// deny, as any answer the card did not offer. A rule that cannot be
// stored does not stop the call the user allowed: it runs once, and the
// log says the rule was not kept.
func (s *Server) remember(ctx context.Context, c *call, a *auditing, ans perms.Answer) *ToolResult {
	r := store.Rule{
		ID: newID("rule_"), Workspace: c.sess.WorkspaceRoot, Kind: rules.KindTool, ToolName: c.tool.Name,
		PluginID: c.tool.PluginID, PluginTool: c.tool.PluginTool, SessionID: c.sess.ID, ToolCallID: c.p.ToolCallID, CreatedAt: store.Now(),
	}
	a.decision = decAlways
	if ans.Decision == perms.AllowAlwaysCommand {
		prefix, err := rules.Shorten(c.offer(perms.ReasonTool).prefix, ans.Prefix)
		if err != nil {
			ans.Decision, ans.Why = perms.DenyAnswer, "the allow-always-command answer's "+err.Error()
			return denied(ans, ctx)
		}
		r.Kind, r.Prefix, a.decision = rules.KindCommand, prefix, decAlwaysCommand
	}
	kept, err := s.store.AddRule(context.WithoutCancel(ctx), r)
	if err != nil {
		s.log.Error("storing the remembered rule failed; the call runs once", "toolCallId", c.p.ToolCallID, "err", err)
		a.decision = decOnce
		return nil
	}
	a.rule = kept.ID
	return nil
}

// ruleWire is a rule as permissions.list and permissions.remove give it.
type ruleWire struct {
	RuleID     string `json:"ruleId"`
	Workspace  string `json:"workspace"`
	Kind       string `json:"kind"`
	ToolName   string `json:"toolName"`
	PluginID   string `json:"pluginId,omitempty"`
	Prefix     string `json:"prefix,omitempty"`
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	CreatedAt  string `json:"createdAt"`
}

func wireRule(r store.Rule) ruleWire {
	w := ruleWire{RuleID: r.ID, Workspace: r.Workspace, Kind: r.Kind, ToolName: r.ToolName, PluginID: r.PluginID,
		SessionID: r.SessionID, ToolCallID: r.ToolCallID, CreatedAt: r.CreatedAt}
	if r.Kind == rules.KindCommand {
		w.Prefix = rules.Quote(r.Prefix)
	}
	return w
}

// permissionsList is permissions.list: the remembered rules of a
// workspace (given as a path, or as a session's), or of every workspace.
func (s *Server) permissionsList(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Workspace string `json:"workspace"`
		SessionID string `json:"sessionId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	ws := ""
	switch {
	case p.Workspace != "" && p.SessionID != "":
		return nil, invalidParams("invalid params: give workspace or sessionId, not both")
	case p.SessionID != "":
		sess, err := s.loadSession(ctx, p.SessionID)
		if err != nil {
			return nil, err
		}
		if sess.WorkspaceRoot == "" {
			return map[string]any{"rules": []ruleWire{}}, nil
		}
		ws = sess.WorkspaceRoot
	case p.Workspace != "":
		// Rules are kept under the canonical path a session stores; a
		// directory that is gone is looked up as written.
		var err error
		if ws, err = canonicalDir(p.Workspace); err != nil {
			ws = filepath.Clean(p.Workspace)
		}
	}
	list, err := s.store.Rules(ctx, ws)
	if err != nil {
		return nil, storageError("reading rules", err)
	}
	out := make([]ruleWire, len(list))
	for i, r := range list {
		out[i] = wireRule(r)
	}
	return map[string]any{"rules": out}, nil
}

// permissionsRemove is permissions.remove: the rule is forgotten, and
// the calls decided after it get their cards again.
func (s *Server) permissionsRemove(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		RuleID string `json:"ruleId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.RuleID == "" {
		return nil, invalidParams("invalid params: ruleId is required")
	}
	r, err := s.store.RemoveRule(ctx, p.RuleID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, invalidParams("invalid params: there is no rule %q", p.RuleID)
	case err != nil:
		return nil, storageError("removing rule", err)
	}
	return map[string]any{"removed": wireRule(r)}, nil
}
