package handlers

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"hostcore/sandbox"
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
func bashPreview(c *call) string {
	var a bashArgs
	decodeInto(c.args, &a)
	return a.Command
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
		return policyDenied("the brace expansion of %s is too large for hostcore's denylist check to read, and the check fails closed: spell the paths out", bound(escapeText(d.word), 200))
	case d.word != "":
		return policyDenied("the command touches %s, a sensitive path outside the workspace; hostcore's policy denies it in every permission mode", escapeText(d.word))
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
		Env:       bashEnv(os.Environ(), loginPath, c.scratchDir(), a.TTY),
		TTY:       a.TTY,
		Timeout:   time.Duration(a.Timeout) * time.Second,
		Grace:     bashGrace,
		HeadBytes: bashHeadBytes,
		TailBytes: bashTailBytes,
		SpillDir:  c.scratchDir(),
		OnOutput:  c.outputNotifier(),
		Warm:      c.s.warm,
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
		out.ErrorCode, out.Message = ab.ErrorCode, ab.Message+"; the command's process tree was killed"
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
	for i := 0; i < len(s); {
		// Skip plain ASCII eight bytes at a time, and then straight to the
		// first byte that needs a look: command output is mostly runs of
		// ordinary characters between newlines.
		for i+8 <= len(s) {
			if m := escapeMask8(binary.LittleEndian.Uint64(s[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if jsonPlain[b] {
			i++
			continue
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
// hostcore's own, and PI_SCRATCH_DIR exported.
func bashEnv(base []string, loginPath, scratchDir string, tty bool) []string {
	env := make([]string, 0, len(base)+4)
	hostPath := ""
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			hostPath = v
			continue
		case "PI_SCRATCH_DIR":
			continue
		}
		if tty && (k == "PAGER" || k == "GIT_PAGER") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+mergePath(loginPath, hostPath), "PI_SCRATCH_DIR="+scratchDir)
	if tty {
		// Nobody types into the terminal: a pager would wait until the timeout.
		env = append(env, "PAGER=cat", "GIT_PAGER=cat")
	}
	return env
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
}

const keyBashDenylist = "bashDenylist"

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

// updateBashDenylist is settings.update's bashDenylist: an array of paths,
// each absolute or starting with "~/", replacing the previous extension;
// null clears it.
func (s *Server) updateBashDenylist(ctx context.Context, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	if string(raw) == "null" {
		if err := s.store.DeleteSetting(ctx, keyBashDenylist); err != nil {
			return storageError("saving settings", err)
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return invalidParams("invalid params: bashDenylist must be an array of paths or null")
	}
	if len(list) > denylistMaxEntries {
		return invalidParams("invalid params: bashDenylist has %d entries; at most %d", len(list), denylistMaxEntries)
	}
	for i, e := range list {
		if len(e) > denylistMaxEntry || !(strings.HasPrefix(e, "/") || strings.HasPrefix(e, "~/")) || path.Clean(e) == "/" || e == "~/" {
			return invalidParams("invalid params: bashDenylist[%d] must be an absolute path or start with ~/ (and name more than the root or the home directory)", i)
		}
	}
	b, _ := json.Marshal(list)
	if err := s.store.SetSetting(ctx, keyBashDenylist, string(b)); err != nil {
		return storageError("saving settings", err)
	}
	return nil
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}

// homeParam matches ${HOME} and its expansions with operators
// (${HOME%/}, ${HOME:-x}): each is taken for the home directory.
var homeParam = regexp.MustCompile(`\$\{HOME(?:[^A-Za-z0-9_}"'\\][^}"'\\]*)?\}`)

// homeRe matches the spellings of a home directory at the start of a word:
// $HOME (${HOME} is rewritten to it first), ~ and ~user (the user name
// may be a glob: a word read starred spells ~{root,x} ~*).
var homeRe = regexp.MustCompile(`^(?:\$HOME\b|~[A-Za-z0-9._*?-]*)`)

// otherHomes are the home directories of any user, "" standing for any
// one component.
var otherHomes = [][]string{{"root"}, {"var", "root"}, {"home", ""}, {"Users", ""}}

// deniedPath returns the first word of the command that names a sensitive
// path outside the workspace, "" if none. Words are split the way the shell
// splits them, quotes and backslashes removed, so ~/".ssh", /etc/sh\adow
// and "$HOME/Library/Application Support/..." are seen; relative words
// with ".." are resolved against the workspace (the cwd), so ../../.ssh is
// seen too; glob words are matched component by component as the shell
// would, so ~/.ss? is seen and ~/* is not.
var multiSlash = regexp.MustCompile(`/{2,}`)

// procAlias matches /proc/<process>/root and .../cwd, which spell another
// path through procfs (found in review: /proc/self/root/home/u/.ssh/id_rsa
// walked past the list). The process is any component: a pid, self,
// thread-self, $$, a glob.
var procAlias = regexp.MustCompile(`^/proc/[^/]+(?:/task/[^/]+)?/(root|cwd)(/.*)?$`)

// unproc rewrites a procfs alias to the path it names: root is "/", and
// cwd is the command's working directory, the workspace.
func unproc(p, workspace string) string {
	m := procAlias.FindStringSubmatch(p)
	if m == nil {
		return p
	}
	if m[1] == "cwd" {
		if workspace == "" {
			return p
		}
		return path.Clean(workspace + "/" + m[2])
	}
	return path.Clean("/" + m[2])
}

// deniedPath returns the word of the command that names a sensitive path
// (or that is too complex to check), "" if none.
func deniedPath(command, workspace, home string, extra []string) string {
	return checkDenylist(command, workspace, home, extra).word
}

// denial is what checkDenylist found: the word that names a sensitive
// path, or one whose braces are too complex to read within the bounds
// (denied: the check fails closed).
type denial struct {
	word       string
	tooComplex bool
}

func checkDenylist(command, workspace, home string, extra []string) denial {
	text := homeParam.ReplaceAllString(command, "$$HOME")
	var entries [][]string
	for _, list := range [][]string{builtinDenylist, extra} {
		for _, e := range list {
			entries = append(entries, entryPaths(e, home)...)
		}
	}
	// The flat reading sees the command as it did before shellWords
	// existed (only ${HOME} rewritten), so that nothing it caught gets
	// through: a rewrite of ${HOME...} that met a quote could swallow
	// the rest of the command.
	expanded, tooComplex := expandAll(shellWords(text))
	words := append(flatWords(strings.ReplaceAll(command, "${HOME}", "$HOME")), expanded...)
	if strings.Contains(command, "\\\n") {
		// Bash joins continued lines before it reads words at all, even
		// inside a name ($HO\<newline>ME): the command is read joined too.
		joined := strings.ReplaceAll(command, "\\\n", "")
		more, complex2 := expandAll(shellWords(homeParam.ReplaceAllString(joined, "$$HOME")))
		words = append(append(words, flatWords(strings.ReplaceAll(joined, "${HOME}", "$HOME"))...), more...)
		tooComplex = cmp.Or(tooComplex, complex2)
	}
	for _, word := range words {
		p := word
		if loc := homeRe.FindStringIndex(p); loc != nil && (len(p) == loc[1] || p[loc[1]] == '/') {
			if home == "" {
				continue
			}
			p = home + p[loc[1]:]
		} else if !strings.HasPrefix(p, "/") {
			if workspace == "" || !strings.Contains(p, "..") {
				continue // a relative path without .. stays in the workspace
			}
			p = workspace + "/" + p
		}
		// The procfs alias is rewritten before cleaning: cwd and root are
		// links, so a ".." after them climbs from where they point.
		p = path.Clean(unproc(multiSlash.ReplaceAllString(p, "/"), workspace))
		if workspace != "" && sandbox.LexicallyInside(workspace, p) {
			continue
		}
		pc := components(p)
		for _, ec := range entries {
			if namesEntry(pc, ec) {
				return denial{word: word}
			}
		}
	}
	if tooComplex != "" {
		return denial{word: tooComplex, tooComplex: true}
	}
	return denial{}
}

// entryPaths expands a denylist entry into the component lists it stands
// for: an absolute entry is itself; a "~/" entry lies under home and under
// every user's home directory.
func entryPaths(e, home string) [][]string {
	rest, ok := strings.CutPrefix(e, "~/")
	if !ok {
		return [][]string{components(path.Clean(e))}
	}
	rc := components(path.Clean("/" + rest))
	var out [][]string
	if home != "" && home != "/" {
		out = append(out, append(components(path.Clean(home)), rc...))
	}
	for _, h := range otherHomes {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	return out
}

func components(p string) []string {
	if p = strings.Trim(p, "/"); p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// namesEntry says whether the path pc names the entry ec or something
// inside it: each of ec's components is matched by pc's, read as a glob
// pattern the way the shell reads it (a leading dot is matched only by a
// pattern that starts with one). A parent of the entry does not name it:
// ls ~ is not sensitive.
func namesEntry(pc, ec []string) bool {
	if len(pc) < len(ec) {
		return false
	}
	for i, want := range ec {
		got := pc[i]
		if got == want || want == "" {
			continue
		}
		if strings.HasPrefix(want, ".") && !strings.HasPrefix(got, ".") {
			return false
		}
		if ok, err := path.Match(got, want); err != nil || !ok {
			return false
		}
	}
	return true
}

// shellWords splits a command into words roughly as the shell does:
// whitespace and the operators ; & | ( ) < > and ` separate; quotes and
// backslashes group, and their text is marked as quoted (see quoteInto)
// for expandAll, which reads braces as bash does and removes the marks;
// $'...' has its escapes decoded; a backslash-newline joins lines. A
// command substitution, $(...) or `...`, stands for nothing in its word
// (~/.ssh$(:)/id is ~/.ssh/id) and its own words are added after; ${...}
// is kept whole.
func shellWords(s string) []string {
	return appendShellWords(nil, s, 0)
}

// flatWords splits a command into words the simple way: quotes and
// backslashes group and are removed, and whitespace and the operators
// ; & | ( ) < > as well as = , and ` separate (so --key=~/.ssh/id yields
// ~/.ssh/id). deniedPath reads a command both this way and with
// shellWords: the latter's reading of substitutions and braces can be
// thrown off by quotes inside them, and no spelling this one catches may
// get through.
func flatWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case strings.IndexByte(" \t\n\r;&|()<>=,`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words
}

// maxSubstDepth bounds the nesting of command substitutions read.
const maxSubstDepth = 8

func appendShellWords(words []string, s string, depth int) []string {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			inWord = false
		}
		w.Reset()
	}
	var inner []string // command substitutions, split after the word
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++ // a line continuation: nothing
		case ch == '\\' && i+1 < len(s):
			i++
			quoteInto(&w, s[i:i+1])
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := i + 2
			for j < len(s) && s[j] != '\'' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			quoteInto(&w, ansiC(s[i+2:min(j, len(s))]))
			i = j
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '"':
			// $"..." is a translated string: the same as "...".
		case ch == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			end := matching(s, i+1)
			if s[i+1] == '{' {
				if op, ok := writeParam(&w, s[i:end], depth); !ok {
					inner = append(inner, op)
				}
				inWord = true
			} else {
				// What it prints is not known: for brace expansion it
				// is quoted text (bash passes it through unexpanded).
				w.WriteByte(qMark)
				inner = append(inner, s[i+2:max(i+2, end-1)])
			}
			i = end - 1
		case ch == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteByte(qMark)
			inner = append(inner, s[i+1:i+1+j])
			i += j + 1
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			quoteInto(&w, s[i+1:i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			w.WriteByte(qMark)
			for i++; i < len(s) && s[i] != '"'; i++ {
				escaped := false
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == '\n' {
						continue
					}
					escaped = true
				}
				// Substitutions run inside double quotes too: their
				// commands are read like the others.
				if s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
					end := matching(s, i+1)
					inner = append(inner, s[i+2:max(i+2, end-1)])
					i = end - 1
					continue
				}
				if s[i] == '$' && i+1 < len(s) && s[i+1] == '{' {
					end := matching(s, i+1)
					if op, ok := writeParam(&w, s[i:end], depth); !ok {
						inner = append(inner, op)
					}
					i = end - 1
					continue
				}
				if s[i] == '`' {
					j := strings.IndexByte(s[i+1:], '`')
					if j < 0 {
						j = len(s) - i - 1
					}
					inner = append(inner, s[i+1:i+1+j])
					i += j
					continue
				}
				if s[i] == '$' && !escaped {
					w.WriteByte('$') // $name is expanded in double quotes too
					continue
				}
				w.WriteByte(quoteByte(s[i]))
			}
			inWord = true
		case strings.IndexByte(" \t\n\r;&|()<>`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	if depth < maxSubstDepth {
		for _, c := range inner {
			words = appendShellWords(words, c, depth+1)
		}
	}
	return words
}

// paramWord matches the parameter expansions whose operand is a word the
// value may be: ${x:-word}, ${x-word}, ${x:=word}, ${x:+word}, ${x:?word}.
var paramWord = regexp.MustCompile(`(?s)^\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(:?[-=+?])(.*)\}$`)

// writeParam writes the reading of a parameter expansion ${...} to a
// word. Its value is not known; it is read as what the text shows. With
// an operand word: ${x:-word}, ${x:=word} and ${x:?word} are word (or a
// value that is not empty, not known); ${x-word}, ${x=word}, ${x?word},
// ${x+word} and ${x:+word} are word or empty: a brace group of the two,
// which expandAll expands (${x-/etc}/shadow is read as /shadow and as
// /etc/shadow). Without one it is empty (${x}/etc/shadow is
// /etc/shadow). An operand of several words is returned with ok false,
// for the caller to read as words of its own. ${HOME...} never gets here
// (deniedPath rewrote it to $HOME).
func writeParam(w *strings.Builder, text string, depth int) (operand string, ok bool) {
	m := paramWord.FindStringSubmatch(text)
	if m == nil {
		w.WriteByte(qMark)
		return "", true
	}
	words := appendShellWords(nil, m[2], maxSubstDepth) // its substitutions are read elsewhere
	if len(words) != 1 || depth >= maxSubstDepth {
		w.WriteByte(qMark)
		return m[2], false
	}
	orEmpty := m[1] != ":-" && m[1] != ":=" && m[1] != ":?"
	if orEmpty {
		w.WriteByte('{')
		w.WriteByte(qMark)
		w.WriteByte(',')
	} else {
		w.WriteByte(qMark)
	}
	// The operand is not brace-expanded (bash skips ${...}).
	for i := 0; i < len(words[0]); i++ {
		switch c := words[0][i]; c {
		case '{', '}', ',':
			w.WriteByte(quoteByte(c))
		default:
			w.WriteByte(c)
		}
	}
	if orEmpty {
		w.WriteByte('}')
	}
	return "", true
}

func isNameStart(c byte) bool { return c == '_' || isAlpha(c) }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

// matching returns the index just past the bracket that closes the one
// at s[open] ('(' or '{'), or len(s).
func matching(s string, open int) int {
	o := s[open]
	c := byte(')')
	if o == '{' {
		c = '}'
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case o:
			depth++
		case c:
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// ansiC decodes the body of $'...': the escapes a path could be spelled
// with (\\, \', \xHH, octal \NNN); other escapes keep their letter.
func ansiC(b string) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out.WriteByte(b[i])
			continue
		}
		i++
		switch c := b[i]; {
		case c == 'x':
			n, k := 0, 0
			for ; k < 2 && i+1 < len(b) && isHex(b[i+1]); k++ {
				i++
				n = n*16 + hexVal(b[i])
			}
			out.WriteByte(byte(n))
		case c >= '0' && c <= '7':
			n := int(c - '0')
			for k := 1; k < 3 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				n = n*8 + int(b[i]-'0')
			}
			out.WriteByte(byte(n))
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

func isHex(c byte) bool { return hexVal(c) >= 0 }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
