package denylist

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"
)

// TestDeniedPathAgainstBash checks the denylist's reading of a word against
// bash's own: random spellings of sensitive paths (brace groups with decoy
// alternatives, quotes, backslashes, quoted braces and commas, sequences,
// ANSI-C strings, unbalanced braces) are expanded by bash, and every word
// bash turns into a sensitive path must be denied. Words bash does not
// turn into one are not checked (the reading may be wider than the
// shell's, never narrower).
func TestDeniedPathAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	// Spellings are made of sources; bash's words are checked against
	// targets (HOME is /home/me for bash and for the denylist).
	sources := []string{"/tmp/../etc/shadow", "/etc/shadow", "/root/.ssh/id_rsa", "/etc/sudoers", "~root/.ssh/id_rsa", "~/.ssh/id_rsa", "$HOME/.aws/credentials"}
	targets := []string{"/etc/shadow", "/root/.ssh/id_rsa", "/etc/sudoers", "/home/me/.ssh/id_rsa", "/home/me/.aws/credentials"}
	// DENY_SEED=S draws them from another seed.
	seed, _ := strconv.ParseUint(os.Getenv("DENY_SEED"), 10, 64)
	r := rand.New(rand.NewPCG(1+seed, 2))
	// DENY_SPELLINGS=N reads N spellings instead (a deeper run by hand);
	n := 4000
	if v, err := strconv.Atoi(os.Getenv("DENY_SPELLINGS")); err == nil && v > 0 {
		n = v
	}
	words := make([]string, n)
	for i := range words {
		words[i] = spell(r, sources[i%len(sources)], 0)
	}
	for _, seed := range []uint64{3, 4, 5} {
		// Also a few hundred from other seeds per target: a fixed corpus
		// that still covers much.
		r := rand.New(rand.NewPCG(seed, seed))
		for i := range 300 {
			words = append(words, spell(r, sources[i%len(sources)], 0))
		}
	}
	got := bashExpand(t, bash, words)
	checked := 0
	for i, w := range words {
		hit := false
		for _, p := range got[i] {
			p = path.Clean(p)
			for _, tg := range targets {
				hit = hit || p == tg || strings.HasPrefix(p, tg+"/")
			}
		}
		if !hit {
			continue
		}
		checked++
		if deniedPath("cat "+w, "/w", "/home/me", nil) == "" {
			t.Errorf("bash expands %s to %q, which the denylist let through", w, got[i])
		}
		// Once padding has spent the expansion budget, the word is read
		// starred: still denied.
		if i%4 == 0 && deniedPath("cat "+budgetPad+" "+w, "/w", "/home/me", nil) == "" {
			t.Errorf("bash expands %s to %q, which the denylist let through after padding", w, got[i])
		}
	}
	if checked < len(words)/4 {
		t.Fatalf("only %d of %d spellings expanded to a sensitive path: the generator is broken", checked, len(words))
	}
	t.Logf("%d of %d spellings named a sensitive path", checked, len(words))
}

// budgetPad spends the brace expansion budget of a command (the words it
// may add): the words after it are read starred.
var budgetPad = strings.Repeat(strings.Repeat("{a,b}", 8)+" ", 5)

// bashExpand runs bash once over all words (globbing off) and returns the
// words each expands to.
func bashExpand(t *testing.T, bash string, words []string) [][]string {
	var script bytes.Buffer
	script.WriteString("set -f\n")
	for _, w := range words {
		fmt.Fprintf(&script, "unset u\nprintf '<%%s>' %s\necho\n", w)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile")
	cmd.Stdin = &script
	cmd.Env = append(os.Environ(), "HOME=/home/me")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, stderr.Bytes())
	}
	var res [][]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, len(out)+1) // a word may expand to a line of any length
	for sc.Scan() {
		l := strings.TrimSuffix(strings.TrimPrefix(sc.Text(), "<"), ">")
		res = append(res, strings.Split(l, "><"))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading bash's output: %v", err)
	}
	if len(res) != len(words) {
		t.Fatalf("bash printed %d lines for %d words; stderr:\n%s", len(res), len(words), stderr.Bytes())
	}
	return res
}

