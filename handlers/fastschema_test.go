package handlers

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Which built-in tools get the fast check: the simple ones at least.
func TestFlatSchemas(t *testing.T) {
	ts, err := builtinTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Read", "Glob", "Grep", "Write", "Edit", "Bash", "BrowserPreview", "ToolSearch"} {
		if ts.get(name).flat == nil {
			t.Errorf("%s: its schema is not read as flat", name)
		}
	}
}

// FuzzFlatSchema: whatever the fast check accepts, the validator accepts;
// for each built-in tool, over args made of its members and others.
func FuzzFlatSchema(f *testing.F) {
	for _, s := range []string{
		`{"path":"a"}`, `{"path":""}`, `{"path":"a","offset":0}`, `{"path":"a","limit":1.0}`, `{"pattern":"x","headLimit":10001}`,
		`{"pattern":"x","outputMode":"count"}`, `{"pattern":"x","outputMode":"lines"}`, `{"command":"ls","timeout":300,"tty":true}`,
		`{"command":"ls","timeout":"5"}`, `{"path":"é","content":"x"}`, `{"query":"q","extra":1}`, `{"path":["a"]}`, `{"context":-1,"pattern":"p"}`,
		`{"path":"a","offset":99999999999999999999}`, `{"path":"a","offset":-5}`, `{"path":null}`,
	} {
		f.Add(s)
	}
	ts, err := builtinTools()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		v, err := decodeAny(json.RawMessage(s))
		if err != nil {
			return
		}
		for _, tool := range ts.all() {
			if tool.flat == nil || !tool.flat.accepts(v) {
				continue
			}
			if err := tool.schema.Validate(v); err != nil {
				t.Fatalf("%s: the fast check accepts %s, the validator refuses it: %v", tool.Name, s, err)
			}
		}
	})
}

// Random args made of each flat tool's own members, typed values at and
// around every bound: the fast check never accepts what the validator
// refuses, and it accepts most of what the validator accepts (or it
// would save nothing).
func TestFlatSchemaAgreesWithTheValidator(t *testing.T) {
	ts, err := builtinTools()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	values := []string{`""`, `"a"`, `"é"`, `"count"`, `"content"`, `"files_with_matches"`, `"x\u0000y"`, `0`, `1`, `-1`, `50`, `51`, `300`, `301`,
		`10000`, `10001`, `1.0`, `1e3`, `2.5`, `99999999999999999999`, `true`, `false`, `null`, `[]`, `{}`, `"1"`}
	accepted, valid := 0, 0
	for _, tool := range ts.all() {
		if tool.flat == nil {
			continue
		}
		var names []string
		for n := range tool.flat.members {
			names = append(names, n)
		}
		names = append(names, "other")
		for range 3000 {
			obj := map[string]json.RawMessage{}
			for _, n := range names {
				if r.IntN(3) > 0 {
					obj[n] = json.RawMessage(values[r.IntN(len(values))])
				}
			}
			raw, _ := json.Marshal(obj)
			v, err := decodeAny(raw)
			if err != nil {
				t.Fatal(err)
			}
			fast := tool.flat.accepts(v)
			full := tool.schema.Validate(v) == nil
			if fast && !full {
				t.Fatalf("%s: the fast check accepts %s, the validator refuses it", tool.Name, raw)
			}
			if full {
				valid++
				if fast {
					accepted++
				}
			}
		}
	}
	if valid == 0 || accepted*10 < valid*8 {
		t.Fatalf("the fast check accepted %d of %d valid args", accepted, valid)
	}
}
