package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"hostcore/perms/redact"
	"hostcore/sandbox/process"
)

// Bash limits (design section 5). The description below is built from the
// same constants, so what the model is told is what is enforced.
const (
	bashDefaultTimeout = 60  // seconds
	bashMaxTimeout     = 300 // seconds; handlers/schemas/Bash.json enforces 1..300
	// bashHeadBytes and bashTailBytes bound what the result keeps of each
	// stream: the first and the last bytes, with the cut said in the text.
	bashHeadBytes = 16 << 10
	bashTailBytes = 16 << 10
	// bashGrace is the time between TERM and KILL on timeout or abort. It is
	// short so that shutdown (3 s, PROTOCOL section 1) can still answer a
	// call whose command ignores TERM.
	bashGrace = time.Second
	// bashWarmIdle is how long the reaper started ahead for the next
	// command waits for one before it leaves (process.Warm): long enough
	// to span the model's turn between two commands.
	bashWarmIdle = time.Minute
	// shellPinsKept bounds the per-session memory of pinned turn shells.
	shellPinsKept = 64
)

var bashDescription = fmt.Sprintf("Run a shell command with bash -lc in the workspace root. stdin is /dev/null and there is no terminal "+
	"unless tty is true (one merged stream, for programs that refuse to run without one). timeout is in seconds: default %d, at most %d; "+
	"on timeout the whole process tree is killed and the partial output returned. stdout and stderr are returned separately, each "+
	"cut to its first %d and last %d bytes, the complete output saved in a file under $PI_SCRATCH_DIR when cut. "+
	"A non-zero exit is an error whose output is shown: read it before retrying. Background processes do not outlive the command.",
	bashDefaultTimeout, bashMaxTimeout, bashHeadBytes, bashTailBytes)

type bashArgs struct {
	Command     string `json:"command"`
	Timeout     int    `json:"timeout"`
	Description string `json:"description"`
	TTY         bool   `json:"tty"`
}

// bashPreview is the card's text: the command itself (the envelope
// redacts secrets and escapes control characters).
func bashPreview(c *call) (string, string) {
	var a bashArgs
	decodeInto(c.args, &a)
	return a.Command, ""
}

// maxCommandBytes is the longest command bash -lc can be given: Linux
// limits one argument to 128 KiB with its NUL (MAX_ARG_STRLEN). Longer
// ones failed to start with "argument list too long".
const maxCommandBytes = 128<<10 - 1

// bashPrecheck runs before the permission card: a command the denylist
// refuses, or one whose turn's shell has changed, never shows a card.
func bashPrecheck(ctx context.Context, c *call) *ToolResult {
	var a bashArgs
	decodeInto(c.args, &a)
	if strings.IndexByte(a.Command, 0) >= 0 {
		return failResult(CodeInvalidArgument, "invalid arguments: args.command contains a NUL byte, which no shell command can hold")
	}
	if len(a.Command) > maxCommandBytes {
		return failResult(CodeInvalidArgument, "invalid arguments: args.command is %d bytes; the kernel passes at most %d bytes to bash -lc: write the script to a file in $PI_SCRATCH_DIR and run that", len(a.Command), maxCommandBytes)
	}
	list, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(CodeToolFailed, "reading the Bash denylist: %v", err)
	}
	switch d := checkDenylist(a.Command, c.sess.WorkspaceRoot, userHome(), list); {
	case d.tooComplex:
		return policyDenied("%s is too complex for hostcore's denylist check to read, and the check fails closed: spell the paths out", redact.Bound(redact.EscapeText(d.word), 200))
	case d.word != "":
		return policyDenied("the command touches %s, a sensitive path outside the workspace; hostcore's policy denies it in every permission mode", redact.EscapeText(d.word))
	}
	if _, r := c.checkShell(ctx); r != nil {
		return r
	}
	// Probe the login shell's PATH (cached, up to 5 s) while the card is
	// open, so the first command does not wait for it.
	go process.LoginPath()
	return nil
}

