//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSoak is hostcore's soak (README "Benchmarks"):
//
//	HOSTCORE_SOAK=1 go test -count=1 -run TestSoak -v -timeout 60m .
//
// It drives one session of the built binary through 30,000 calls
// (HOSTCORE_SOAK_CALLS), one at a time as an agent makes them: Reads,
// Writes and Edits of a workspace of small Go files, Greps, Globs and
// light Bash commands. Every tenth of the way it takes hostcore's RSS,
// open descriptors, threads and child processes from /proc, and the
// median and 95th percentile of each tool's calls since the last sample,
// and prints them as one table. It fails when descriptors, child
// processes or threads grow, or RSS creeps, past the first samples: in a
// session of days that is a leak. Latency is printed, not judged (the
// machine's load moves it); the benchmark table's agedwrite row judges
// it side by side with a fresh session.
func TestSoak(t *testing.T) {
	if os.Getenv("HOSTCORE_SOAK") != "1" {
		t.Skip("the soak runs with HOSTCORE_SOAK=1 (README, Benchmarks)")
	}
	calls := 30000
	if n, err := strconv.Atoi(os.Getenv("HOSTCORE_SOAK_CALLS")); err == nil && n >= 10 {
		calls = n
	}
	bin := buildBinary(t)
	a := newSoakAgent(t)
	h := startBench(t, bin, t.TempDir())
	h.call(t, "session.create", map[string]any{"sessionId": "soak", "workspaceRoot": a.ws, "permissionMode": "auto"})
	pid := h.cmd.Process.Pid
	samples := []soakSample{takeSample(t, pid, 0, nil)}
	lat := map[string][]time.Duration{}
	start := time.Now()
	for i := range calls {
		tool, args := a.next(i)
		lat[tool] = append(lat[tool], timed(func() { h.exec(t, "soak", tool, args) }))
		if (i+1)%(calls/10) == 0 {
			samples = append(samples, takeSample(t, pid, i+1, lat))
			lat = map[string][]time.Duration{}
		}
	}
	t.Logf("%d calls in %v\n%s", calls, time.Since(start).Round(time.Second), soakTable(samples))
	for _, err := range soakGrowth(samples) {
		t.Error(err)
	}
}

// soakTools are the tools the soak calls, in the table's order.
var soakTools = []string{"Read", "Write", "Edit", "Grep", "Glob", "Bash"}

// soakSample is hostcore as /proc shows it after some calls, with the
// latency of the calls since the sample before.
type soakSample struct {
	calls                  int
	rss                    int64 // bytes
	fds, threads, children int
	median, p95            map[string]time.Duration
}

func takeSample(t *testing.T, pid, calls int, lat map[string][]time.Duration) soakSample {
	t.Helper()
	s := soakSample{calls: calls, median: map[string]time.Duration{}, p95: map[string]time.Duration{}}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			s.rss = n << 10
		case "Threads":
			s.threads = int(n)
		}
	}
	// Descriptors and children are counted three times, 100 ms apart,
	// and the least is kept: right after a Bash call the next warm reaper
	// is being started (seven descriptors for a moment). A leak stays.
	s.fds, s.children = -1, -1
	for i := range 3 {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		// Children of every thread: a Bash command's reaper that
		// outlived its command would be one.
		children := 0
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			children += len(strings.Fields(string(b)))
		}
		if s.fds < 0 || len(fds) < s.fds {
			s.fds = len(fds)
		}
		if s.children < 0 || children < s.children {
			s.children = children
		}
	}
	for tool, d := range lat {
		slices.Sort(d)
		s.median[tool], s.p95[tool] = d[len(d)/2], d[len(d)*95/100]
	}
	return s
}

