package denylist

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Builtin are the sensitive paths a command or a file tool may not name,
// in every permission mode, unless they lie inside the workspace. "~/"
// means any user's home.
var Builtin = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube/config",
	"~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.password-store",
	"~/.local/share/keyrings", "~/Library/Keychains", "/Library/Keychains",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware", "~/.config/microsoft-edge",
	"~/snap/firefox", "~/Library/Application Support/Google/Chrome", "~/Library/Application Support/Firefox",
	"~/Library/Application Support/BraveSoftware", "~/Library/Application Support/Microsoft Edge",
	"~/Library/Safari", "~/Library/Cookies",
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd",
	// The previous shadow files hold the same hashes; the host's private
	// keys sign as the machine.
	"/etc/shadow-", "/etc/gshadow-", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
}

// MaxCommandBytes is the longest command bash -lc can be given: Linux
// limits one argument to 128 KiB with its NUL (MAX_ARG_STRLEN). The
// reading's bounds are sized from it.
const MaxCommandBytes = 128<<10 - 1

// Denial is what CheckCommand found: the word that names a sensitive
// path, or (TooComplex) what could not be read within the bounds, said
// as a phrase. The zero Denial lets the command through.
type Denial struct {
	Word       string
	TooComplex bool
}

// Denied says whether the command is refused.
func (d Denial) Denied() bool { return d.Word != "" }

// CheckCommand reads a shell command the ways doc.go describes and
// returns the first word that names an entry of the denylist (the
// built-in one and extra, the user's) outside workspace, or what it
// could not read within its bounds. home is the user's home directory.
func CheckCommand(command, workspace, home string, extra []string) Denial {
	words, tooComplex := readWords(command, home, workspace)
	entries := builtinEntries(home)
	if len(extra) > 0 {
		entries = slices.Clone(entries)
		for _, e := range extra {
			entries = append(entries, entryPaths(e, home)...)
			entries = append(entries, linkedEntry(e, home)...)
		}
	}
	if w := firstDenied(words, entries, workspace, home); w != "" {
		return Denial{Word: w}
	}
	if tooComplex != "" {
		return Denial{Word: tooComplex, TooComplex: true}
	}
	return Denial{}
}

// maxRelaxedBytes bounds the bytes the relaxed readings of one command
// read, all texts together: four times the longest command.
const maxRelaxedBytes = 4 * MaxCommandBytes

// maxRelaxedTexts bounds the texts the relaxed readings of a command
// read: its lines and quoted strings, quoted strings inside those (a
// command of 128 KiB has at most 64 Ki lines: all are read).
// maxRelaxedBytes bounds their bytes.
const maxRelaxedTexts = 1 << 17