// runBash runs the command under the per-command reaper (sandbox/process):
// whatever the command does, this returns in bounded time with nothing left
// running.
func runBash(ctx context.Context, c *call) *ToolResult {
	var a bashArgs
	decodeInto(c.args, &a)
	if a.Timeout == 0 {
		a.Timeout = bashDefaultTimeout
	}
	// The effective shell is resolved again right before spawning: the
	// settings may have changed while the card was open.
	shell, r := c.checkShell(ctx)
	if r != nil {
		return r
	}
	bash, err := process.ResolveBash()
	if err != nil {
		return failResult(CodeShellNotFound, "%v", err)
	}
	// The login PATH probe is bounded (5 s) but not cancellable: an abort
	// must not wait for it.
	login := make(chan string, 1)
	go func() { login <- process.LoginPath() }()
	var loginPath string
	select {
	case loginPath = <-login:
	case <-ctx.Done():
		return aborted(ctx)
	}

	spec := process.Spec{
		Path:      bash,
		Args:      []string{"-lc", a.Command},
		Dir:       c.sess.WorkspaceRoot,
		Env:       bashEnv(os.Environ(), loginPath, c.scratchDir(), a.TTY, func() string { return c.s.bashEnvFile(bash) }),
		TTY:       a.TTY,
		Batch:     c.s.cfg.BatchCommands,
		Timeout:   time.Duration(a.Timeout) * time.Second,
		Grace:     bashGrace,
		HeadBytes: bashHeadBytes,
		TailBytes: bashTailBytes,
		SpillDir:  c.scratchDir(),
		OnOutput:  c.outputNotifier(),
		Warm:      c.s.warm,
	}
	if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
		// Said plainly: the start would fail with "starting /bin/bash: no
		// such file or directory", which names the wrong file.
		return failResult(CodeToolFailed, "the workspace directory %s is gone (%v): the command was not run", redact.EscapeText(spec.Dir), errOrNotDir(err))
	}
	// The workspace is its canonical path: if a link now stands there (or
	// on the way to it), the command would run in whatever it points to,
	// where the file tools see only outside paths.
	if real, err := filepath.EvalSymlinks(spec.Dir); err != nil || real != spec.Dir {
		return policyDenied("the workspace path %s now leads to %s (a link was put in its place): the command was not run", redact.EscapeText(spec.Dir), redact.EscapeText(real))
	}
	res, err := process.Run(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return aborted(ctx)
		}
		return failResult(CodeToolFailed, "the command could not be started: %v", err)
	}
	out := bashResult(res, shell, a)
	switch {
	case res.Aborted:
		ab := aborted(ctx)
		what := "; the command's process tree was killed"
		if res.NotStarted {
			what = "; the command had not started, and nothing ran"
		}
		out.ErrorCode, out.Message = ab.ErrorCode, ab.Message+what
		out.Content[0].Text = out.Message + "." + strings.TrimPrefix(out.Content[0].Text, "Aborted.")
	case out.ErrorCode == CodeToolFailed:
		if kind := patchCommand(a.Command); kind != "" {
			c.patchFailed(kind, out)
		}
	}
	return out
}

// rawNotifier is implemented by rpc.Server: notifications whose params
// are encoded straight into the lines that are written, several with one
// write.
type rawNotifier interface {
	NotifyBuildN(method string, n int, build func(i int, dst []byte) []byte) error
}

// outputChunk is one tool.output notification's params (PROTOCOL
// section 5).
type outputChunk struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	Stream     string `json:"stream"`
	Seq        int    `json:"seq"`
	Data       string `json:"data"`
}

