//go:build !windows

package shellenv

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"hostcore/sandbox/process"
)

// stamp is one profile file as it was: a change of its time, size or
// existence makes a snapshot stale.
type stamp struct {
	path   string
	exists bool
	mod    int64 // UnixNano: comparable with ==
	size   int64
}

func readStamps(paths []string) []stamp {
	out := make([]stamp, 0, len(paths))
	for _, p := range paths {
		st := stamp{path: p}
		if fi, err := os.Stat(p); err == nil {
			st.exists, st.mod, st.size = true, fi.ModTime().UnixNano(), fi.Size()
		}
		out = append(out, st)
	}
	return out
}

// profileFiles are the files whose change calls for a new snapshot:
// those bash reads as a login shell (and the ones they commonly source),
// and those the probe shell reads. A directory is listed with its
// entries, so that a file added to it counts too.
func profileFiles(env []string, probeShell string) []string {
	home := lookup(env, "HOME")
	var files []string
	add := func(dir string, names ...string) {
		if dir == "" || !filepath.IsAbs(dir) {
			return
		}
		for _, n := range names {
			files = append(files, filepath.Join(dir, n))
		}
	}
	addDir := func(dir string) {
		files = append(files, dir)
		if m, err := filepath.Glob(filepath.Join(dir, "*")); err == nil {
			files = append(files, m...)
		}
	}
	add("/etc", "profile", "bash.bashrc", "bashrc")
	addDir("/etc/profile.d")
	add(home, ".bash_profile", ".bash_login", ".profile", ".bashrc")
	if be := lookup(env, "BASH_ENV"); filepath.IsAbs(be) {
		files = append(files, be)
	}
	switch filepath.Base(probeShell) {
	case "zsh":
		zdot := lookup(env, "ZDOTDIR")
		if zdot == "" {
			zdot = home
		}
		add(zdot, ".zshenv", ".zprofile", ".zshrc", ".zlogin")
		add("/etc", "zshenv", "zprofile", "zshrc", "zlogin")
		add("/etc/zsh", "zshenv", "zprofile", "zshrc", "zlogin")
	case "fish":
		add(home, ".config/fish/config.fish")
		addDir(filepath.Join(home, ".config/fish/conf.d"))
	}
	if probeShell != "" {
		files = append(files, probeShell)
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// Stale reports whether a profile file, or the shell, has changed (in
// time, size or existence) since the snapshot was taken: it should be
// taken again.
func (s *Snapshot) Stale() bool {
	return !slices.Equal(readStamps(s.files), s.stamps)
}

// probeShellOf is the shell whose login PATH is probed: "-" none, else
// the one given, else $SHELL, else the first of zsh, bash, sh.
func probeShellOf(given string, env []string) string {
	switch given {
	case "-":
		return ""
	case "":
	default:
		return given
	}
	if sh := lookup(env, "SHELL"); sh != "" && isExecutable(sh) {
		return sh
	}
	for _, sh := range []string{"/bin/zsh", "/bin/bash", "/bin/sh"} {
		if isExecutable(sh) {
			return sh
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// probeLoginPath returns the PATH the user's login shell sets up (nvm,
// pnpm, Homebrew initialised in ~/.zshrc or ~/.zprofile, which bash -l
// does not read), asked as an interactive login shell. It is best-effort:
// "" when the shell is missing, fails or exceeds timeout (its process
// tree is then killed like any command's).
func probeLoginPath(ctx context.Context, shell string, env []string, timeout time.Duration) string {
	return process.ProbeLoginPath(ctx, shell, env, timeout)
}
