package tools

import (
	"bytes"
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

	"hostcore/handlers/plugin"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// Registry is the one set of tools a connection offers: the built-in
// ones and those plugins register.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*Def
	// skills are the plugins' skills by name (Skill).
	skills map[string]plugin.Skill
}

// NewRegistry attaches its embedded schema (schemas/<Name>.json) to every
// built-in tool. A schema that is missing or fails to compile is an
// error, and the program stops at start-up.
func NewRegistry(defs ...*Def) (*Registry, error) {
	schemas, err := compiledSchemas()
	if err != nil {
		return nil, err
	}
	r := &Registry{byName: map[string]*Def{}, skills: map[string]plugin.Skill{}}
	for _, d := range defs {
		sc, ok := schemas[d.Name]
		if !ok {
			return nil, fmt.Errorf("tool %s has no schema in handlers/tools/schemas", d.Name)
		}
		d.Schema, d.SchemaJSON = sc.schema, sc.doc
		r.byName[d.Name] = d
	}
	return r, nil
}

// Get is the tool of that name, nil if none.
func (r *Registry) Get(name string) *Def {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// All lists the tools by name.
func (r *Registry) All() []*Def {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Def, 0, len(r.byName))
	for _, d := range r.byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ReplacePlugin withdraws every tool and skill of the plugin and
// registers defs and skills in their place, at once.
func (r *Registry) ReplacePlugin(id string, defs []*Def, skills []plugin.Skill) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(id)
	for _, d := range defs {
		r.byName[d.Name] = d
	}
	for _, sk := range skills {
		r.skills[sk.Name] = sk
	}
}

// Skill is the skill of that name; ok is false if no plugin has it.
func (r *Registry) Skill(name string) (sk plugin.Skill, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sk, ok = r.skills[name]
	return sk, ok
}

// Skills lists the plugins' skills by name.
func (r *Registry) Skills() []plugin.Skill {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]plugin.Skill, 0, len(r.skills))
	for _, sk := range r.skills {
		out = append(out, sk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DropPlugin withdraws every tool and skill of a plugin and says how many
// tools there were.
func (r *Registry) DropPlugin(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropLocked(id)
}

func (r *Registry) dropLocked(id string) int {
	for name, sk := range r.skills {
		if sk.PluginID == id {
			delete(r.skills, name)
		}
	}
	n := 0
	for name, d := range r.byName {
		if d.PluginID == id {
			delete(r.byName, name)
			n++
		}
	}
	return n
}

type compiledSchema struct {
	schema *jsonschema.Schema
	doc    json.RawMessage
}

// compiledSchemas are the embedded tool schemas, compiled once per process
// with one compiler (so the meta-schema is checked once, not per schema).
var compiledSchemas = sync.OnceValues(func() (map[string]compiledSchema, error) {
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
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource("hostcore:///"+name+".json", bytes.NewReader(compact.Bytes())); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		docs[name] = compact.Bytes()
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

// Prepare compiles the embedded schemas now, so main can do it while the
// database opens.
func Prepare() error {
	_, err := compiledSchemas()
	return err
}

// Validate checks args, as Decode of the redact package gives them
// (numbers as json.Number), against the tool's schema and names the first
// failing field.
func (d *Def) Validate(v any) error {
	if err := d.Schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describeValidation(ve))
		}
		return err
	}
	return d.checkIntegers(v)
}

// checkIntegers refuses integer arguments the tools' int fields cannot
// hold. JSON Schema counts 1.0 and 1e30 as integers, but encoding/json
// will not put them in an int: the decode would fail (found by
// FuzzToolArgs), and the message is better said here.
func (d *Def) checkIntegers(v any) error {
	obj, ok := v.(map[string]any)
	// A plugin's args go to the client as they came, never into an int:
	// its schema alone judges them (1.0 is an integer to JSON Schema).
	if !ok || d.Schema == nil || d.PluginID != "" {
		return nil
	}
	for name, prop := range d.Schema.Properties {
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
	return "args" + strings.ReplaceAll(leaf.InstanceLocation, "/", ".") + ": " + leaf.Message
}