// outputNotifier sends the command's output as tool.output notifications
// (PROTOCOL section 5). Each call has written its lines before it returns,
// and every call returns before process.Run does: all chunks precede the
// response. The chunks of one call go out with one write.
func (c *call) outputNotifier() func(stream string, seq int, chunks [][]byte) {
	chunk := func(stream string, seq int, data []byte) outputChunk {
		return outputChunk{SessionID: c.sess.ID, ToolCallID: c.p.ToolCallID, Stream: stream, Seq: seq, Data: string(data)}
	}
	raw, ok := c.s.client.(rawNotifier)
	if !ok {
		return func(stream string, seq int, chunks [][]byte) {
			for i, data := range chunks {
				c.s.client.Notify(context.Background(), "tool.output", chunk(stream, seq+i, data))
			}
		}
	}
	return func(stream string, seq int, chunks [][]byte) {
		raw.NotifyBuildN("tool.output", len(chunks), func(i int, b []byte) []byte {
			out, err := appendJSON(b, chunk(stream, seq+i, chunks[i]))
			if err != nil {
				return b // a string always encodes
			}
			return out
		})
	}
}

// bashResult renders a finished command: details with both streams kept
// apart, and the text the model reads.
func bashResult(res process.Result, shell string, a bashArgs) *ToolResult {
	d := map[string]any{
		"exitCode":        res.ExitCode,
		"stdout":          res.Stdout.Text(),
		"stderr":          res.Stderr.Text(),
		"stdoutTruncated": res.Stdout.Truncated,
		"stderrTruncated": res.Stderr.Truncated,
		"stdoutBytes":     res.Stdout.Total,
		"stderrBytes":     res.Stderr.Total,
		"timedOut":        res.TimedOut,
		"shell":           shell,
	}
	if res.Signal != "" {
		// As Node's child_process reports it: no exit code, the signal named.
		d["exitCode"], d["signal"] = nil, res.Signal
	}
	if res.Stdout.FullCut {
		d["stdoutFileCut"] = true
	}
	if res.Stderr.FullCut {
		d["stderrFileCut"] = true
	}
	if res.Stdout.FullPath != "" {
		d["stdoutFile"] = res.Stdout.FullPath
	}
	if res.Stderr.FullPath != "" {
		d["stderrFile"] = res.Stderr.FullPath
	}
	if res.Stdout.FullErr != "" {
		d["stdoutFileError"] = res.Stdout.FullErr
	}
	if res.Stderr.FullErr != "" {
		d["stderrFileError"] = res.Stderr.FullErr
	}

	var status, code string
	switch {
	case res.Aborted:
		status, code = "Aborted.", CodeToolAborted
	case res.TimedOut:
		status, code = fmt.Sprintf("Timed out after %d s; the command's process tree was killed. Partial output follows.", a.Timeout), CodeToolTimeout
	case res.Signal != "":
		status, code = "Killed by signal "+res.Signal+".", CodeToolFailed
	case res.ExitCode != 0:
		status, code = fmt.Sprintf("Exit code %d.", res.ExitCode), CodeToolFailed
	default:
		status = "Exit code 0."
	}
	var b strings.Builder
	b.WriteString(status)
	if a.TTY {
		section(&b, "output (terminal)", res.Stdout)
	} else {
		section(&b, "stdout", res.Stdout)
		section(&b, "stderr", res.Stderr)
	}
	r := &ToolResult{OK: code == "", Content: []Content{{Type: "text", Text: b.String()}}, Details: d}
	if code != "" {
		r.IsError, r.ErrorCode, r.Message = true, code, status
	}
	return r
}

// section appends one labelled stream; the streams are never interleaved.
func section(b *strings.Builder, label string, s process.Stream) {
	fmt.Fprintf(b, "\n\n%s:", label)
	if s.Total == 0 {
		b.WriteString(" (empty)")
		return
	}
	b.WriteByte('\n')
	b.WriteString(strings.TrimSuffix(s.Text(), "\n"))
}

