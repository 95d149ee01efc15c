//go:build !windows

package shellenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"hostcore/sandbox/process"
)

// Bounds of taking a snapshot: the login shell, the $SHELL PATH probe, and
// the check that the restore script runs cleanly.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultProbeTimeout = 5 * time.Second
	checkTimeout        = 5 * time.Second
	killGrace           = 200 * time.Millisecond
)

// Options say how to take a snapshot.
type Options struct {
	// Dir receives the restore script (hostcore's data dir). Required:
	// absolute, and without '$', '`' or '\', which bash would expand in
	// BASH_ENV.
	Dir string
	// Env is the environment the login shell starts from: hostcore's
	// own. nil = os.Environ().
	Env []string
	// WorkDir is the login shell's working directory; "" = HOME from Env,
	// else "/".
	WorkDir string
	// Timeout bounds the login shell (0 = DefaultTimeout); ProbeTimeout
	// the $SHELL PATH probe, which runs beside it (0 = DefaultProbeTimeout).
	Timeout, ProbeTimeout time.Duration
	// ProbeShell is the shell whose login PATH comes first; "" = $SHELL
	// from Env, else the first of /bin/zsh, /bin/bash, /bin/sh. "-" = none.
	ProbeShell string
}

func (o Options) env() []string {
	if o.Env == nil {
		return os.Environ()
	}
	return o.Env
}

// Snapshot is the login shell's state, captured once: what the profile
// changed in the environment, its functions, aliases and glob options,
// and the $SHELL login PATH. Command runs a command with it restored.
type Snapshot struct {
	shell  string   // the bash that took it and runs commands
	script string   // the restore script's path
	body   []byte   // its content, written again if the file is changed
	probed string   // the $SHELL login PATH, first in every command's PATH
	path   string   // PATH as the profile left it
	set    []string // "k=v" the profile added or changed (not PATH)
	unset  []string // names the profile removed
	files  []string // the profile files and shells, for Stale
	stamps []stamp  // as they were when it was taken
	taken  time.Time

	mu      sync.Mutex
	file    fileID // the script as written, to see it replaced
	removed bool
}

// Shell is the bash the snapshot was taken with.
func (s *Snapshot) Shell() string { return s.shell }

// Script is the restore script's path.
func (s *Snapshot) Script() string { return s.script }

// Taken is when the login shell ran.
func (s *Snapshot) Taken() time.Time { return s.taken }

// Remove deletes the restore script (when a newer snapshot replaces
// it); Command then fails rather than write it again.
func (s *Snapshot) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed = true
	os.Remove(s.script)
}

