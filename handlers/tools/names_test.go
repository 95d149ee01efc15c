package tools

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestNearNames(t *testing.T) {
	names := []string{"sessionId", "review-code", "review-docs", "release-notes"}
	for _, c := range []struct {
		name    string
		want    []string
		nearest string
	}{
		{"session_id", []string{"sessionId"}, "sessionId"}, // case, '_' and '-' ignored
		{"review-cod", []string{"review-code", "review-docs"}, "review-code"},
		{"review-dcs", []string{"review-docs"}, "review-docs"},
		{"zzz", []string{}, ""},
	} {
		got := NearNames(c.name, names)
		if diff := gocmp.Diff(c.want, got); diff != "" {
			t.Errorf("NearNames(%q) (-want +got):\n%s", c.name, diff)
		}
		if n := NearestName(c.name, names); n != c.nearest {
			t.Errorf("NearestName(%q) = %q, want %q", c.name, n, c.nearest)
		}
	}
}