// bashEnv is hostcore's environment with the login shell's PATH injected
// (design section 5: nvm, pnpm, Homebrew set up in zsh files) ahead of
// hostcore's own, and PI_SCRATCH_DIR exported. With envFile (which
// writes the BASH_ENV script, bashEnvScript, and returns its path; called
// only when the script is to be used) that PATH is also handed to the script,
// which puts it back after the profile files of bash -lc: Debian's and
// Ubuntu's /etc/profile set PATH outright, and the probed PATH was lost
// (an acceptance check: a probed entry never reached the command). Not
// when the user has a BASH_ENV of their own or POSIXLY_CORRECT (bash
// would not read ours), nor with an empty PATH (the script would have
// nothing to put first).
func bashEnv(base []string, loginPath, scratchDir string, tty bool, envFile func() string) []string {
	env := make([]string, 0, len(base)+7)
	hostPath, shlvl, useScript := "", "", envFile != nil
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			hostPath = v
			continue
		case "PI_SCRATCH_DIR", bashPathVar, bashLevelVar:
			continue
		case "BASH_ENV", "POSIXLY_CORRECT":
			useScript = false
		case "SHLVL":
			shlvl = v
		}
		if tty && (k == "PAGER" || k == "GIT_PAGER") {
			continue
		}
		env = append(env, kv)
	}
	path := mergePath(loginPath, hostPath)
	env = append(env, "PATH="+path, "PI_SCRATCH_DIR="+scratchDir)
	if useScript && path != "" {
		if file := envFile(); file != "" {
			env = append(env, "BASH_ENV="+file, bashPathVar+"="+path, bashLevelVar+"="+strconv.Itoa(bashLevel(shlvl)))
		}
	}
	if tty {
		// Nobody types into the terminal: a pager would wait until the timeout.
		env = append(env, "PAGER=cat", "GIT_PAGER=cat")
	}
	return env
}

// bashPathVar carries the command's PATH to bashEnvScript; bashLevelVar
// the SHLVL of the shell that is to act on it, bash -lc itself (bashLevel):
// a bash the command starts, one level down, does nothing, should a
// BASH_ENV that bash -lc did not read (a profile's `set -o posix`) reach
// it.
const (
	bashPathVar  = "HOSTCORE_COMMAND_PATH"
	bashLevelVar = "HOSTCORE_SHLVL"
)

// bashLevel is the SHLVL bash sets for itself, given the one it inherits
// (bash's adjust_shell_level).
func bashLevel(inherited string) int {
	n, err := strconv.Atoi(strings.TrimSpace(inherited))
	if err != nil {
		n = 0
	}
	n++
	if n < 0 {
		return 0
	}
	if n >= 1000 {
		return 1
	}
	return n
}

// bashEnvScript runs in bash -lc after the profile files (bash reads
// BASH_ENV then, for a non-interactive shell): the PATH hostcore gave the
// command comes first again, followed by what the profile files added,
// without repeats and without empty entries (an empty one would be the
// workspace); then it unsets BASH_ENV and its variables, so that the
// command and the scripts it runs see none of them. It says nothing: a
// profile's `set -x` is off while it runs, a read-only PATH is left as it
// is, `set -u` finds every variable set.
const bashEnvScript = `# Written by hostcore: bash -lc runs it through BASH_ENV, after the profile files, before each Bash command.
{ case $- in *x*) __hostcore_x=1; set +x ;; *) __hostcore_x= ;; esac; } 2>/dev/null
if [ "${SHLVL-}" = "${HOSTCORE_SHLVL-}" ] && [ -n "${HOSTCORE_COMMAND_PATH-}" ]; then
  __hostcore_new=$HOSTCORE_COMMAND_PATH
  __hostcore_rest=${PATH-}:
  while [ -n "$__hostcore_rest" ]; do
    __hostcore_dir=${__hostcore_rest%%:*}
    __hostcore_rest=${__hostcore_rest#*:}
    case ":$__hostcore_new:" in
      *":$__hostcore_dir:"*) ;;
      *) if [ -n "$__hostcore_dir" ]; then __hostcore_new=$__hostcore_new:$__hostcore_dir; fi ;;
    esac
  done
  { PATH=$__hostcore_new; export PATH; } 2>/dev/null
fi
unset HOSTCORE_COMMAND_PATH HOSTCORE_SHLVL BASH_ENV __hostcore_new __hostcore_rest __hostcore_dir
if [ -n "$__hostcore_x" ]; then unset __hostcore_x; set -x; else unset __hostcore_x; fi
`

