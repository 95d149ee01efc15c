package handlers

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"hostcore/perms/denylist"
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
const maxCommandBytes = denylist.MaxCommandBytes

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
	switch d := denylist.CheckCommand(a.Command, c.sess.WorkspaceRoot, userHome(), list); {
	case d.TooComplex:
		return policyDenied("%s is too complex for hostcore's denylist check to read, and the check fails closed: spell the paths out", bound(escapeText(d.Word), 200))
	case d.Denied():
		return policyDenied("the command touches %s, a sensitive path outside the workspace; hostcore's policy denies it in every permission mode", escapeText(d.Word))
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
		return failResult(CodeToolFailed, "the workspace directory %s is gone (%v): the command was not run", escapeText(spec.Dir), errOrNotDir(err))
	}
	// The workspace is its canonical path: if a link now stands there (or
	// on the way to it), the command would run in whatever it points to,
	// where the file tools see only outside paths.
	if real, err := filepath.EvalSymlinks(spec.Dir); err != nil || real != spec.Dir {
		return policyDenied("the workspace path %s now leads to %s (a link was put in its place): the command was not run", escapeText(spec.Dir), escapeText(real))
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

// rawNotifier is implemented by rpc.Server: notifications whose params are
// encoded straight into the lines that are written, without jsonrpc2's
// repeated re-validation, several with one write.
type rawNotifier interface {
	NotifyBuildN(method string, n int, build func(i int, dst []byte) []byte) error
}

// outputNotifier sends the command's output as tool.output notifications
// (PROTOCOL section 5). Each call has written its lines before it returns,
// and every call returns before process.Run does: all chunks precede the
// response. A chunk is escaped once, into its line; the chunks of one call
// go out with one write.
func (c *call) outputNotifier() func(stream string, seq int, chunks [][]byte) {
	raw, ok := c.s.client.(rawNotifier)
	if !ok {
		return func(stream string, seq int, chunks [][]byte) {
			for i, data := range chunks {
				c.s.client.Notify(context.Background(), "tool.output", map[string]any{
					"sessionId": c.sess.ID, "toolCallId": c.p.ToolCallID, "stream": stream, "seq": seq + i, "data": string(data),
				})
			}
		}
	}
	prefix := appendJSONString(append([]byte(nil), `{"sessionId":`...), []byte(c.sess.ID))
	prefix = appendJSONString(append(prefix, `,"toolCallId":`...), []byte(c.p.ToolCallID))
	return func(stream string, seq int, chunks [][]byte) {
		raw.NotifyBuildN("tool.output", len(chunks), func(i int, b []byte) []byte {
			b = append(b, prefix...)
			b = appendJSONString(append(b, `,"stream":`...), []byte(stream))
			b = strconv.AppendInt(append(b, `,"seq":`...), int64(seq+i), 10)
			b = appendJSONString(append(b, `,"data":`...), chunks[i])
			return append(b, '}')
		})
	}
}

// appendJSONString appends s as a JSON string, as encoding/json would
// without HTML escaping: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029
// are escaped. Runs of plain bytes are copied at once: a command's output
// is mostly plain.
// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// escapeMask8 flags (with the high bit of its byte) each of eight bytes
// outside the plain set: a control byte, '"', '\\' or a non-ASCII byte. The
// lowest flag is exact (borrows only run upwards from a flagged byte), so
// it says where the first such byte is.
func escapeMask8(v uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - lo) & ^x & hi }
	return v&hi | (v-0x20*lo)&^v&hi | zero(v^('"'*lo)) | zero(v^('\\'*lo))
}

func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = slices.Grow(dst, len(s)+len(s)/16+2)
	dst = append(dst, '"')
	start := 0
	// vector: the run loop is worth entering. It is left once it stops at
	// a byte it does not handle, and entered again only after 32 plain
	// bytes (four eight-byte blocks, one step of it): text full of such
	// bytes (CJK, tabs, colour codes) would otherwise enter and leave it
	// at every one of them, slower than bytewise (colour codes between
	// short words: 630 against 890 MB/s when one plain block sufficed).
	vector := haveEscapeRun
	plain := 0 // plain eight-byte blocks since a byte the run loop stops at
	for i := 0; i < len(s); {
		if vector && len(s)-i >= 64 {
			// Plain text and newlines, 32 bytes a step (AVX2; see
			// jsonesc_amd64.s): command output is mostly that, and byte
			// by byte it was half of hostcore's CPU in a flood. It stops
			// before any other byte that needs a look, which the code
			// below handles, and leaves the last 64 bytes to it.
			dst = append(dst, s[start:i]...)
			if cap(dst)-len(dst) < 128 {
				dst = slices.Grow(dst, len(s)-i+(len(s)-i)/8+128)
			}
			nd, ns := escapeRun(dst[len(dst):cap(dst)], s[i:])
			dst = dst[:len(dst)+nd]
			i += ns
			start = i
			if i >= len(s) {
				break
			}
			if len(s)-i >= 64 {
				if cap(dst)-len(dst) < 96 {
					continue // out of room: grow and go on
				}
				vector, plain = false, 0 // stopped at a byte of its own
			}
		}
		// Skip plain ASCII eight bytes at a time, and then straight to the
		// first byte that needs a look: command output is mostly runs of
		// ordinary characters between newlines.
		for i+8 <= len(s) {
			if m := escapeMask8(binary.LittleEndian.Uint64(s[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
			if plain++; plain >= 4 {
				vector = haveEscapeRun
			}
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if jsonPlain[b] {
			i++
			continue
		}
		if b != '\n' {
			plain = 0 // a byte the run loop would stop at
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
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
		return "", failResult(CodeShellInvalid, "shell %q is not a command shell id (want one of windows-powershell, cmd, git-bash, bash)", escapeText(want))
	}
	c.rt.mu.Lock()
	pinned := c.rt.shells.pin(c.p.TurnID, cmp.Or(want, eff))
	c.rt.mu.Unlock()
	switch {
	case want != "" && want != pinned:
		return "", failResult(CodeShellChanged, "this call names shell %q but turn %s pinned %q; start a new turn to use another shell", want, escapeText(c.p.TurnID), pinned)
	case pinned != eff:
		return "", failResult(CodeShellChanged, "turn %s pinned shell %q but the effective shell is now %q; the command was not run. Start a new turn to use %q",
			escapeText(c.p.TurnID), pinned, eff, eff)
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

// --- denylist (design section 5; the check is perms/denylist) ---

const keyBashDenylist = "bashDenylist"

// sensitiveTarget refuses a file tool's outside path that names an entry
// of the denylist (built-in and the user's), as written or as resolved;
// for Grep, and a Glob whose pattern descends, a directory above an
// entry too (denylist.MatchPath).
func (c *call) sensitiveTarget(ctx context.Context) *ToolResult {
	extra, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(CodeToolFailed, "reading the denylist: %v", err)
	}
	var glob struct {
		Pattern string `json:"pattern"`
	}
	if c.tool.Name == "Glob" {
		decodeInto(c.args, &glob)
	}
	t := denylist.FileTarget{Paths: []string{c.target.Abs, filepath.Clean(c.rawPath())}, Pattern: glob.Pattern, Tree: c.tool.Name == "Grep"}
	if p := denylist.MatchPath(t, userHome(), extra); p != "" {
		return policyDenied("%s is a sensitive path outside the workspace; hostcore's policy denies it to %s in every permission mode", escapeText(p), c.tool.Name)
	}
	return nil
}

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
	if err := denylist.CheckEntries(list); err != nil {
		return nil, invalidParams("invalid params: %v", err)
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
