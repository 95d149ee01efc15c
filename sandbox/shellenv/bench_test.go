//go:build !windows

package shellenv

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkTrue runs `true` through a snapshot, with bash -c, and with
// bash -lc, in a HOME whose profile costs 0.5 s (a sleep, as pyenv init
// or nvm would) and defines some functions and aliases. The issue's
// target: snapshot ≤ bash -c + 30 ms.
//
//	go test -run '^$' -bench True -benchtime 30x ./sandbox/shellenv
//
// It reports the median of each, in ms.
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
	variants := []struct {
		name string
		argv []string
		env  []string
	}{
		{"snapshot", append([]string{path}, args...), env},
		{"bash-c", []string{bash, "-c", "true"}, f.env},
		{"bash-lc", []string{bash, "-lc", "true"}, f.env},
	}
	// Interleaved, and medians: on a loaded machine, runs of one variant
	// in a row would each meet a different load.
	took := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			cmd := exec.Command(v.argv[0], v.argv[1:]...)
			cmd.Env = v.env
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
				b.Fatalf("%s: %v: %q", v.name, err, out)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	for i, v := range variants {
		slices.Sort(took[i])
		b.ReportMetric(float64(took[i][len(took[i])/2])/float64(time.Millisecond), v.name+"-ms")
	}
	b.ReportMetric(0, "ns/op")
}