// spell returns a shell word that may expand to s, built at random.
func spell(r *rand.Rand, s string, depth int) string {
	if s == "" {
		return [...]string{"", "''", `""`, "{,}", `$''`}[r.IntN(5)]
	}
	k := r.IntN(12)
	if depth > 4 {
		k = 0
	}
	switch k {
	case 1, 2: // split
		i := splitPoint(r, s)
		return spell(r, s[:i], depth+1) + spell(r, s[i:], depth+1)
	case 3, 4: // a group with decoys
		alts := []string{spell(r, s, depth+1)}
		for range r.IntN(3) + 1 {
			alts = append(alts, decoy(r))
		}
		r.Shuffle(len(alts), func(i, j int) { alts[i], alts[j] = alts[j], alts[i] })
		pre, post := "", ""
		if r.IntN(6) == 0 {
			pre = [...]string{"x{", "{", `\{`, "{a"}[r.IntN(4)]
		}
		if r.IntN(6) == 0 {
			post = [...]string{"}", "{", `\}`, "x}"}[r.IntN(4)]
		}
		return pre + "{" + strings.Join(alts, ",") + "}" + post
	case 5:
		return "'" + s + "'"
	case 6:
		return `"` + s + `"`
	case 7:
		var b strings.Builder
		for _, c := range []byte(s) {
			b.WriteByte('\\')
			b.WriteByte(c)
		}
		return b.String()
	case 8:
		if len(s) == 1 && s[0] >= 'a' && s[0] <= 'z' {
			return "{" + s + ".." + s + "}"
		}
		var b strings.Builder
		b.WriteString("$'")
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
		return b.String() + "'"
	case 9: // a substitution, a variable or parameter expansion
		switch r.IntN(8) {
		case 0:
			return [...]string{"$(:)", "`:`", `"$(:)"`}[r.IntN(3)] + spell(r, s, depth+1)
		case 1:
			return "${u}" + spell(r, s, depth+1)
		case 2:
			if s[0] == '/' {
				return "$u" + spell(r, s, depth+1)
			}
		case 3, 4:
			q := [...]string{"", "'", `"`}[r.IntN(3)]
			return "${u" + [...]string{":-", "-", ":=", "="}[r.IntN(4)] + q + s + q + "}"
		case 5:
			return `"${u:-` + s + `}"`
		case 6:
			return spell(r, s, depth+1) + "${u:+}"
		}
		return "${u}" + s
	case 10: // a line continuation
		i := splitPoint(r, s)
		return spell(r, s[:i], depth+1) + "\\\n" + spell(r, s[i:], depth+1)
	}
	return s
}

// splitPoint picks where to split s: anywhere but just after a '$' (what
// follows could make $( or ${ of it, a syntax error).
func splitPoint(r *rand.Rand, s string) int {
	i := r.IntN(len(s) + 1)
	if i > 0 && s[i-1] == '$' {
		i--
	}
	return i
}

// decoy returns a brace alternative that does not name the target,
// with quoted and escaped braces and commas among its spellings.
func decoy(r *rand.Rand) string {
	return [...]string{"x", "", `x"}"`, `x\}`, `x\,y`, `"{"`, `'}'`, "{a,b}", `"x,y"`, `'{x,y}'`, `\{`, `y"{"z`, "a..b", "{1..2}", `$'}'`, "x{", "x}y"}[r.IntN(17)]
}

func TestGlobDescends(t *testing.T) {
	for p, want := range map[string]bool{"*.txt": false, "/etc/*.conf": false, "/etc/host*": false, "src/*.go": false,
		".ss?/*": true, "**/id_*": true, "**": true, "{.ssh,.aws}/*": true, "*/.ssh/*": true, "a/**/b": true, "plain": false} {
		if got := globDescends(p); got != want {
			t.Errorf("globDescends(%q) = %v, want %v", p, got, want)
		}
	}
}
