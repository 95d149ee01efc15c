//go:build unix

package search

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goSrc is a large real tree with nested .gitignore files, hidden entries,
// binary test data and symlinks.
const goSrc = "/usr/local/go/src"

// compareCases are the patterns checked against ripgrep and benchmarked.
var compareCases = []struct {
	name       string
	pattern    string
	ignoreCase bool
}{
	{"Literal", "func main", false},
	{"Regex", `func \w+Test\(`, false},
	{"IgnoreCase", "deadline", true},
	{"RegexDenseLiteral", `^\s*//\s*[A-Z]{4}\b`, false}, // prefilter "//" is on most lines
	{"IgnoreCaseRegex", `context\.with(cancel|timeout)`, true},
	// No required literal: Go's regexp NFA scans every byte (the slow case).
	{"RegexNoLiteral", `[A-Z]{5}\d`, false},
}

func needRipgrep(t testing.TB) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not on PATH")
	}
	if _, err := os.Stat(goSrc); err != nil {
		t.Skip(goSrc + " missing")
	}
	return rg
}

func rgLines(t testing.TB, rg string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(rg, args...).Output()
	if err != nil && len(out) == 0 {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("rg %v: %v", args, err)
		}
	}
	var got []string
	for _, l := range lines(string(out)) {
		got = append(got, strings.TrimPrefix(l, goSrc+"/"))
	}
	slices.Sort(got)
	return got
}

// TestSameFilesAsRipgrep pins the file set of files_with_matches to
// `rg -l` over the Go source tree.
func TestSameFilesAsRipgrep(t *testing.T) {
	if testing.Short() {
		t.Skip("walks the Go tree")
	}
	rg := needRipgrep(t)
	for _, c := range compareCases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-l"}
			if c.ignoreCase {
				args = append(args, "-i")
			}
			want := rgLines(t, rg, append(args, "--", c.pattern, goSrc)...)
			res, err := Grep(t.Context(), GrepOptions{Root: goSrc, Pattern: c.pattern, IgnoreCase: c.ignoreCase, HeadLimit: 1 << 30, MaxBytes: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, lines(res.Text)); diff != "" {
				t.Errorf("file set differs from rg -l (-rg +ours):\n%s", diff)
			}
			if res.Files != len(want) {
				t.Errorf("Files = %d, rg found %d", res.Files, len(want))
			}
		})
	}
	t.Run("Count", func(t *testing.T) {
		// Matching-line counts per file agree with rg -c too.
		want := rgLines(t, rg, "-c", `func \w+Test\(`, goSrc)
		res, err := Grep(t.Context(), GrepOptions{Root: goSrc, Pattern: `func \w+Test\(`, Mode: ModeCount, HeadLimit: 1 << 30, MaxBytes: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, lines(res.Text)); diff != "" {
			t.Errorf("counts differ from rg -c (-rg +ours):\n%s", diff)
		}
	})
	t.Run("Glob", func(t *testing.T) {
		want := rgLines(t, rg, "--files", "-g", "*_test.go", goSrc)
		res, err := Glob(t.Context(), GlobOptions{Root: goSrc, Pattern: "**/*_test.go", HeadLimit: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if res.Count != len(want) {
			t.Errorf("Glob count %d, rg --files -g: %d", res.Count, len(want))
		}
		got := slices.Clone(res.Paths)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-rg +ours):\n%s", diff)
		}
	})
}

func benchGrep(b *testing.B, pattern string, ignoreCase bool) {
	if _, err := os.Stat(goSrc); err != nil {
		b.Skip(goSrc + " missing")
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Grep(ctx, GrepOptions{Root: goSrc, Pattern: pattern, IgnoreCase: ignoreCase}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrepLiteral(b *testing.B)    { benchGrep(b, "func main", false) }
func BenchmarkGrepRegex(b *testing.B)      { benchGrep(b, `func \w+Test\(`, false) }
func BenchmarkGrepIgnoreCase(b *testing.B) { benchGrep(b, "deadline", true) }

func BenchmarkGlob(b *testing.B) {
	if _, err := os.Stat(goSrc); err != nil {
		b.Skip(goSrc + " missing")
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Glob(ctx, GlobOptions{Root: goSrc, Pattern: "**/*_test.go"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTimeAgainstRipgrep prints wall and CPU times of this package and of
// rg (2 threads, as on the target machine) side by side: runs alternate
// between the two so load from other processes hits both alike; wall is the
// best run, CPU (user+sys) the median. It runs only with SEARCH_TIMING=1:
//
//	SEARCH_TIMING=1 go test -run TimeAgainstRipgrep -v ./handlers/search/
func TestTimeAgainstRipgrep(t *testing.T) {
	if os.Getenv("SEARCH_TIMING") == "" {
		t.Skip("set SEARCH_TIMING=1")
	}
	rg := needRipgrep(t)
	runs := 11
	if n, err := strconv.Atoi(os.Getenv("SEARCH_TIMING_RUNS")); err == nil && n > 0 {
		runs = n
	}
	report := func(name string, ours func(), rgArgs ...string) {
		var ow, rw []time.Duration
		var oc, rc []time.Duration
		ours()
		for range runs {
			u0 := selfCPU()
			s := time.Now()
			ours()
			ow = append(ow, time.Since(s))
			oc = append(oc, selfCPU()-u0)

			cmd := exec.Command(rg, append([]string{"-j2"}, rgArgs...)...)
			s = time.Now()
			cmd.Run()
			rw = append(rw, time.Since(s))
			rc = append(rc, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		slices.Sort(ow)
		slices.Sort(rw)
		slices.Sort(oc)
		slices.Sort(rc)
		t.Logf("%-16s wall ours %6.1f ms  rg %6.1f ms  ratio %.2f | cpu ours %6.1f ms  rg %6.1f ms  ratio %.2f",
			name, ms(ow[0]), ms(rw[0]), float64(ow[0])/float64(rw[0]),
			ms(oc[runs/2]), ms(rc[runs/2]), float64(oc[runs/2])/float64(rc[runs/2]))
	}
	ctx := context.Background()
	for _, c := range compareCases {
		args := []string{"-l"}
		if c.ignoreCase {
			args = append(args, "-i")
		}
		report(c.name, func() {
			Grep(ctx, GrepOptions{Root: goSrc, Pattern: c.pattern, IgnoreCase: c.ignoreCase})
		}, append(args, "--", c.pattern, goSrc)...)
	}
	report("Glob", func() {
		Glob(ctx, GlobOptions{Root: goSrc, Pattern: "**/*_test.go"})
	}, "--files", "-g", "*_test.go", goSrc)
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
