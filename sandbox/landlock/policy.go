package landlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
)

// Mode says where a sandboxed command may write.
type Mode string

const (
	// WorkspaceWrite: the workspace, the scratch, the temp dirs, the
	// user's cache dir and the dirs a setting names.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly: the scratch only (Plan and Goal, or the user's choice),
	// with the command's TMPDIR in it; the workspace is read like the
	// rest of the disk, and so are the shared temp dirs.
	ReadOnly Mode = "read-only"
)

// Policy is what one command may do. Reads are allowed everywhere except
// in the Deny paths; writes only in the roots the Mode allows. The zero
// fields are simply not granted.
type Policy struct {
	Mode      Mode   `json:"mode"`
	Workspace string `json:"workspace,omitempty"`
	Scratch   string `json:"scratch,omitempty"`
	// Home is the home directory "~/" stands for in Deny.
	Home string `json:"home,omitempty"`
	// TempDirs are the shared temp dirs, writable in both modes when
	// listed: /tmp, $TMPDIR, /dev/shm. DefaultPolicy lists them in
	// workspace-write mode only: a workspace under /tmp would otherwise
	// stay writable in read-only mode, and so would every other user's
	// and program's files there.
	TempDirs []string `json:"tempDirs,omitempty"`
	// PrivateTmp is the command's own temp dir in read-only mode, in the
	// scratch (so writable, and gone with the session): CommandEnv points
	// TMPDIR, TMP and TEMP at it, so that mktemp, compilers and test
	// runners keep working without the shared temp dirs. The caller
	// makes it.
	PrivateTmp string `json:"privateTmp,omitempty"`
	// CacheDir ($XDG_CACHE_HOME or ~/.cache) is writable in
	// workspace-write mode, so builds keep their caches.
	CacheDir string `json:"cacheDir,omitempty"`
	// WritableExtra are the dirs a setting names, writable in
	// workspace-write mode.
	WritableExtra []string `json:"writableExtra,omitempty"`
	// Deny are the sensitive paths: neither read nor written nor listed,
	// however a command spells them. "~/" at the start means Home. A Deny
	// path carves itself out of every grant above it; a root named above
	// (the workspace, a writable dir) that lies inside a Deny path is
	// still granted, since someone chose it.
	Deny []string `json:"deny,omitempty"`
	// Terminal is the command's own terminal (hostcore's TTY mode: the
	// pseudo-terminal on its stdin, /dev/pts/N), opened by name for
	// reading, writing and its ioctls. The other terminals stay closed.
	Terminal string `json:"terminal,omitempty"`
	// ListAll lets every directory be listed (ls /, ls ~), including
	// the names, not the contents, of the entries of a denied directory.
	// Off, a directory above a denied path (/, /etc, ~, ~/.config) can be
	// entered and its entries opened by name, but not listed.
	ListAll bool `json:"listAll,omitempty"`
}

// Sensitive is the built-in list of paths a command can neither read nor
// write: the command denylist's credentials (ssh, cloud, browser
// profiles, keyrings, the host's keys and password hashes) and the
// package managers' credential files. "~/" is the user's home.
var Sensitive = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube/config",
	"~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
	"~/.config/gh", "~/.config/hub", "~/.password-store", "~/.local/share/keyrings",
	"~/Library/Keychains", "/Library/Keychains",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware",
	"~/.config/microsoft-edge", "~/snap/firefox",
	"~/Library/Application Support/Google/Chrome", "~/Library/Application Support/Firefox",
	"~/Library/Application Support/BraveSoftware", "~/Library/Application Support/Microsoft Edge",
	"~/Library/Safari", "~/Library/Cookies",
	"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers", "/etc/master.passwd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssh/ssh_host_dsa_key",
	// Package managers and other tools that keep a token in a file.
	"~/.npmrc", "~/.pypirc", "~/.cargo/credentials", "~/.cargo/credentials.toml",
	"~/.gem/credentials", "~/.config/composer/auth.json", "~/.composer/auth.json",
	"~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.pgpass",
}

// DefaultPolicy is the policy of a command run with env in mode: the
// temp dirs, the cache dir and the home come from env (the command's
// environment), the denied paths are Sensitive, in $HOME and, when it is
// another directory, in the home the user database gives (a HOME set
// elsewhere must not open the real ~/.ssh). The caller adds the dirs a
// setting names to WritableExtra and the user's own entries to Deny.
func DefaultPolicy(mode Mode, workspace, scratch string, env []string) Policy {
	home := lookupEnv(env, "HOME")
	deny := append([]string(nil), Sensitive...)
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) && filepath.Clean(u.HomeDir) != filepath.Clean(home) {
		if !filepath.IsAbs(home) {
			home = u.HomeDir
		} else {
			for _, d := range Sensitive {
				if rest, ok := strings.CutPrefix(d, "~/"); ok {
					deny = append(deny, filepath.Join(u.HomeDir, rest))
				}
			}
		}
	}
	if !filepath.IsAbs(home) {
		home = ""
	}
	var temps []string
	private := ""
	if mode == ReadOnly {
		if scratch != "" {
			private = filepath.Join(scratch, "tmp")
		}
	} else {
		temps = []string{"/tmp", "/dev/shm"}
		if t := lookupEnv(env, "TMPDIR"); filepath.IsAbs(t) {
			temps = append(temps, t)
		}
	}
	cache := lookupEnv(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(cache) {
		cache = ""
		if filepath.IsAbs(home) {
			cache = filepath.Join(home, ".cache")
		}
	}
	return Policy{
		Mode:       mode,
		Workspace:  workspace,
		Scratch:    scratch,
		Home:       home,
		TempDirs:   temps,
		PrivateTmp: private,
		CacheDir:   cache,
		Deny:       deny,
	}
}

