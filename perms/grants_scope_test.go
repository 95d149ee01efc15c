package perms

import "testing"

// An outside-path grant covers its directory and what lies beneath it,
// by whole components, in its own session only.
func TestGrantsInDirectory(t *testing.T) {
	var g Grants
	key := GrantKey("Read", ReasonOutsidePath)
	g.AddIn("s", key, "/out/a")
	for p, want := range map[string]bool{
		"/out/a": true, "/out/a/x.txt": true, "/out/a/sub/y.txt": true,
		"/out/ab/x.txt": false, "/out/b.txt": false, "/out": false, "/etc/passwd": false,
	} {
		if got := g.HasIn("s", key, p); got != want {
			t.Errorf("HasIn(%s) = %v, want %v", p, got, want)
		}
	}
	if g.HasIn("other", key, "/out/a/x.txt") || g.HasIn("s", GrantKey("Write", ReasonOutsidePath), "/out/a/x.txt") {
		t.Error("a grant leaked to another session or tool")
	}
	if g.Has("s", key) {
		t.Error("a directory grant counts as a grant everywhere")
	}
	g.AddIn("s", key, "/")
	if !g.HasIn("s", key, "/etc/passwd") {
		t.Error("a grant for / does not cover /etc/passwd")
	}
	g.Forget("s")
	if g.HasIn("s", key, "/out/a/x.txt") {
		t.Error("Forget kept a directory grant")
	}
}
