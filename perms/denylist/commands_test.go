package denylist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []Command
	}{
		{"git apply x.patch", []Command{{Args: []string{"git", "apply", "x.patch"}}}},
		{"cd sub && patch -p1 < x.diff", []Command{{Args: []string{"cd", "sub"}}, {Args: []string{"patch", "-p1"}, Redirected: true}}},
		{"apply_patch <<'EOF'\n*** x\nEOF", []Command{{Args: []string{"apply_patch"}, Redirected: true}}},
		{`LC_ALL=C git -C '../wt' apply "a b.patch"`, []Command{{Args: []string{"git", "-C", "../wt", "apply", "a b.patch"}, Env: []string{"LC_ALL=C"}}}},
		{"go test ./... | grep -v ok; echo done", []Command{{Args: []string{"go", "test", "./..."}}, {Args: []string{"grep", "-v", "ok"}}, {Args: []string{"echo", "done"}}}},
		{"echo $(git apply x) ~/f *.go", []Command{
			{Args: []string{"echo", "$(git apply x)", "~/f", "*.go"}, Dynamic: true},
			{Args: []string{"git", "apply", "x"}, Nested: true},
		}},
		{"if [[ -f x ]]; then export A=1; fi", []Command{{Args: []string{"[["}, Dynamic: true}, {Args: []string{"export", "A=1"}}}},
		{"for f in *.diff; do patch -p1 -i \"$f\"; done", []Command{{Args: []string{"patch", "-p1", "-i", `"$f"`}, Dynamic: true}}},
	} {
		got, err := Commands(tc.line)
		if err != nil {
			t.Errorf("Commands(%q): %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Commands(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
	if _, err := Commands("echo )"); err == nil {
		t.Error("Commands of a line that does not parse: no error")
	}
}
