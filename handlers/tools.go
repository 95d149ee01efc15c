package handlers

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"hostcore/perms"
	"hostcore/perms/redact"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// toolDef is one tool: its policy class, schema and body.
type toolDef struct {
	Name        string
	Class       perms.Class
	Risk        string
	Description string
	// Deferred tools are loaded on demand in Agent mode (design section 2.1).
	Deferred bool
	// PathArg names the argument that is an explicit path subject to
	// containment and the outside-path rule ("" for none). Optional says an
	// absent path means the workspace root.
	PathArg      string
	PathOptional bool
	// targetOf computes the explicit path from the args when it is not
	// just the PathArg (Glob folds a climbing pattern prefix into it).
	targetOf func(args json.RawMessage) (string, error)
	// Mutation tools are serialised per session in arrival order.
	Mutation bool
	// NeedsWorkspace tools answer NO_WORKSPACE in a Temporary session.
	NeedsWorkspace bool
	// Modes lists the operating modes the tool is available in; nil = all.
	Modes []string

	schema     *jsonschema.Schema
	schemaJSON json.RawMessage
	run        func(ctx context.Context, c *call) *ToolResult
	// preview is the card's text: head (the command, or the tool and the
	// path) shown as it is, body (what a file gets) with its secrets
	// hidden; nil: the redacted args.
	preview func(c *call) (head, body string)
	// precheck, if set, runs after argument and path checks and before the
	// permission decision: a refusal there never shows a card (Bash's
	// denylist and shell pinning).
	precheck func(ctx context.Context, c *call) *ToolResult

	// Plugin tools.
	PluginID, PluginTool string
}

func (t *toolDef) availableIn(mode string) bool {
	if t.Modes == nil {
		return true
	}
	for _, m := range t.Modes {
		if m == mode {
			return true
		}
	}
	return false
}

type toolset struct {
	mu     sync.RWMutex
	byName map[string]*toolDef
}

func (ts *toolset) get(name string) *toolDef {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return ts.byName[name]
}

func (ts *toolset) add(t *toolDef) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.byName[t.Name] = t
}

func (ts *toolset) all() []*toolDef {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	out := make([]*toolDef, 0, len(ts.byName))
	for _, t := range ts.byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// embeddedSchemas are the tool schemas of handlers/schemas, compiled once
// per process with one compiler (so the meta-schema is checked once, not
// per schema).
var embeddedSchemas = sync.OnceValues(func() (map[string]compiledSchema, error) {
	entries, err := schemaFS.ReadDir("schemas")
	if err != nil {
		return nil, err
	}
	// Draft-07 covers every keyword these schemas use and compiles in half
	// the time of 2020-12 (start-up budget). Plugin schemas stay 2020-12.
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	docs := map[string][]byte{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		doc, err := schemaFS.ReadFile("schemas/" + e.Name())
		if err != nil {
			return nil, err
		}
		if err := c.AddResource("hostcore:///"+name+".json", bytes.NewReader(doc)); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		docs[name] = doc
	}
	out := map[string]compiledSchema{}
	for name, doc := range docs {
		sc, err := c.Compile("hostcore:///" + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[name] = compiledSchema{sc, doc}
	}
	return out, nil
})

type compiledSchema struct {
	schema *jsonschema.Schema
	doc    json.RawMessage
}

// Prepare compiles the embedded schemas now, so main can do it while the
// database opens.
func Prepare() error {
	_, err := embeddedSchemas()
	return err
}

// builtinTools attaches its compiled schema to every built-in tool. A
// schema that fails to compile stops the program at start-up.
func builtinTools() (*toolset, error) {
	schemas, err := embeddedSchemas()
	if err != nil {
		return nil, err
	}
	ts := &toolset{byName: map[string]*toolDef{}}
	for _, t := range builtinDefs() {
		sc, ok := schemas[t.Name]
		if !ok {
			return nil, fmt.Errorf("tool %s has no schema in handlers/schemas", t.Name)
		}
		t.schema, t.schemaJSON = sc.schema, sc.doc
		ts.add(t)
	}
	return ts, nil
}

// validateArgs checks args against the tool's schema and names the first
// failing field.
func validateArgs(t *toolDef, args json.RawMessage) error {
	v, err := decodeAny(args)
	if err != nil {
		return fmt.Errorf("args: %v", err)
	}
	return validateValue(t, v)
}

// validateValue is validateArgs for args already decoded by decodeAny.
func validateValue(t *toolDef, v any) error {
	if err := t.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describeValidation(ve))
		}
		return err
	}
	return checkIntegers(t, v)
}

// checkIntegers refuses integer arguments the tools' int fields cannot
// hold. JSON Schema counts 1.0 and 1e30 as integers, but encoding/json
// will not put them in an int: the field would be dropped silently and the
// tool would run with its default (found by FuzzToolArgs).
func checkIntegers(t *toolDef, v any) error {
	obj, ok := v.(map[string]any)
	// A plugin's args go to the client as they came, never into an int:
	// its schema alone judges them (1.0 is an integer to JSON Schema).
	if !ok || t.schema == nil || t.PluginID != "" {
		return nil
	}
	for name, prop := range t.schema.Properties {
		n, ok := obj[name].(json.Number)
		if !ok || !slices.Contains(prop.Types, "integer") {
			continue
		}
		if _, err := strconv.ParseInt(string(n), 10, 0); err != nil {
			return fmt.Errorf("args.%s: want an integer written without fraction or exponent within the int range, got %s", name, n)
		}
	}
	return nil
}

// describeValidation turns the deepest schema failure into
// "args.path: expected string, but got number".
func describeValidation(ve *jsonschema.ValidationError) string {
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	field := "args" + strings.ReplaceAll(leaf.InstanceLocation, "/", ".")
	msg := leaf.Message
	if strings.HasPrefix(msg, "missing properties") || strings.HasPrefix(msg, "additionalProperties") {
		return field + ": " + msg
	}
	return field + ": " + msg
}

// decodeAny decodes one JSON value as encoding/json does into an
// interface{}, numbers as json.Number.
func decodeAny(raw json.RawMessage) (any, error) { return redact.Decode(raw) }
