package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Skill is a set of instructions a plugin contributes (design section
// 2.1): the catalog shows its name and description, and the Skill tool
// returns its instructions and base directory.
type Skill struct {
	PluginID     string `json:"-"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Instructions string `json:"instructions"`
	// BaseDir is the skill's folder, absolute, where its instructions'
	// relative paths lead; "" when the plugin gave none.
	BaseDir string `json:"baseDir"`
}

// CheckSkill says why a registered skill is refused, nil if it is not.
func CheckSkill(s Skill) error {
	switch {
	case !ValidSkillName(s.Name):
		return fmt.Errorf("name %q must be 1-%d characters of a-z 0-9 and single inner hyphens", s.Name, SkillNameMax)
	case strings.TrimSpace(s.Description) == "" || len(s.Description) > DescriptionMax:
		return fmt.Errorf("description must be 1-%d bytes", DescriptionMax)
	case len(s.Instructions) > InstructionsMax:
		return fmt.Errorf("instructions hold more than %d KiB", InstructionsMax>>10)
	case s.BaseDir != "" && (len(s.BaseDir) > BaseDirMax || !filepath.IsAbs(s.BaseDir) || strings.ContainsFunc(s.BaseDir, isControl)):
		return fmt.Errorf("baseDir must be an absolute path of at most %d bytes without control characters", BaseDirMax)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// SkillFile is the file a skill folder holds.
const SkillFile = "SKILL.md"

// FrontMatter is what a SKILL.md's front matter says and the body after it.
type FrontMatter struct {
	Name, Description string
	Body              string
}

// ParseSkillFile reads a SKILL.md: a front matter between two "---" lines
// of "key: value" lines, as Agent Skills have, then the instructions.
// Only name and description are read; other keys are allowed and left
// alone. A value may be quoted with " or '. Folded YAML values are not
// understood: each key takes one line.
func ParseSkillFile(data []byte) (FrontMatter, error) {
	text := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return FrontMatter{}, errors.New(`must start with a front matter: a line "---", then name: and description: lines, then "---"`)
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if head, ok = strings.CutSuffix(rest, "\n---"); !ok {
			return FrontMatter{}, errors.New(`its front matter has no closing "---" line`)
		}
	}
	var fm FrontMatter
	for _, line := range strings.Split(head, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "#") {
			continue
		}
		value = unquote(strings.TrimSpace(value))
		switch strings.TrimSpace(key) {
		case "name":
			fm.Name = value
		case "description":
			fm.Description = value
		}
	}
	fm.Body = strings.TrimLeft(body, "\n")
	return fm, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
