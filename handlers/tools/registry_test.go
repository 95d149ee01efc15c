package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every parameter of every embedded schema has a description: MCP clients
// and models read them.
func TestSchemasDescribeEveryParameter(t *testing.T) {
	schemas, err := compiledSchemas()
	if err != nil {
		t.Fatal(err)
	}
	var check func(name, at string, s map[string]any)
	check = func(name, at string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			p, _ := v.(map[string]any)
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s: %s%s has no description", name, at, k)
			}
			check(name, at+k+".", p)
			if items, ok := p["items"].(map[string]any); ok {
				check(name, at+k+"[].", items)
			}
		}
	}
	for name, sc := range schemas {
		var s map[string]any
		if err := json.Unmarshal(sc.doc, &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(name, "", s)
	}
}

// A registry of the tools of this package finds a schema for each, and
// validation names the failing field.
func TestRegistryValidates(t *testing.T) {
	r, err := NewRegistry(Read.Def(), Glob.Def(), Grep.Def(), Write.Def(), Edit.Def(), Bash.Def(),
		NewContext.Def(), ToolSearch.Def(), Task.Def(), Ask.Def(), BrowserPreview.Def())
	if err != nil {
		t.Fatal(err)
	}
	read := r.Get("Read")
	for args, want := range map[string]string{
		`{"path":"a.txt","offset":2}`: "",
		`{"path":1}`:                  "args.path: expected string, but got number",
		`{}`:                          "args: missing properties: 'path'",
		`{"path":"a","offset":1.5}`:   "args.offset: expected integer, but got number",
		`{"path":"a","offset":1e30}`:  "args.offset: want an integer written without fraction or exponent within the int range, got 1e30",
	} {
		var got string
		if v, err := decodeNumbers(args); err != nil {
			t.Fatal(err)
		} else if err := read.Validate(v); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("Validate(%s) = %q, want %q", args, got, want)
		}
	}
	if _, err := NewRegistry(Tool[struct{}, struct{}]{Spec: Spec{Name: "NoSuchSchema"}}.Def()); err == nil {
		t.Error("a tool without a schema was registered")
	}
}

func decodeNumbers(s string) (any, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}
