package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/perms/redact"
)

// Plugin limits (design section 11). pluginTimeout is the tool timeout of
// every plugin call: plugin.invoke that has not answered by then is
// TOOL_TIMEOUT.
const (
	pluginTimeout        = 60 * time.Second
	pluginGrant          = "agent.tool.register"
	pluginDescriptionMax = 1024
	// Schema bounds. plugins.register runs before the next line is read,
	// and the schema compiler's time grows faster than the schema: a
	// 95 KB schema 4,500 levels deep took 75 s, and every card answered
	// meanwhile timed out. Within these bounds one schema compiles in at
	// most about 0.2 s (a 64 KiB fan-out of $refs, measured), a whole
	// registration within a second.
	pluginToolsMax    = 256
	pluginIDMax       = 64
	pluginSchemaMax   = 64 << 10
	pluginSchemaDepth = 64
	pluginSchemasMax  = 256 << 10
)

// pluginToolName is what a plugin may call a tool: the exposed name is
// sent to models, which accept [A-Za-z0-9_-] only.
var pluginToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// pluginSafe is pluginIdSafe of PROTOCOL section 5.
func pluginSafe(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// pluginsRegister is plugins.register: it replaces the plugin's tools with
// the given set. Plugin tools live in the Server's toolset, so they are
// global to the connection (the process): every session in agent mode
// sees them. The registration is all or nothing: one bad tool and none of
// them is registered.
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
	if len(p.PluginID) > pluginIDMax || strings.IndexFunc(p.PluginID, unreadable) >= 0 {
		return nil, invalidParams("invalid params: pluginId must be 1-%d bytes of printable characters", pluginIDMax)
	}
	granted := false
	for _, g := range p.Grants {
		granted = granted || g == pluginGrant
	}
	if !granted {
		// Registering replaces a plugin's tools: one that no longer holds
		// the grant keeps none of those it registered with it.
		msg := fmt.Sprintf("plugin %q lacks the %s grant; no tool was registered", p.PluginID, pluginGrant)
		if n := s.tools.DropPlugin(p.PluginID); n > 0 {
			msg += fmt.Sprintf(", and the %d it had registered were withdrawn", n)
		}
		return map[string]any{"tools": []string{}, "message": msg}, nil
	}
	if len(p.Tools) > pluginToolsMax {
		return nil, invalidParams("invalid params: %d tools; a plugin registers at most %d", len(p.Tools), pluginToolsMax)
	}
	safe := pluginSafe(p.PluginID)
	defs := make([]*tools.Def, 0, len(p.Tools))
	schemaBytes := 0
	names := make([]string, 0, len(p.Tools))
	seen := map[string]bool{}
	for i, t := range p.Tools {
		if !pluginToolName.MatchString(t.Name) {
			return nil, invalidParams("invalid params: tools[%d].name %q must be 1-64 characters of A-Z a-z 0-9 _ -", i, t.Name)
		}
		exposed := "plugin_" + safe + "_" + t.Name
		if seen[exposed] {
			return nil, invalidParams("invalid params: tools[%d]: %s is registered twice", i, exposed)
		}
		seen[exposed] = true
		if old := s.tools.Get(exposed); old != nil && old.PluginID != p.PluginID {
			return nil, invalidParams("invalid params: tools[%d]: %s is already registered by plugin %q", i, exposed, old.PluginID)
		}
		doc := []byte(t.InputSchema)
		if len(bytes.TrimSpace(doc)) == 0 || string(doc) == "null" {
			doc = []byte(`{"type":"object"}`)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil || compact.Bytes()[0] != '{' {
			return nil, invalidParams("invalid params: tools[%d].inputSchema must be a JSON Schema object", i)
		}
		if schemaBytes += compact.Len(); compact.Len() > pluginSchemaMax || schemaBytes > pluginSchemasMax {
			return nil, invalidParams("invalid params: tools[%d].inputSchema: a schema may hold at most %d KiB, a registration's schemas %d KiB", i, pluginSchemaMax>>10, pluginSchemasMax>>10)
		}
		if jsonDepth(compact.Bytes()) > pluginSchemaDepth {
			return nil, invalidParams("invalid params: tools[%d].inputSchema nests deeper than %d levels", i, pluginSchemaDepth)
		}
		sc, err := compilePluginSchema(exposed, compact.Bytes())
		if err != nil {
			return nil, invalidParams("invalid params: tools[%d].inputSchema: %v", i, err)
		}
		// A missing or invalid risk, of any type, is medium (design
		// section 11).
		var risk string
		json.Unmarshal(t.Risk, &risk)
		if risk != perms.RiskLow && risk != perms.RiskMedium && risk != perms.RiskHigh {
			risk = perms.RiskMedium
		}
		desc := t.Description
		if desc == "" {
			desc = fmt.Sprintf("Tool %s of plugin %s.", t.Name, p.PluginID)
		}
		if len(desc) > pluginDescriptionMax {
			desc = tools.CutAt(desc, pluginDescriptionMax) + "…"
		}
		d := tools.Plugin(tools.Spec{Name: exposed, Class: perms.ClassPlugin, Risk: risk, Description: desc,
			Deferred: true, Modes: []string{perms.OpAgent},
			// High-risk tools are unavailable without a session project
			// (design section 4b).
			NeedsWorkspace: risk == perms.RiskHigh,
			PluginID:       p.PluginID, PluginTool: t.Name}, s.pluginTimeout)
		d.Schema, d.SchemaJSON = sc, json.RawMessage(compact.Bytes())
		defs = append(defs, d)
		names = append(names, exposed)
	}
	s.tools.ReplacePlugin(p.PluginID, defs)
	s.log.Info("plugin tools registered", "pluginId", p.PluginID, "tools", names)
	return map[string]any{"tools": names}, nil
}

// unreadable reports characters a name shown to a model or a person must
// not hold: controls and invisible format characters.
func unreadable(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || redact.IsInvisibleFormat(r) || r == utf8.RuneError
}

// jsonDepth is the deepest nesting of objects and arrays in JSON text.
func jsonDepth(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// errNoRemoteSchema refuses every $ref the schema does not itself contain:
// a plugin's schema must not make hostcore read files or URLs.
var errNoRemoteSchema = errors.New("external $ref is not allowed in a plugin schema")

// compilePluginSchema compiles a plugin-supplied schema without loading
// anything from outside it.
func compilePluginSchema(name string, doc []byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteSchema }
	url := "hostcore:///plugins/" + name + ".json"
	if err := c.AddResource(url, bytes.NewReader(doc)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