// Take runs shell (a bash) as a login shell once, bounded by
// opts.Timeout (its process tree is killed at the bound), probes the
// $SHELL login PATH beside it, and writes the restore script into
// opts.Dir. The script is then checked: a `bash -c true` with it must exit
// 0, print nothing and reach the command. Any failure is an error whose
// text says why; the caller then runs commands with `bash -lc`.
func Take(ctx context.Context, shell string, opts Options) (*Snapshot, error) {
	if !filepath.IsAbs(opts.Dir) || strings.ContainsAny(opts.Dir, "$`\\") {
		return nil, fmt.Errorf("the snapshot directory %q is not absolute or holds '$', '`' or '\\', which bash expands in BASH_ENV", opts.Dir)
	}
	if !filepath.IsAbs(shell) {
		return nil, fmt.Errorf("the shell %q is not an absolute path", shell)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	env := opts.env()
	probeShell := probeShellOf(opts.ProbeShell, env)
	// The stamps are read before the shell runs: a profile changed while
	// it runs makes the snapshot stale at once.
	files := append(profileFiles(env, probeShell), shell)
	stamps := readStamps(files)
	start := time.Now()

	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	probed := make(chan string, 1)
	go func() { probed <- probeLoginPath(probeCtx, probeShell, env, opts.ProbeTimeout) }()

	got, err := capture(ctx, shell, env, opts)
	if err != nil {
		stopProbe()
		<-probed
		return nil, err
	}
	probe := <-probed
	s := &Snapshot{shell: shell, probed: probe, files: files, stamps: stamps, taken: start}
	s.delta(env, got.env)
	s.body = restoreScript(shell, start, got)
	if s.script, err = newScriptPath(opts.Dir); err != nil {
		return nil, err
	}
	if err := s.write(); err != nil {
		return nil, err
	}
	if err := s.check(ctx, env, opts.Dir); err != nil {
		s.Remove()
		return nil, err
	}
	return s, nil
}

// captured is what the login shell left.
type captured struct {
	env     [][]byte // "k=v" of every exported variable
	funcs   []byte   // declare -f
	xfuncs  []byte   // declare -Fx: the exported ones' names
	aliases []byte   // alias
	shopts  []byte   // shopt -p
}

// captureScript runs in the login shell after the profile files, with
// the capture directory as $1. Its first line reads the aliases and shell
// options and turns alias expansion off, so that no alias of the
// profile's changes the lines after it; every command is a builtin, named
// with a quoted first word (no alias) and through `builtin` (no
// function). The variables are read name by name (compgen -e, ${!n}),
// which needs no external program on a PATH the profile may have broken
// and keeps every byte of the values. The last file, done, says it all
// ran.
const captureScript = `\builtin set +euxv +o pipefail 2>/dev/null; \builtin shopt -p >"$1/shopt"; \builtin alias >"$1/alias"; \builtin shopt -u expand_aliases
\builtin declare -f >"$1/func"; \builtin declare -Fx >"$1/xfunc"
\builtin compgen -e | while IFS= \builtin read -r __hostcore_n; do \builtin printf '%s=%s\0' "$__hostcore_n" "${!__hostcore_n}"; done >"$1/env"
\builtin : >"$1/done"
`

func capture(ctx context.Context, shell string, env []string, opts Options) (captured, error) {
	dir, err := os.MkdirTemp(opts.Dir, ".shell-capture-")
	if err != nil {
		return captured{}, fmt.Errorf("making the capture directory: %w", err)
	}
	defer os.RemoveAll(dir)
	wd := opts.WorkDir
	if wd == "" {
		if wd = lookup(env, "HOME"); !filepath.IsAbs(wd) {
			wd = "/"
		}
	}
	res, err := process.Run(ctx, process.Spec{
		Path:    shell,
		Args:    []string{"-l", "-c", captureScript, "hostcore-snapshot", dir},
		Dir:     wd,
		Env:     env,
		Timeout: opts.Timeout,
		Grace:   killGrace,
	})
	switch {
	case err != nil:
		return captured{}, fmt.Errorf("starting the login shell %s: %w", shell, err)
	case res.Aborted:
		return captured{}, fmt.Errorf("taking the shell snapshot: %w", ctx.Err())
	case res.TimedOut:
		return captured{}, fmt.Errorf("the login shell (%s -l) did not finish within %v: its profile files hang or wait for input", shell, opts.Timeout)
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		return captured{}, fmt.Errorf("the login shell (%s -l) exited %s before its state was captured (a profile file may exit or exec another shell)%s", shell, exitText(res), stderrText(res))
	}
	var c captured
	for name, dst := range map[string]*[]byte{"func": &c.funcs, "xfunc": &c.xfuncs, "alias": &c.aliases, "shopt": &c.shopts} {
		if *dst, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			return captured{}, fmt.Errorf("reading the captured %s: %w", name, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return captured{}, fmt.Errorf("reading the captured environment: %w", err)
	}
	for kv := range bytes.SplitSeq(raw, []byte{0}) {
		if bytes.IndexByte(kv, '=') > 0 {
			c.env = append(c.env, kv)
		}
	}
	return c, nil
}

func exitText(res process.Result) string {
	if res.Signal != "" {
		return "on " + res.Signal
	}
	return fmt.Sprintf("with status %d", res.ExitCode)
}

func stderrText(res process.Result) string {
	t := strings.TrimSpace(res.Stderr.Tail)
	if t == "" {
		t = strings.TrimSpace(res.Stderr.Head)
	}
	if len(t) > 500 {
		t = t[len(t)-500:]
	}
	if t == "" {
		return ""
	}
	return ": " + t
}

// delta keeps what the profile changed in the environment: a command's
// environment is hostcore's at the time with these changes applied, so
// that what hostcore sets per command (the scratch dir, the run mark)
// is current. Variables the shell itself sets at start (SHLVL, PWD,
// OLDPWD, _) and its option variables are not the profile's doing and are
// left out, as are hostcore's own (HOSTCORE_*).
func (s *Snapshot) delta(before []string, after [][]byte) {
	old := map[string]string{}
	for _, kv := range before {
		if k, v, ok := strings.Cut(kv, "="); ok {
			old[k] = v
		}
	}
	now := map[string]bool{}
	for _, b := range after {
		k, v, _ := strings.Cut(string(b), "=")
		now[k] = true
		switch {
		case !profileVar(k):
		case k == "PATH":
			s.path = v
		default:
			if ov, ok := old[k]; !ok || ov != v {
				s.set = append(s.set, k+"="+v)
			}
		}
	}
	for _, kv := range before {
		k, _, _ := strings.Cut(kv, "=")
		// Names bash cannot hold as variables (a-b=1) pass through it
		// untouched: compgen never lists them.
		if !now[k] && validName(k) && profileVar(k) && k != "PATH" {
			s.unset = append(s.unset, k)
		}
	}
}

// profileVar reports whether a variable the login shell exported is
// carried into commands.
func profileVar(k string) bool {
	switch k {
	case "SHLVL", "PWD", "OLDPWD", "_", "SHELLOPTS", "BASHOPTS", "COLUMNS", "LINES":
		return false
	}
	if strings.HasPrefix(k, "BASH_") && !strings.HasPrefix(k, "BASH_FUNC_") && k != "BASH_ENV" {
		return false
	}
	return !strings.HasPrefix(k, "HOSTCORE_")
}

// validFuncName accepts the function names that need no quoting in the
// script (others stay unexported).
func validFuncName(k string) bool {
	return k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

func validName(k string) bool {
	for i, c := range k {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return k != ""
}

// restoredShopts are the shell options carried from the profile: the
// glob and match options, which a profile sets for the commands it
// runs and which change no command's error behaviour. The `set -o`
// options are not carried: errexit, nounset, pipefail and errtrace
// would turn a command's ordinary failure into an abort, xtrace and
// verbose would print into its output, noclobber and the rest serve an
// interactive shell. failglob is left out too (a glob with no match
// becomes an error), and expand_aliases is always on, so that the
// profile's aliases work as in a terminal.
var restoredShopts = map[string]bool{
	"dotglob": true, "extglob": true, "globstar": true, "globasciiranges": true,
	"nocaseglob": true, "nocasematch": true, "nullglob": true,
}

// restoreScript is what BASH_ENV runs before each command. It defines
// the aliases, then the functions, with alias expansion still off (as
// when `declare -f` printed them) and extglob on (so that bodies using
// its patterns parse), exporting those the profile exported; then it
// sets the glob options, moves the variables bash would act on at its
// start (BASH_ENV, POSIXLY_CORRECT) to their place, leaves the start
// mark, and turns alias expansion on, last, so that no alias acts on the
// script itself. It runs none of the profile's code and prints nothing.
func restoreScript(shell string, taken time.Time, c captured) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# hostcore shell snapshot of %s -l, taken %s.\n", shell, taken.UTC().Format(time.RFC3339))
	b.WriteString("# Read through BASH_ENV before each Bash command; the variables come in the environment.\n")
	b.WriteString("\\builtin unset BASH_ENV\n")
	b.Write(c.aliases)
	b.WriteString("\\builtin shopt -s extglob\n")
	b.Write(c.funcs)
	b.WriteString("\\builtin shopt -u extglob\n")
	for line := range strings.Lines(string(c.xfuncs)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "declare" && f[1] == "-fx" && validFuncName(f[2]) {
			fmt.Fprintf(&b, "\\builtin export -f %s\n", f[2])
		}
	}
	for line := range strings.Lines(string(c.shopts)) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "shopt" && (f[1] == "-s" || f[1] == "-u") && restoredShopts[f[2]] {
			fmt.Fprintf(&b, "\\builtin shopt %s %s\n", f[1], f[2])
		}
	}
	for _, k := range deferredVars {
		fmt.Fprintf(&b, "if [[ -n ${%[1]s+x} ]]; then %[2]s=$%[1]s; \\builtin export %[2]s; \\builtin unset %[1]s; fi\n", deferPrefix+k, k)
	}
	b.WriteString(StartedScript)
	// Last: no line of this script is read with the aliases on.
	b.WriteString("\\builtin shopt -s expand_aliases\n")
	return b.Bytes()
}

// deferredVars are acted on by bash at its start: POSIXLY_CORRECT would
// make it skip BASH_ENV, and BASH_ENV is the restore script's own slot.
// A command's environment carries them under deferPrefix, and the
// restore script puts them back, so the command and its children see
// them as the profile left them.
var deferredVars = []string{"BASH_ENV", "POSIXLY_CORRECT"}

const deferPrefix = "HOSTCORE_SNAPSHOT_"

// Command gives how to run command with the snapshot restored: the
// shell, its arguments (`-c` and the command exactly as typed, so $0,
// line numbers and error messages are bash -c's) and its environment.
// env is the environment the command gets without a snapshot (hostcore's,
// with the per-command variables); the profile's changes are applied over
// it, and the PATH is the $SHELL login PATH, then the profile's, then
// env's entries the profile dropped. A variable the caller must have the
// last word on goes after the returned env (the last value counts).
// started, if not nil, is left when the command begins. The error says
// the restore script could not be put back after something changed it;
// the caller then runs the command with `bash -lc`.
func (s *Snapshot) Command(command string, env []string, started *Started) (path string, args []string, cmdEnv []string, err error) {
	if err := s.ensure(); err != nil {
		return "", nil, nil, err
	}
	drop := map[string]bool{"PATH": true, StartedVar: true}
	for _, k := range s.unset {
		drop[k] = true
	}
	for _, kv := range s.set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	for _, k := range deferredVars {
		drop[deferPrefix+k] = true
	}
	out := make([]string, 0, len(env)+len(s.set)+4)
	basePath := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" {
			basePath = v
		}
		if !drop[k] {
			out = append(out, kv)
		}
	}
	out = append(out, s.set...)
	if p := mergePath(s.probed, s.path, basePath); p != "" {
		out = append(out, "PATH="+p)
	}
	for _, k := range deferredVars {
		out = deferVar(out, k)
	}
	out = append(out, "BASH_ENV="+s.script)
	if started != nil {
		out = append(out, started.Env())
	}
	return s.shell, []string{"-c", command}, out, nil
}

