package jsonobj

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzMembers: for every valid JSON object, Members gives each member's
// name and value exactly as a decode into a map of raw values does (the
// last of a repeated name winning there), and ValueEnd finds where any
// value ends.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,"]",{"c":"}"}] , "\u0061":"x\"y" } `, `{"a":null,"a":true}`, `[1]`, `"s"`, `{"e":-1.5e+3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !json.Valid(b) || !utf8.Valid(b) {
			return // the package's precondition
		}
		if end := ValueEnd(b, bytes.IndexFunc(b, func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' })); end < 0 || len(bytes.TrimSpace(b[end:])) != 0 {
			t.Fatalf("ValueEnd(%s) = %d", s, end)
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(b, &want) == nil && bytes.TrimSpace(b)[0] == '{'
		got := map[string]json.RawMessage{}
		ok := Members(b, func(quoted, val []byte) bool {
			name, plain := Name(quoted)
			key := string(name)
			if !plain {
				if err := json.Unmarshal(quoted, &key); err != nil {
					t.Fatalf("%s: name %s does not decode: %v", s, quoted, err)
				}
			}
			got[key] = val
			return true
		})
		if ok != isObject {
			t.Fatalf("%s: Members says %v, a decode into a map %v", s, ok, isObject)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%s: members %v, want %v", s, got, want)
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%s: member %q = %s, want %s", s, k, got[k], v)
			}
		}
	})
}

// AppendString writes exactly json.Marshal's bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain id-1", `q"b\`, "<a&b>", "\x00\x1f\x7f", "é \u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, json.Marshal %s", s, got[1:], want)
		}
	})
}
