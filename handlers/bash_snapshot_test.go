package handlers

import (
	"encoding/json"
	"testing"
)

func TestParseShellMode(t *testing.T) {
	for raw, want := range map[string]string{`"snapshot"`: "snapshot", `"login"`: "login", `null`: "<nil>"} {
		v, err := parseShellMode(json.RawMessage(raw))
		got := "<nil>"
		if v != nil {
			got = *v
		}
		if err != nil || got != want {
			t.Errorf("parseShellMode(%s) = %s, %v; want %s", raw, got, err, want)
		}
	}
	for _, raw := range []string{`""`, `"bash -lc"`, `"Login"`, `1`, `["login"]`} {
		if _, err := parseShellMode(json.RawMessage(raw)); err == nil {
			t.Errorf("parseShellMode(%s) took it", raw)
		}
	}
}
