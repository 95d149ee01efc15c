package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"hostcore/handlers/plugin"
	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/perms/redact"
)

// pluginTimeout is the tool timeout of every plugin call (design section
// 11): plugin.invoke that has not answered by then is TOOL_TIMEOUT.
const pluginTimeout = 60 * time.Second

// pluginsRegister is plugins.register: it replaces the plugin's tools and
// skills with the given sets. They live in the Server's registry, so they
// are global to the connection (the process): every session in agent
// mode sees them. The registration is all or nothing: one bad tool or
// skill and none of them is registered. The rules are package plugin's,
// which PluginCheck applies to a plugin's manifest.
func (s *Server) pluginsRegister(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		PluginID string   `json:"pluginId"`
		Grants   []string `json:"grants"`
		Tools    []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Risk        json.RawMessage `json:"risk"`
		} `json:"tools"`
		Skills []plugin.Skill `json:"skills"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.PluginID == "" {
		return nil, invalidParams("invalid params: pluginId is required")
	}
	// The id is part of every exposed name (models take names of at most
	// 64 characters of [A-Za-z0-9_-], identifiers are refused past 512
	// bytes) and of the catalog the model reads.
	if len(p.PluginID) > plugin.IDMax || strings.IndexFunc(p.PluginID, unreadable) >= 0 {
		return nil, invalidParams("invalid params: pluginId must be 1-%d bytes of printable characters", plugin.IDMax)
	}
	granted := false
	for _, g := range p.Grants {
		granted = granted || g == plugin.Grant
	}
	if !granted {
		// Registering replaces a plugin's tools: one that no longer holds
		// the grant keeps none of those it registered with it.
		msg := fmt.Sprintf("plugin %q lacks the %s grant; no tool was registered", p.PluginID, plugin.Grant)
		if n := s.tools.DropPlugin(p.PluginID); n > 0 {
			msg += fmt.Sprintf(", and the %d it had registered were withdrawn", n)
		}
		return map[string]any{"tools": []string{}, "message": msg}, nil
	}
	if len(p.Tools) > plugin.ToolsMax {
		return nil, invalidParams("invalid params: %d tools; a plugin registers at most %d", len(p.Tools), plugin.ToolsMax)
	}
	defs := make([]*tools.Def, 0, len(p.Tools))
	schemaBytes := 0
	names := make([]string, 0, len(p.Tools))
	seen := map[string]bool{}
	for i, t := range p.Tools {
		if !plugin.ValidToolName(t.Name) {
			return nil, invalidParams("invalid params: tools[%d].name %q must be 1-64 characters of A-Z a-z 0-9 _ -", i, t.Name)
		}
		exposed := plugin.Exposed(p.PluginID, t.Name)
		if seen[exposed] {
			return nil, invalidParams("invalid params: tools[%d]: %s is registered twice", i, exposed)
		}
		seen[exposed] = true
		if old := s.tools.Get(exposed); old != nil && old.PluginID != p.PluginID {
			return nil, invalidParams("invalid params: tools[%d]: %s is already registered by plugin %q", i, exposed, old.PluginID)
		}
		compact, err := plugin.CompactSchema(t.InputSchema)
		if err != nil {
			return nil, invalidParams("invalid params: tools[%d].inputSchema must be a JSON Schema object", i)
		}
		sc, err := plugin.Compile(exposed, compact)
		schemaBytes += len(compact)
		switch {
		case errors.Is(err, plugin.ErrSchemaSize) || schemaBytes > plugin.SchemasMax:
			return nil, invalidParams("invalid params: tools[%d].inputSchema: a schema may hold at most %d KiB, a registration's schemas %d KiB", i, plugin.SchemaMax>>10, plugin.SchemasMax>>10)
		case errors.Is(err, plugin.ErrSchemaDepth):
			return nil, invalidParams("invalid params: tools[%d].inputSchema nests deeper than %d levels", i, plugin.SchemaDepth)
		case err != nil:
			return nil, invalidParams("invalid params: tools[%d].inputSchema: %v", i, err)
		}
		risk := plugin.Risk(t.Risk)
		desc := t.Description
		if desc == "" {
			desc = fmt.Sprintf("Tool %s of plugin %s.", t.Name, p.PluginID)
		}
		if len(desc) > plugin.DescriptionMax {
			desc = tools.CutAt(desc, plugin.DescriptionMax) + "…"
		}
		d := tools.Plugin(tools.Spec{Name: exposed, Class: perms.ClassPlugin, Risk: risk, Description: desc,
			Deferred: true, Modes: []string{perms.OpAgent},
			// High-risk tools are unavailable without a session project
			// (design section 4b).
			NeedsWorkspace: risk == perms.RiskHigh,
			PluginID:       p.PluginID, PluginTool: t.Name}, s.pluginTimeout)
		d.Schema, d.SchemaJSON = sc, json.RawMessage(compact)
		defs = append(defs, d)
		names = append(names, exposed)
	}
	skills, err := s.pluginSkills(p.PluginID, p.Skills)
	if err != nil {
		return nil, err
	}
	s.tools.ReplacePlugin(p.PluginID, defs, skills)
	s.log.Info("plugin tools registered", "pluginId", p.PluginID, "tools", names, "skills", len(skills))
	if p.Skills == nil {
		return map[string]any{"tools": names}, nil
	}
	skillNames := make([]string, len(skills))
	for i, sk := range skills {
		skillNames[i] = sk.Name
	}
	return map[string]any{"tools": names, "skills": skillNames}, nil
}

// pluginSkills checks the skills a registration contributes (package
// plugin's rules): a name another plugin's skill has is refused, as an
// exposed tool name is.
func (s *Server) pluginSkills(id string, in []plugin.Skill) ([]plugin.Skill, error) {
	if len(in) > plugin.SkillsMax {
		return nil, invalidParams("invalid params: %d skills; a plugin contributes at most %d", len(in), plugin.SkillsMax)
	}
	seen, total := map[string]bool{}, 0
	for i := range in {
		sk := &in[i]
		sk.PluginID = id
		if err := plugin.CheckSkill(*sk); err != nil {
			return nil, invalidParams("invalid params: skills[%d]: %v", i, err)
		}
		if total += len(sk.Instructions); total > plugin.AllInstructionsMax {
			return nil, invalidParams("invalid params: skills[%d]: a registration's instructions may hold at most %d KiB", i, plugin.AllInstructionsMax>>10)
		}
		if seen[sk.Name] {
			return nil, invalidParams("invalid params: skills[%d]: skill %q is contributed twice", i, sk.Name)
		}
		seen[sk.Name] = true
		if old, ok := s.tools.Skill(sk.Name); ok && old.PluginID != id {
			return nil, invalidParams("invalid params: skills[%d]: skill %q is already contributed by plugin %q", i, sk.Name, old.PluginID)
		}
	}
	return in, nil
}

// unreadable reports characters a name shown to a model or a person must
// not hold: controls and invisible format characters.
func unreadable(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || redact.IsInvisibleFormat(r) || r == utf8.RuneError
}
