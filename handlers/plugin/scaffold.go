package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// File is one file of a plugin's skeleton: its slash path in the plugin's
// directory and its content.
type File struct {
	Path string
	Data []byte
}

// Skeleton tool and skill names.
const (
	exampleTool  = "hello"
	exampleSkill = "getting-started"
)

// Skeleton is a new plugin that passes Check: a manifest declaring one
// example tool and one skill, and the skill's folder. An id, version or
// description the manifest cannot hold is an error, said as Check would.
func Skeleton(id, version, description string) ([]File, error) {
	if err := ManifestID(id); err != nil {
		return nil, err
	}
	if version == "" {
		version = "0.1.0"
	}
	if description == "" {
		description = fmt.Sprintf("The %s plugin.", id)
	}
	manifest := map[string]any{
		"id": id, "version": version, "description": description,
		"grants": []string{Grant},
		"tools": []any{map[string]any{
			"name":        exampleTool,
			"description": "Greet someone by name. An example tool: the plugin answers it in plugin.invoke.",
			"inputSchema": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"name": map[string]any{"type": "string", "description": "Who to greet."}},
				"required":             []string{"name"},
				"additionalProperties": false,
			},
			"risk": "low",
		}},
		"skills": []string{"skills/" + exampleSkill},
	}
	data, _ := json.MarshalIndent(manifest, "", "  ")
	sc, err := manifestSchema()
	if err != nil {
		return nil, err
	}
	var r Report
	r.parse(data, sc)
	if len(r.Problems) > 0 {
		msgs := make([]string, len(r.Problems))
		for i, p := range r.Problems {
			msgs[i] = p.Message
		}
		return nil, errors.New("the manifest would be invalid: " + strings.Join(msgs, "; "))
	}
	skill := fmt.Sprintf(`---
name: %s
description: How to use the %s plugin. Read it before calling %s.
---
# Getting started with %s

Call %s with the name of the person to greet. It answers with one line of
text.

Files this skill refers to are in its base directory.
`, exampleSkill, id, Exposed(id, exampleTool), id, Exposed(id, exampleTool))
	return []File{
		{Path: ManifestFile, Data: append(data, '\n')},
		{Path: "skills/" + exampleSkill + "/" + SkillFile, Data: []byte(skill)},
	}, nil
}