// bashEnvFile writes bashEnvScript into the data dir, anew for every
// command (a command may have put anything there since: a FIFO would hold
// every later command until its timeout), and returns its path. "" when it
// cannot be written; when the shell is named sh (bash then reads no
// BASH_ENV, and ours would reach the bash scripts the command runs); and
// when the data dir's path holds '$', '`' or '\': bash expands BASH_ENV's
// value as in double quotes, and a data dir's name must neither run as a
// command nor name another file. The command then runs with the PATH its
// profile files leave.
func (s *Server) bashEnvFile(shell string) string {
	if s.cfg.DataDir == "" || strings.ContainsAny(s.cfg.DataDir, "$`\\") || filepath.Base(shell) == "sh" {
		return ""
	}
	p := filepath.Join(s.cfg.DataDir, "bash_env.sh")
	tmp, err := os.CreateTemp(s.cfg.DataDir, ".bash_env-*")
	if err == nil {
		_, err = tmp.WriteString(bashEnvScript)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), p) // replaces whatever is there, a link included
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		s.log.Warn("cannot write the BASH_ENV script; the command gets the PATH its profile files leave", "err", err)
		return ""
	}
	return p
}

// mergePath puts first's entries before second's, without repeats.
func mergePath(first, second string) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range append(filepath.SplitList(first), filepath.SplitList(second)...) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return strings.Join(out, string(os.PathListSeparator))
}

// --- shell pinning (design section 5, D190) ---

// shellPins remembers, per session, the shell each recent turn pinned with
// its first Bash call. Guarded by runtime.mu.
type shellPins struct {
	byTurn map[string]string
	order  []string
}

// pin returns the turn's pinned shell, pinning id if the turn has none.
func (p *shellPins) pin(turn, id string) string {
	if got, ok := p.byTurn[turn]; ok {
		return got
	}
	if p.byTurn == nil {
		p.byTurn = map[string]string{}
	}
	if len(p.order) >= shellPinsKept {
		delete(p.byTurn, p.order[0])
		p.order = p.order[1:]
	}
	p.byTurn[turn] = id
	p.order = append(p.order, turn)
	return id
}

// checkShell resolves the effective shell, pins it for the turn on its
// first Bash call (or pins the id the client sent in ExecuteParams.shell),
// and refuses the call when the pinned and the effective shell differ.
// Catalog ids map one-to-one to dialects, so comparing ids compares both.
func (c *call) checkShell(ctx context.Context) (string, *ToolResult) {
	eff, err := c.s.effectiveShell(ctx)
	if err != nil {
		return "", failResult(CodeToolFailed, "reading the command shell setting: %v", err)
	}
	if eff == "" {
		_, err := process.ResolveBash()
		if err == nil {
			err = process.ErrShellNotFound
		}
		return "", failResult(CodeShellNotFound, "%v", err)
	}
	want := c.p.Shell
	if want != "" && !inCatalog(want) {
		return "", failResult(CodeShellInvalid, "shell %q is not a command shell id (want one of windows-powershell, cmd, git-bash, bash)", redact.EscapeText(want))
	}
	c.rt.mu.Lock()
	pinned := c.rt.shells.pin(c.p.TurnID, cmp.Or(want, eff))
	c.rt.mu.Unlock()
	switch {
	case want != "" && want != pinned:
		return "", failResult(CodeShellChanged, "this call names shell %q but turn %s pinned %q; start a new turn to use another shell", want, redact.EscapeText(c.p.TurnID), pinned)
	case pinned != eff:
		return "", failResult(CodeShellChanged, "turn %s pinned shell %q but the effective shell is now %q; the command was not run. Start a new turn to use %q",
			redact.EscapeText(c.p.TurnID), pinned, eff, eff)
	case eff != "bash":
		return "", failResult(CodeShellNotFound, "shell %q cannot run commands on this platform; only bash is supported", eff)
	}
	return eff, nil
}

