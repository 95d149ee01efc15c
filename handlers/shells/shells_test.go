package shells

import (
	"encoding/json"
	"testing"

	"hostcore/sandbox/process"
)

// TestEffectiveFallsBackToAnAvailableShell: a persisted default that is
// not available here (a Windows shell on Linux) gives way to the first
// available shell of the catalog, and the list says both.
func TestEffectiveFallsBackToAnAvailableShell(t *testing.T) {
	first := ""
	for _, sh := range process.Catalog() {
		if sh.Available {
			first = sh.ID
			break
		}
	}
	missing := "no-such-shell"
	if Available(missing) {
		t.Fatal("an unknown id is available")
	}
	if got := Effective(&missing); got != first {
		t.Fatalf("Effective(%q) = %q, want %q", missing, got, first)
	}
	if got := Effective(nil); got != first {
		t.Fatalf("Effective(nil) = %q, want %q", got, first)
	}
	if first != "" {
		if got := Effective(&first); got != first {
			t.Fatalf("Effective(%q) = %q", first, got)
		}
	}
	b, err := json.Marshal(ListOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	var l map[string]json.RawMessage
	json.Unmarshal(b, &l)
	if string(l["defaultCommandShell"]) != "null" || len(l["shells"]) < 2 {
		t.Fatalf("shells.list answer %s", b)
	}
	if first == "" && string(l["effectiveShell"]) != "null" {
		t.Fatalf("no shell available, yet effectiveShell is %s", l["effectiveShell"])
	}
}
