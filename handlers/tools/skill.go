package tools

import (
	"context"
	"fmt"
	"strings"

	"hostcore/handlers/plugin"
	"hostcore/perms"
)

// Skill is the Skill tool: it hands the model a plugin skill's
// instructions when the model asks for them by name, so that the catalog
// carries only names and descriptions (design section 2.1). It is offered
// only while some plugin contributes a skill, in Agent mode like every
// plugin capability, and never to a delegate (section 10.2).
var Skill = Tool[SkillArgs, SkillDetails]{
	Spec: Spec{Name: "Skill", Class: perms.ClassControl, Risk: perms.RiskLow, Description: skillDescription,
		Deferred: true, Modes: []string{perms.OpAgent}},
	Run: runSkill,
}

const skillDescription = "Load a skill a plugin contributes: its instructions, and the base directory its relative paths lead to. " +
	"The skills are listed by name and description under Skill in the # On-demand tools catalog."

// SkillSet is where the Skill tool finds the plugins' skills; the
// tools.Registry is one.
type SkillSet interface {
	Skill(name string) (plugin.Skill, bool)
	Skills() []plugin.Skill
}

// SkillArgs are Skill's arguments.
type SkillArgs struct {
	Name string `json:"name"`
}

// SkillDetails are Skill's details.
type SkillDetails struct {
	Name        string `json:"name"`
	PluginID    string `json:"pluginId"`
	Description string `json:"description"`
	BaseDir     string `json:"baseDir,omitempty"`
}

// skillNamesMax bounds the names an unknown skill's error lists.
const skillNamesMax = 20

func runSkill(ctx context.Context, c *Call, a SkillArgs) (Out[SkillDetails], error) {
	set := c.Host.Skills()
	sk, ok := set.Skill(a.Name)
	if !ok {
		return Out[SkillDetails]{}, unknownSkill(a.Name, set.Skills())
	}
	text := sk.Instructions
	if sk.BaseDir != "" {
		text = "Base directory for this skill: " + sk.BaseDir + "\n\n" + text
	}
	return Out[SkillDetails]{Text: text, Details: SkillDetails{Name: sk.Name, PluginID: sk.PluginID, Description: sk.Description, BaseDir: sk.BaseDir}}, nil
}

// unknownSkill names the skills the name may misspell, or else the ones
// there are.
func unknownSkill(name string, skills []plugin.Skill) *Failure {
	if len(skills) == 0 {
		return Fail(CodeInvalidArgument, "unknown skill %q: no plugin contributes skills", CutAt(name, 128))
	}
	names := make([]string, len(skills))
	for i, sk := range skills {
		names[i] = sk.Name
	}
	if near := NearNames(name, names); len(near) > 0 {
		return Fail(CodeInvalidArgument, "unknown skill %q; did you mean %s?", CutAt(name, 128), strings.Join(near[:min(len(near), skillNamesMax)], ", "))
	}
	more := ""
	if len(names) > skillNamesMax {
		more = fmt.Sprintf(" and %d more", len(names)-skillNamesMax)
		names = names[:skillNamesMax]
	}
	return Fail(CodeInvalidArgument, "unknown skill %q; the skills are %s%s", CutAt(name, 128), strings.Join(names, ", "), more)
}
