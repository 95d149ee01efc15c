package denylist

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMatchPath(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "keys"))
	link := filepath.Join(t.TempDir(), "home-link")
	os.Symlink(home, link)
	for _, tc := range []struct {
		t    FileTarget
		home string
		want bool
	}{
		{FileTarget{Paths: []string{filepath.Join(home, ".ssh", "id_rsa")}}, home, true},
		// as written through a link, and as resolved (the caller gives both)
		{FileTarget{Paths: []string{filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "keys", "id_rsa")}}, home, true},
		{FileTarget{Paths: []string{home}, Tree: true}, home, true},
		{FileTarget{Paths: []string{home}, Pattern: ".ss?/*"}, home, true},
		{FileTarget{Paths: []string{home}, Pattern: "**/id_*"}, home, true},
		{FileTarget{Paths: []string{home}, Pattern: ".ssh/id_rsa"}, home, true},
		{FileTarget{Paths: []string{home}, Pattern: "keys/*"}, home, true},
		{FileTarget{Paths: []string{filepath.Join(home, ".ssh", "id_rsa")}}, link, true},
		{FileTarget{Paths: []string{filepath.Join(link, ".ssh", "id_rsa")}}, link, true},
		{FileTarget{Paths: []string{"/etc/shadow-"}}, home, true},
		{FileTarget{Paths: []string{filepath.Join(home, "notes.txt")}}, home, false},
		{FileTarget{Paths: []string{home}, Pattern: "*.txt"}, home, false},
		{FileTarget{Paths: []string{home}, Pattern: "docs/*.txt"}, home, false},
		{FileTarget{Paths: []string{home}}, home, false},
		{FileTarget{Paths: []string{"relative/.ssh/id_rsa"}}, home, false},
	} {
		if got := MatchPath(tc.t, tc.home, nil) != ""; got != tc.want {
			t.Errorf("MatchPath(%+v, %s) denied=%v, want %v", tc.t, tc.home, got, tc.want)
		}
	}
	if MatchPath(FileTarget{Paths: []string{"/srv/vault/k"}}, home, []string{"/srv/vault"}) == "" {
		t.Error("a user entry was not matched")
	}
}

func TestCheckEntries(t *testing.T) {
	for _, list := range [][]string{{"relative/path"}, {"~/.secret*"}, {"~/."}, {"~/.."}, {"/"}, make([]string, MaxEntries+1)} {
		if CheckEntries(list) == nil {
			t.Errorf("CheckEntries(%.40q) accepted it", list)
		}
	}
	if err := CheckEntries([]string{"~/.secrets", "/opt/vault"}); err != nil {
		t.Error(err)
	}
}