// readWords returns every word the readings of a command see (doc.go),
// unquoted, and what the strict reading could not read within its
// bounds, "" if nothing.
func readWords(command, home, workspace string) (words []string, tooComplex string) {
	parser := newParser()
	read := func(text string) (*reader, bool) {
		r := &reader{home: home, workspace: workspace}
		ok := r.parse(parser, text)
		if !ok {
			r.loose(text)
		}
		return r, ok
	}
	// The relaxed readings, where too complex is no denial, share one
	// budget, and the texts they read are bounded in number and bytes:
	// the command's length and nesting do not multiply the work.
	relaxed := newBraceBudget()
	relaxedBytes := maxRelaxedBytes
	done := map[string]bool{}
	var queue []string
	for _, t := range readingTexts(command) {
		words = append(words, flatWords(strings.ReplaceAll(t, "${HOME}", "$HOME"))...)
		r, parsed := read(t)
		done[t] = true
		expanded, complex := newBraceBudget().expandAll(r.words)
		words = append(words, expanded...)
		switch {
		case tooComplex != "":
		case r.deep:
			tooComplex = fmt.Sprintf("a nesting of substitutions and parameter expansions deeper than %d", maxSubstDepth)
		case complex != "":
			tooComplex = "the brace expansion of " + complex
		}
		// Relaxed: each line alone when the text does not parse (a line
		// the parser rejects may be one bash runs), heredoc bodies as
		// the shell they may be fed to gets them, the contents of quoted
		// strings and every word holding a blank as commands (bash -c
		// '...', bash -c cat\ /etc/shadow).
		if !parsed && strings.IndexByte(t, '\n') >= 0 {
			queue = append(queue, strings.Split(t, "\n")...)
		}
		queue = append(queue, r.texts...)
		queue = appendCommandWords(queue, expanded)
	}
	// The relaxed readings take the shortest texts first: a command
	// string is short, and padding that would spend the budget before it
	// is long. Texts found inside those (sh -c "bash -c '...'") are read
	// in the next round.
	count := 0
	for round := 0; len(queue) > 0 && round <= maxSubstDepth; round++ {
		slices.SortStableFunc(queue, func(a, b string) int { return len(a) - len(b) })
		var next []string
		for _, q := range queue {
			if done[q] {
				continue
			}
			if len(q) > relaxedBytes || count == maxRelaxedTexts {
				// Padding spent the bounds before this text: what is not
				// read cannot be let through.
				if tooComplex == "" {
					tooComplex = "more nested or repeated text than the check reads"
				}
				break
			}
			done[q] = true
			relaxedBytes -= len(q)
			count++
			r, _ := read(q)
			more, _ := relaxed.expandAll(r.words)
			words = append(words, more...)
			next = appendCommandWords(append(next, r.texts...), more)
		}
		queue = next
	}
	if tooComplex == "" && slices.ContainsFunc(queue, func(q string) bool { return !done[q] }) {
		tooComplex = fmt.Sprintf("command strings nested deeper than %d", maxSubstDepth)
	}
	return words, tooComplex
}

// appendCommandWords appends the words that hold a blank: values that may
// be commands (bash -c cat\ /etc/shadow, eval "$x").
func appendCommandWords(texts, words []string) []string {
	for _, w := range words {
		if strings.ContainsAny(w, " \t\n") {
			texts = append(texts, w)
		}
	}
	return texts
}

// loose reads a text that does not parse (a line of a longer script, a
// stray quote): words split at blanks and the operators ; & | ( ) < >
// and `, quotes and backslashes removed with what they quote marked. The
// contents of its quoted strings are read as commands too.
func (r *reader) loose(s string) {
	var f fields
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				quoteInto(&f.cur, s[i:i+1])
				f.started = true
			}
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			body := s[i+1 : i+1+j]
			quoteInto(&f.cur, body)
			f.started = true
			r.texts = append(r.texts, body)
			i += j + 1
		case strings.IndexByte(" \t\n;&|()<>`", c) >= 0:
			f.split()
		default:
			f.cur.WriteByte(c)
			f.started = true
		}
	}
	r.words = append(r.words, f.done()...)
}

// Bounds of the user's extension of the denylist.
const (
	MaxEntries    = 256
	MaxEntryBytes = 4096
)

// CheckEntries checks the user's extension of the denylist (the
// settings' bashDenylist): at most MaxEntries paths, each absolute or
// starting with "~/", naming more than the root or the home directory,
// and no glob (entries are matched as written: a glob would be accepted
// and protect nothing).
func CheckEntries(list []string) error {
	if len(list) > MaxEntries {
		return fmt.Errorf("bashDenylist has %d entries; at most %d", len(list), MaxEntries)
	}
	for i, e := range list {
		clean := path.Clean(e)
		if len(e) > MaxEntryBytes || !(strings.HasPrefix(e, "/") || strings.HasPrefix(e, "~/")) || clean == "/" || strings.HasPrefix(e, "~/") && !strings.HasPrefix(clean, "~/") {
			return fmt.Errorf("bashDenylist[%d] must be an absolute path or start with ~/ (and name more than the root or the home directory)", i)
		}
		if strings.ContainsAny(e, "*?[") {
			return fmt.Errorf("bashDenylist[%d] holds a glob character; entries are plain paths (a directory covers everything under it)", i)
		}
	}
	return nil
}