// deferVar renames k (its last value) to deferPrefix+k.
func deferVar(env []string, k string) []string {
	val, found := "", false
	kept := env[:0]
	for _, kv := range env {
		if name, v, _ := strings.Cut(kv, "="); name == k {
			val, found = v, true
			continue
		}
		kept = append(kept, kv)
	}
	if found {
		kept = append(kept, deferPrefix+k+"="+val)
	}
	return kept
}

// mergePath joins PATH lists in order, without repeats or empty entries
// (an empty one would be the working directory).
func mergePath(lists ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for d := range strings.SplitSeq(l, ":") {
			if d != "" && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return strings.Join(out, ":")
}

func lookup(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}

// fileID identifies the script as written.
type fileID struct {
	dev, ino uint64
	size     int64
	mod      int64 // UnixNano
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mod: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return id
}

func newScriptPath(dir string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming the snapshot script: %w", err)
	}
	return filepath.Join(dir, "shell-snapshot-"+hex.EncodeToString(b[:])+".sh"), nil
}

// write puts the script in place (0600: the aliases and functions are
// the user's) through a new file renamed over the path, which replaces
// whatever stands there, a link or a FIFO included.
func (s *Snapshot) write() error {
	tmp, err := os.CreateTemp(filepath.Dir(s.script), ".shell-snapshot-*")
	if err != nil {
		return fmt.Errorf("writing the snapshot script: %w", err)
	}
	_, err = tmp.Write(s.body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var fi os.FileInfo
	if err == nil {
		err = os.Rename(tmp.Name(), s.script)
	}
	if err == nil {
		fi, err = os.Lstat(s.script)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the snapshot script: %w", err)
	}
	s.file = idOf(fi)
	return nil
}

// ensure writes the script again when it is not the file written (a
// command may have deleted it or put a FIFO there, which would hold
// every later command at its start).
func (s *Snapshot) ensure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return errors.New("the shell snapshot was replaced by a newer one")
	}
	if fi, err := os.Lstat(s.script); err == nil && fi.Mode().IsRegular() && idOf(fi) == s.file {
		return nil
	}
	return s.write()
}

