package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"hostcore/schema"
)

// outputSchemas returns, by tool name, the outputSchema of each tool: the
// structuredContent toResult returns, which is the ToolResult of
// schema/protocol.schema.json less content and isError (MCP carries those
// itself), with details as the tool's own ToolDetails entry (an object for
// a tool without one). Each schema carries the definitions it refers to,
// under the same $defs names, so that its references resolve as they do in
// the contract: one source of truth, no copy kept by hand.
func outputSchemas(names []string) (map[string]json.RawMessage, error) {
	raw, err := schema.FS.ReadFile("protocol.schema.json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading the protocol schema: %w", err)
	}
	result, details := doc.Defs["ToolResult"], doc.Defs["ToolDetails"]
	if result == nil || details == nil {
		return nil, fmt.Errorf("the protocol schema lacks ToolResult or ToolDetails")
	}
	byTool, _ := details["properties"].(map[string]any)
	out := map[string]json.RawMessage{}
	for _, name := range names {
		s := map[string]any{}
		for k, v := range result {
			s[k] = v
		}
		props := map[string]any{}
		for k, v := range result["properties"].(map[string]any) {
			if k != "content" && k != "isError" {
				props[k] = v
			}
		}
		if d, ok := byTool[name]; ok {
			props["details"] = d
		}
		s["properties"] = props
		var required []any
		for _, r := range result["required"].([]any) {
			if r != "content" && r != "isError" {
				required = append(required, r)
			}
		}
		s["required"] = required
		s["description"] = "The ToolResult of the call (content and isError are the MCP result's own)."
		defs := map[string]any{}
		addRefs(s, doc.Defs, defs)
		if len(defs) > 0 {
			s["$defs"] = defs
		}
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// addRefs copies into defs every definition v refers to ("#/$defs/Name"),
// and those they refer to.
func addRefs(v any, all map[string]map[string]any, defs map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok && defs[name] == nil && all[name] != nil {
				defs[name] = all[name]
				addRefs(all[name], all, defs)
			}
		}
		for _, x := range v {
			addRefs(x, all, defs)
		}
	case []any:
		for _, x := range v {
			addRefs(x, all, defs)
		}
	}
}

// typedEnums returns schema with a "type" beside every "enum" that lacks
// one and whose values are all of one JSON type: some clients (and models'
// tool-use validators) read an enum only through its type.
func typedEnums(schema json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	if !addEnumTypes(v) {
		return schema
	}
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

// addEnumTypes adds the types in place; it reports whether it added any.
func addEnumTypes(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		if enum, ok := v["enum"].([]any); ok && v["type"] == nil && len(enum) > 0 {
			if t := jsonType(enum[0]); t != "" && !slices.ContainsFunc(enum, func(x any) bool { return jsonType(x) != t }) {
				v["type"] = t
				changed = true
			}
		}
		for _, x := range v {
			changed = addEnumTypes(x) || changed
		}
	case []any:
		for _, x := range v {
			changed = addEnumTypes(x) || changed
		}
	}
	return changed
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return ""
}
