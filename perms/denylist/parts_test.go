package denylist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParts(t *testing.T) {
	t.Parallel()
	lit := func(v string) Word { return Word{Value: v, Literal: true, Inert: true} }
	for _, tc := range []struct {
		line string
		want []Part
	}{
		{"npm test -- x", []Part{{Words: []Word{lit("npm"), lit("test"), lit("--"), lit("x")}}}},
		{`"npm" t\
est`, []Part{{Words: []Word{lit("npm"), lit("test")}}}},
		{"a && b | c; d", []Part{{Words: []Word{lit("a")}}, {Words: []Word{lit("b")}}, {Words: []Word{lit("c")}}, {Words: []Word{lit("d")}}}},
		{"FOO=1 a", []Part{{Words: []Word{lit("a")}, Env: true}}},
		{"FOO=1", []Part{{Env: true, Shape: "assignment"}}},
		{"a *.go $X $(b)", []Part{{Words: []Word{lit("a"), {Value: "*.go", Inert: true}, {Value: "$X", Inert: true}, {Value: "$(b)"}}}}},
		{"a 2>&1 > out <<<hi", []Part{{Words: []Word{lit("a")}, Redirs: []Redir{
			{Op: ">&", Target: lit("1"), FD: true}, {Op: ">", Target: lit("out")}, {Op: "<<<", Target: lit("hi"), Input: true},
		}}}},
		{"a {fd}>x", []Part{{Words: []Word{lit("a")}, Redirs: []Redir{{Op: ">", Target: lit("x"), Named: true}}}}},
		{"(a) & b", []Part{{Shape: "background"}, {Words: []Word{lit("b")}}}},
		{"f() { a; }", []Part{{Shape: "function"}}},
		{"export A=1", []Part{{Shape: "declaration"}}},
	} {
		got, err := Parts(tc.line)
		if err != nil {
			t.Errorf("Parts(%q): %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Parts(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
	if _, err := Parts("a )"); err == nil {
		t.Error("Parts of a line that does not parse: no error")
	}
}
