//go:build !windows

package shellenv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"hostcore/sandbox/process"
)

// In login mode the mark is left by the BASH_ENV script that runs after
// the profile: a command that timed out behind a hanging profile never
// started; one whose profile finished did, even if it then timed out.
func TestStartedLoginMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, profile, command string
		timeout                time.Duration
		want                   bool
	}{
		{"profile hangs", "sleep 30\n", "echo ran", time.Second, false},
		// (A loaded machine's bash -l may take a second to reach it.)
		{"command hangs", "set -eux -o noclobber\n", "sleep 30", 5 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{".bash_profile": c.profile})
			script := filepath.Join(f.data, "bash_env.sh")
			os.WriteFile(script, []byte(StartedScript), 0o600)
			mark, err := NewStarted(f.data)
			if err != nil {
				t.Fatal(err)
			}
			defer mark.Remove()
			res, err := process.Run(t.Context(), process.Spec{
				Path: bash, Args: []string{"-lc", c.command}, Dir: "/",
				Env:     append(f.env, "BASH_ENV="+script, mark.Env()),
				Timeout: c.timeout, Grace: 100 * time.Millisecond,
			})
			if err != nil || !res.TimedOut {
				t.Fatalf("Run: %+v, %v; want a timeout", res, err)
			}
			if mark.Done() != c.want {
				t.Errorf("Done() = %v, want %v", mark.Done(), c.want)
			}
			if res.Stderr.Head != "" && !c.want {
				t.Errorf("stderr %q", res.Stderr.Head)
			}
		})
	}
}

func TestStartedSnapshotMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "set -u\n"})
	s := f.take(t)
	mark, err := NewStarted(f.data)
	if err != nil {
		t.Fatal(err)
	}
	defer mark.Remove()
	if mark.Done() {
		t.Fatal("Done before the command")
	}
	got := f.run(t, s, `printf %s "${HOSTCORE_STARTED-unset}"`, nil, mark)
	if got.stdout != "unset" || got.stderr != "" {
		t.Errorf("the command saw %+v", got)
	}
	if !mark.Done() {
		t.Error("no mark after the command ran")
	}
	mark.Remove()
	if mark.Done() {
		t.Error("mark still there after Remove")
	}
}