// CommandEnv is env as the command must see it under p: with a
// PrivateTmp, TMPDIR, TMP and TEMP name it (any value they had is
// dropped: it names a dir the command may not write).
func (p Policy) CommandEnv(env []string) []string {
	if p.PrivateTmp == "" {
		return env
	}
	out := make([]string, 0, len(env)+3)
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if k != "TMPDIR" && k != "TMP" && k != "TEMP" {
			out = append(out, e)
		}
	}
	return append(out, "TMPDIR="+p.PrivateTmp, "TMP="+p.PrivateTmp, "TEMP="+p.PrivateTmp)
}

// lookupEnv is the last value of key in env, as the kernel's getenv
// would not define but every shell takes.
func lookupEnv(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Encode is the policy as one string: the key a Cache keeps its ruleset
// under.
func (p Policy) Encode() (string, error) {
	b, err := json.Marshal(p)
	return string(b), err
}

// validate refuses a policy whose roots are not absolute, or that would
// make the whole disk writable.
func (p Policy) validate() error {
	switch p.Mode {
	case WorkspaceWrite, ReadOnly:
	default:
		return fmt.Errorf("sandbox mode %q: want %q or %q", p.Mode, WorkspaceWrite, ReadOnly)
	}
	for _, w := range p.writable() {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("writable dir %q is not an absolute path", w)
		}
		if filepath.Clean(w) == "/" {
			return errors.New("writable dir / would let a command write everywhere")
		}
	}
	if p.Terminal != "" && !strings.HasPrefix(filepath.Clean(p.Terminal), "/dev/pts/") {
		return fmt.Errorf("terminal %q is not a pseudo-terminal under /dev/pts", p.Terminal)
	}
	if p.Home != "" && !filepath.IsAbs(p.Home) {
		return fmt.Errorf("home %q is not an absolute path", p.Home)
	}
	if p.PrivateTmp != "" && (p.Scratch == "" || !within(filepath.Clean(p.PrivateTmp), filepath.Clean(p.Scratch))) {
		return fmt.Errorf("private temp dir %q is not inside the scratch dir %q", p.PrivateTmp, p.Scratch)
	}
	return nil
}

// writable lists the roots the Mode lets a command write in.
func (p Policy) writable() []string {
	var out []string
	add := func(paths ...string) {
		for _, d := range paths {
			if d != "" {
				out = append(out, d)
			}
		}
	}
	add(p.Scratch)
	add(p.TempDirs...)
	if p.Mode == WorkspaceWrite {
		add(p.Workspace, p.CacheDir)
		add(p.WritableExtra...)
	}
	return out
}

// Summary says in a sentence what a command may do under p: the hint a
// command that failed on a sandbox denial gets (see LooksDenied), and
// the line a card can show.
func (p Policy) Summary() string {
	var roots []string
	named := func(what, dir string) {
		if dir != "" {
			roots = append(roots, fmt.Sprintf("%s (%s)", what, dir))
		}
	}
	if p.Mode == WorkspaceWrite {
		named("the workspace", p.Workspace)
	}
	named("the scratch dir", p.Scratch)
	named("its own TMPDIR", p.PrivateTmp)
	roots = append(roots, p.TempDirs...)
	if p.Mode == WorkspaceWrite {
		named("the cache dir", p.CacheDir)
		roots = append(roots, p.WritableExtra...)
	}
	deny := p.Deny
	more := ""
	if len(deny) > 6 {
		deny, more = deny[:6], fmt.Sprintf(" and %d more", len(p.Deny)-6)
	}
	list := "directories above them can be entered but not listed"
	if p.ListAll {
		list = "every directory can be listed"
	}
	return fmt.Sprintf("The command ran in a sandbox (%s): it may write only in %s; it may read everything except the sensitive paths (%s%s), and %s; the network is open.",
		p.Mode, strings.Join(roots, ", "), strings.Join(deny, ", "), more, list)
}

// LooksDenied reports whether a failed command's error output reads like
// a sandbox refusal: the kernel answers a Landlock denial with EACCES
// ("Permission denied") for files and EPERM ("Operation not permitted")
// for signals and sockets. It is a guess (the file permissions say the
// same), good for a hint, not for a verdict.
func LooksDenied(stderr string) bool {
	return strings.Contains(stderr, "Permission denied") || strings.Contains(stderr, "Operation not permitted") ||
		strings.Contains(stderr, "permission denied") || strings.Contains(stderr, "operation not permitted")
}