// check runs `true` through the snapshot: bash must read the script
// (a bash named sh, or one in POSIX mode, does not), and the script must
// restore without a word (a function that does not parse again would
// print its error before every command).
func (s *Snapshot) check(ctx context.Context, env []string, dir string) error {
	mark, err := NewStarted(dir)
	if err != nil {
		return err
	}
	defer mark.Remove()
	path, args, cenv, err := s.Command("true", env, mark)
	if err != nil {
		return err
	}
	res, err := process.Run(ctx, process.Spec{Path: path, Args: args, Env: cenv, Dir: "/", Timeout: checkTimeout, Grace: killGrace})
	switch {
	case err != nil:
		return fmt.Errorf("checking the snapshot: %w", err)
	case res.Aborted:
		return fmt.Errorf("checking the snapshot: %w", ctx.Err())
	case res.TimedOut:
		return fmt.Errorf("restoring the snapshot did not finish within %v", checkTimeout)
	case res.ExitCode != 0 || res.Stdout.Total != 0 || res.Stderr.Total != 0:
		return fmt.Errorf("restoring the snapshot does not run cleanly: `bash -c true` exited %s%s", exitText(res), stderrText(res))
	case !mark.Done():
		return errors.New("bash did not read the snapshot through BASH_ENV (is it bash, run under its own name?)")
	}
	return nil
}
