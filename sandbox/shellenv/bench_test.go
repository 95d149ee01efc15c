//go:build !windows

package shellenv

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkTrue runs `true` through a snapshot, with bash -c, and with
// bash -lc, in a HOME whose profile costs 0.5 s (a sleep, as pyenv init
// or nvm would) and defines some functions and aliases. The issue's
// target: snapshot ≤ bash -c + 30 ms.
//
//	go test -run '^$' -bench True -benchtime 20x ./sandbox/shellenv
func BenchmarkTrue(b *testing.B) {
	var profile strings.Builder
	profile.WriteString("sleep 0.5\nexport PATH=\"$HOME/.pyenv/shims:$PATH\"\n")
	for i := range 100 {
		fmt.Fprintf(&profile, "fn%d() { local x=$1; if [[ -n $x ]]; then printf '%%s\\n' \"$x\"; fi; }\nalias a%d='fn%d x'\n", i, i, i)
	}
	f := newFixture(b, map[string]string{".bash_profile": profile.String()})
	s, err := Take(b.Context(), bash, f.opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Remove()
	path, args, env, err := s.Command("true", f.env, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		argv []string
		env  []string
	}{
		{"snapshot", append([]string{path}, args...), env},
		{"bash-c", []string{bash, "-c", "true"}, f.env},
		{"bash-lc", []string{bash, "-lc", "true"}, f.env},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env = c.env
				if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
					b.Fatalf("%v: %q", err, out)
				}
			}
		})
	}
}
