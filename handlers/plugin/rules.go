package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"hostcore/perms"
)

// Limits of a plugin (design section 11). A schema's bounds keep
// plugins.register, which runs before the next line is read, short: the
// schema compiler's time grows faster than the schema (a 95 KB schema
// 4,500 levels deep took 75 s, and every card answered meanwhile timed
// out). Within these bounds one schema compiles in at most about 0.2 s (a
// 64 KiB fan-out of $refs, measured), a whole registration within a
// second.
const (
	// Grant is the grant without which a plugin registers nothing.
	Grant          = "agent.tool.register"
	IDMax          = 64
	ToolsMax       = 256
	DescriptionMax = 1024
	SchemaMax      = 64 << 10
	SchemaDepth    = 64
	SchemasMax     = 256 << 10
	// ExposedMax is the longest tool name models accept.
	ExposedMax = 64
	// Skill bounds: a registration's skills are held in memory and their
	// names and descriptions go into every catalog.
	SkillsMax          = 64
	SkillNameMax       = 64
	InstructionsMax    = 128 << 10
	AllInstructionsMax = 1 << 20
	BaseDirMax         = 4096
)

// toolName is what a plugin may call a tool: the exposed name is sent to
// models, which accept [A-Za-z0-9_-] only.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidToolName reports whether a plugin may call a tool name.
func ValidToolName(name string) bool { return toolName.MatchString(name) }

// skillName is the Agent Skills rule: lowercase letters, digits and
// single hyphens inside, so that a name reads the same in a catalog, a
// folder and a Skill call.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidSkillName reports whether a skill may carry the name.
func ValidSkillName(name string) bool {
	return len(name) <= SkillNameMax && skillName.MatchString(name)
}

// Safe is pluginIdSafe of PROTOCOL section 5: the id with every character
// but [A-Za-z0-9_] replaced by '_'.
func Safe(id string) string {
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

// ManifestID says why a manifest's id is refused, nil if it is not. The
// id must be its own pluginIdSafe form, so that the exposed names a
// manifest declares are the ones a model sees, and two plugins cannot
// share them by sanitising alike.
func ManifestID(id string) error {
	switch {
	case id == "" || len(id) > IDMax:
		return fmt.Errorf("id must be 1-%d characters", IDMax)
	case Safe(id) != id:
		return fmt.Errorf("id %q must be made of A-Z a-z 0-9 _ only (pluginIdSafe leaves it unchanged); %q would do", id, Safe(id))
	}
	return nil
}

// Exposed is the name a model sees for a plugin's tool.
func Exposed(pluginID, tool string) string { return "plugin_" + Safe(pluginID) + "_" + tool }

// Errors of Compile, so that each caller words them its own way.
var (
	ErrSchemaSize  = fmt.Errorf("a schema may hold at most %d KiB", SchemaMax>>10)
	ErrSchemaDepth = fmt.Errorf("nests deeper than %d levels", SchemaDepth)
	errNotObject   = errors.New("must be a JSON Schema object")
	// errNoRemoteSchema refuses every $ref the schema does not itself
	// contain: a plugin's schema must not make hostcore read files or URLs.
	errNoRemoteSchema = errors.New("external $ref is not allowed in a plugin schema")
)

// CompactSchema is a tool's input schema compacted; absent or null is
// {"type":"object"}. Anything but a JSON object is refused.
func CompactSchema(doc []byte) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 || string(doc) == "null" {
		doc = []byte(`{"type":"object"}`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil || compact.Bytes()[0] != '{' {
		return nil, errNotObject
	}
	return compact.Bytes(), nil
}

// Compile compiles a compacted schema (draft 2020-12) within the size and
// depth bounds, loading nothing from outside it.
func Compile(name string, compact []byte) (*jsonschema.Schema, error) {
	if len(compact) > SchemaMax {
		return nil, ErrSchemaSize
	}
	if JSONDepth(compact) > SchemaDepth {
		return nil, ErrSchemaDepth
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteSchema }
	url := "hostcore:///plugins/" + name + ".json"
	if err := c.AddResource(url, bytes.NewReader(compact)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// JSONDepth is the deepest nesting of objects and arrays in JSON text.
func JSONDepth(b []byte) int {
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

// Risk is a registered tool's risk: a missing or invalid one, of any
// type, is medium (design section 11).
func Risk(raw json.RawMessage) string {
	var risk string
	json.Unmarshal(raw, &risk)
	if risk != perms.RiskLow && risk != perms.RiskMedium && risk != perms.RiskHigh {
		return perms.RiskMedium
	}
	return risk
}