func inCatalog(id string) bool {
	for _, sh := range process.Catalog() {
		if sh.ID == id {
			return true
		}
	}
	return false
}

// --- patch commands (design section 4d) ---

// patchRe finds apply_patch, git apply (git -C dir apply too) and patch as a
// command word: at the start, after ; & | ( ! { or a newline, or after a
// keyword (if, then, ...) or a wrapper that runs its arguments (sudo, env
// with assignments, time, nice, xargs, command, exec) in front of it.
var patchRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[;&|(!{\n])\s*` +
		`(?:(?:if|then|else|elif|do|while|until|sudo|time|nice|nohup|command|exec|xargs|env)\s+(?:-\S+\s+(?:[^-;&|\s]\S*\s+)?|[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)*` +
		`(?:\S*/)?(apply_patch|git(?:\s+-[Cc]\s+\S+)*\s+apply|patch)(?:\s|$|[;&|)])`)
})

// patchCommand names the patch command a shell command runs, "" if none.
func patchCommand(command string) string {
	m := patchRe().FindStringSubmatch(command)
	if m == nil {
		return ""
	}
	if strings.HasPrefix(m[1], "git") {
		return "git apply"
	}
	return m[1]
}

// patchFailed counts a failed shell patch command within the prompt; the
// second one terminates the agent's repair loop, like a second failed Edit.
func (c *call) patchFailed(kind string, r *ToolResult) {
	attempt := c.countFailure("patch", "")
	d := r.Details.(map[string]any)
	d["mutationFailureKind"] = "patch_failed"
	d["mutationFailureAttempt"] = attempt
	d["patchCommand"] = kind
	if attempt >= 2 {
		r.Terminate = true
		note := "This is the second failed patch command in this prompt: stop and report the exact mismatch instead of retrying."
		r.Message += " " + note
		r.Content[0].Text += "\n\n" + note
	}
}

// --- denylist (design section 5) ---

// builtinDenylist are sensitive paths a Bash command may not name, in
// every permission mode, unless they lie inside the workspace. "~/" means
// any user's home. It is a tripwire against an agent wandering into
// credentials, not a sandbox: a command can always build a path the text
// does not show.
var builtinDenylist = []string{
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

const keyBashDenylist = "bashDenylist"

// globDescends reports whether a Glob pattern reaches below the directory
// it starts from: its part from the first component holding a wildcard
// on has a '/' or a '**'. /etc/*.conf lists one directory; .ss?/* and
// **/id_* walk into others.
func globDescends(pattern string) bool {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, "*?[{") {
			return i < len(parts)-1 || strings.Contains(p, "**")
		}
	}
	return false
}

// globLiteralDirs returns a Glob pattern's components before its first
// wildcard (all of them for a pattern without one), "" for none: .ssh/*
// gives .ssh, .ssh/id_rsa gives .ssh/id_rsa, *.txt gives "". (A pattern
// that climbs with ".." or is absolute has them moved into its path by
// splitGlob already; they are kept here as well, which only adds a path
// to check.)
func globLiteralDirs(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, globMeta) {
			return strings.Join(parts[:i], "/")
		}
	}
	return pattern
}

// sensitiveTarget refuses a file tool's outside path that names an entry
// of the denylist (built-in and the user's), as written or as resolved
// (a link to ~/.ssh is ~/.ssh; a home that is itself a link counts by
// both its names). Grep walks whole trees, and so does a Glob whose
// pattern descends (a Glob of ~ with pattern .ss?/* listed the names in
// ~/.ssh): a directory above an entry (the home directory) is refused for
// them too; Read, Write and Edit name one file, a Glob like *.txt one
// directory. Names compare without case where the file system
// does (macOS), as for Bash.
func (c *call) sensitiveTarget(ctx context.Context) *ToolResult {
	extra, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(CodeToolFailed, "reading the denylist: %v", err)
	}
	homes := []string{userHome()}
	if real, err := filepath.EvalSymlinks(homes[0]); err == nil && real != homes[0] {
		homes = append(homes, real)
	}
	var entries [][]string
	for _, home := range homes {
		entries = append(entries, builtinEntries(home)...)
		for _, e := range extra {
			entries = append(entries, entryPaths(e, home)...)
			entries = append(entries, linkedEntry(e, home)...)
		}
	}
	var glob struct {
		Pattern string `json:"pattern"`
	}
	if c.tool.Name == "Glob" {
		decodeInto(c.args, &glob)
	}
	descends := globDescends(glob.Pattern)
	opts := globOpts{recursive: c.tool.Name == "Grep" || descends, nocase: caseInsensitiveFS}
	globs := globCache{}
	paths := []string{c.target.Abs, filepath.Clean(c.rawPath())}
	if lit := globLiteralDirs(glob.Pattern); lit != "" {
		// The directories a pattern names before its first wildcard are
		// listed as surely as its path: .ssh/* from the home directory
		// lists ~/.ssh (an adversarial review), and .ssh/id_rsa names
		// the key. They count as part of the path, as written and as
		// resolved.
		for _, p := range paths[:2] {
			if filepath.IsAbs(p) {
				q := filepath.Join(p, lit)
				paths = append(paths, q)
				if r := resolvedPath(q); r != q {
					paths = append(paths, r)
				}
			}
		}
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		pc := components(p)
		for _, ec := range entries {
			if globs.namesEntry(pc, ec, opts) {
				return policyDenied("%s is a sensitive path outside the workspace; hostcore's policy denies it to %s in every permission mode", redact.EscapeText(p), c.tool.Name)
			}
		}
	}
	return nil
}

// Bounds of the user's extension of the denylist.
const (
	denylistMaxEntries = 256
	denylistMaxEntry   = 4096
)

// bashDenylist is the user's extension of the built-in list (settings).
func (s *Server) bashDenylist(ctx context.Context) ([]string, error) {
	v, ok, err := s.store.GetSetting(ctx, keyBashDenylist)
	if err != nil || !ok {
		return []string{}, err
	}
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return []string{}, nil
	}
	return list, nil
}

// parseBashDenylist checks settings.update's bashDenylist (an array of
// paths, each absolute or starting with "~/", replacing the previous
// extension) and returns the value to store: nil (JSON null) clears it.
func parseBashDenylist(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalidParams("invalid params: bashDenylist must be an array of paths or null")
	}
	if len(list) > denylistMaxEntries {
		return nil, invalidParams("invalid params: bashDenylist has %d entries; at most %d", len(list), denylistMaxEntries)
	}
	for i, e := range list {
		clean := path.Clean(e)
		if len(e) > denylistMaxEntry || !(strings.HasPrefix(e, "/") || strings.HasPrefix(e, "~/")) || clean == "/" || strings.HasPrefix(e, "~/") && !strings.HasPrefix(clean, "~/") {
			return nil, invalidParams("invalid params: bashDenylist[%d] must be an absolute path or start with ~/ (and name more than the root or the home directory)", i)
		}
		// Entries are paths, matched as written: a glob would be
		// accepted and protect nothing.
		if strings.ContainsAny(e, "*?[") {
			return nil, invalidParams("invalid params: bashDenylist[%d] holds a glob character; entries are plain paths (a directory covers everything under it)", i)
		}
	}
	b, _ := json.Marshal(list)
	v := string(b)
	return &v, nil
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}

func errOrNotDir(err error) error {
	if err != nil {
		return err
	}
	return errors.New("not a directory")
}