func soakTable(samples []soakSample) string {
	var b strings.Builder
	b.WriteString("| calls | RSS | fds | threads | children |")
	for _, tool := range soakTools {
		fmt.Fprintf(&b, " %s median / p95 |", tool)
	}
	b.WriteString("\n|---|---|---|---|---|" + strings.Repeat("---|", len(soakTools)) + "\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "| %d | %.1f MB | %d | %d | %d |", s.calls, float64(s.rss)/1e6, s.fds, s.threads, s.children)
		for _, tool := range soakTools {
			if d, ok := s.median[tool]; ok {
				fmt.Fprintf(&b, " %v / %v |", round(d), round(s.p95[tool]))
			} else {
				b.WriteString(" - |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// soakGrowth judges the samples after the first tenth of the calls (by
// then every pool and cache a session uses has been filled once) against
// that tenth's: descriptors and child processes must not grow, threads
// only by the few a busy moment may add to Go's pool, and RSS by less
// than half again and 32 MB.
func soakGrowth(samples []soakSample) []error {
	if len(samples) < 3 {
		return nil
	}
	var errs []error
	base := samples[1]
	for _, s := range samples[2:] {
		switch {
		case s.fds > base.fds:
			errs = append(errs, fmt.Errorf("open descriptors grew from %d at %d calls to %d at %d", base.fds, base.calls, s.fds, s.calls))
		case s.children > base.children:
			errs = append(errs, fmt.Errorf("child processes grew from %d at %d calls to %d at %d", base.children, base.calls, s.children, s.calls))
		case s.threads > base.threads+4:
			errs = append(errs, fmt.Errorf("threads grew from %d at %d calls to %d at %d", base.threads, base.calls, s.threads, s.calls))
		case float64(s.rss) > 1.5*float64(base.rss)+32e6:
			errs = append(errs, fmt.Errorf("RSS grew from %.1f MB at %d calls to %.1f MB at %d", float64(base.rss)/1e6, base.calls, float64(s.rss)/1e6, s.calls))
		}
	}
	return errs
}

// soakAgent makes the calls of an agent at work on a workspace of
// soakFiles Go files in ten packages: in every twenty calls, eight
// Reads, four Writes, three Edits, three Greps, a Glob and a Bash
// command. It knows what each file holds, so that every Edit finds its
// old_string.
type soakAgent struct {
	ws      string
	version []int
}

const soakFiles = 200

func newSoakAgent(t *testing.T) *soakAgent {
	a := &soakAgent{ws: t.TempDir(), version: make([]int, soakFiles)}
	for k := range soakFiles {
		p := filepath.Join(a.ws, a.path(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(soakContent(k, 0)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func (a *soakAgent) path(k int) string { return fmt.Sprintf("pkg%d/file%d.go", k%10, k) }

// soakContent is file k at version v: about 1.4 KB.
func soakContent(k, v int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package pkg%d\n\n// version %d\n", k%10, v)
	for l := range 20 {
		fmt.Fprintf(&b, "func soak%d_%d() int { return %d } // a line of about the length of real code\n", k, l, l*v)
	}
	return b.String()
}

func (a *soakAgent) next(i int) (tool string, args map[string]any) {
	k := (i * 7) % soakFiles
	switch i % 20 {
	case 1, 5, 9, 13:
		a.version[k]++
		return "Write", map[string]any{"path": a.path(k), "content": soakContent(k, a.version[k])}
	case 3, 7, 11:
		v := a.version[k]
		a.version[k]++
		return "Edit", map[string]any{"path": a.path(k), "old_string": fmt.Sprintf("// version %d\n", v), "new_string": fmt.Sprintf("// version %d\n", v+1)}
	case 14:
		return "Grep", map[string]any{"pattern": fmt.Sprintf(`func soak%d_\d+`, k), "outputMode": "content"}
	case 16:
		return "Grep", map[string]any{"pattern": "version 1", "outputMode": "files_with_matches"}
	case 18:
		return "Grep", map[string]any{"pattern": "return 4", "outputMode": "count", "path": fmt.Sprintf("pkg%d", k%10)}
	case 15:
		return "Glob", map[string]any{"pattern": "**/*.go"}
	case 17:
		cmds := []string{"ls pkg0 | wc -l", "head -3 " + a.path(k), "echo soak $((1 + 1))", "wc -l pkg1/*.go | tail -1"}
		return "Bash", map[string]any{"command": cmds[(i/20)%len(cmds)]}
	case 19:
		return "Read", map[string]any{"path": a.path(k), "offset": 10, "limit": 5}
	}
	return "Read", map[string]any{"path": a.path(k)}
}
