package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hostcore/handlers/tools"
)

func TestSandboxUpdateChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    sandboxUpdate
		ok   bool
		want map[string]string // key -> stored value ("<nil>" for cleared)
	}{
		{"modes", sandboxUpdate{CommandSandbox: json.RawMessage(`"read-only"`)}, true, map[string]string{keyCommandSandbox: "read-only"}},
		{"off", sandboxUpdate{CommandSandbox: json.RawMessage(`"off"`)}, true, map[string]string{keyCommandSandbox: "off"}},
		{"reset", sandboxUpdate{CommandSandbox: json.RawMessage(`null`), SandboxWritableDirs: json.RawMessage(`null`), PlanBashReadOnly: json.RawMessage(`null`)}, true,
			map[string]string{keyCommandSandbox: "<nil>", keySandboxWritable: "<nil>", keyPlanBashReadOnly: "<nil>"}},
		{"dirs", sandboxUpdate{SandboxWritableDirs: json.RawMessage(`["/opt/cache","/srv/x"]`)}, true, map[string]string{keySandboxWritable: `["/opt/cache","/srv/x"]`}},
		{"plan", sandboxUpdate{PlanBashReadOnly: json.RawMessage(`true`)}, true, map[string]string{keyPlanBashReadOnly: "true"}},
		{"bad mode", sandboxUpdate{CommandSandbox: json.RawMessage(`"strict"`)}, false, nil},
		{"relative dir", sandboxUpdate{SandboxWritableDirs: json.RawMessage(`["rel"]`)}, false, nil},
		{"root dir", sandboxUpdate{SandboxWritableDirs: json.RawMessage(`["/.."]`)}, false, nil},
		{"not an array", sandboxUpdate{SandboxWritableDirs: json.RawMessage(`"/x"`)}, false, nil},
		{"bool", sandboxUpdate{PlanBashReadOnly: json.RawMessage(`"yes"`)}, false, nil},
	} {
		changes := map[string]*string{}
		err := tc.u.check(changes)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
			continue
		}
		for k, want := range tc.want {
			got := "<nil>"
			if v, ok := changes[k]; !ok {
				got = "<absent>"
			} else if v != nil {
				got = *v
			}
			if got != want {
				t.Errorf("%s: %s = %s, want %s", tc.name, k, got, want)
			}
		}
	}
	many := make([]string, maxWritableDirs+1)
	for i := range many {
		many[i] = "/d"
	}
	if checkWritableDirs(many) == nil {
		t.Error("more than maxWritableDirs dirs were accepted")
	}
}

// TestDataDirDeny: a command may read the scripts bash reads before it,
// nothing else of the data dir (its scratch is granted as a root).
func TestDataDirDeny(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"hostcore.db", "hostcore.db-wal", "bash_env.sh", "shell-snapshot-ab12.sh", ".bash_env-123"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	os.Mkdir(filepath.Join(dir, "scratch"), 0o700)
	got := dataDirDeny(dir)
	slices.Sort(got)
	want := []string{filepath.Join(dir, ".bash_env-123"), filepath.Join(dir, "hostcore.db"), filepath.Join(dir, "hostcore.db-wal"), filepath.Join(dir, "scratch")}
	if !slices.Equal(got, want) {
		t.Errorf("dataDirDeny = %v, want %v", got, want)
	}
	if got := dataDirDeny(filepath.Join(dir, "missing")); len(got) != 1 {
		t.Errorf("an unreadable data dir is not denied whole: %v", got)
	}
	empty := t.TempDir()
	if got := dataDirDeny(empty); len(got) != 0 {
		t.Errorf("empty data dir: %v", got)
	}
}

func TestSandboxStatusHook(t *testing.T) {
	t.Setenv(landlockOffVar, "off")
	if st := sandboxStatus(); st.Kind != tools.SandboxNone || st.Reason == "" {
		t.Errorf("with %s=off: %+v", landlockOffVar, st)
	}
}
