package tools

import (
	"context"
	"errors"
	"fmt"
	"hostcore/perms"
	"hostcore/perms/denylist"
	"hostcore/perms/redact"
	"hostcore/sandbox/background"
	"hostcore/sandbox/process"
	"hostcore/sandbox/shellenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Bash limits (design section 5). The description below is built from the
// same constants, so what the model is told is what is enforced.
const (
	bashDefaultTimeout = 60  // seconds
	bashMaxTimeout     = 300 // seconds; schemas/Bash.json enforces 1..300
	// bashHeadBytes and bashTailBytes bound what the result keeps of each
	// stream: the first and the last bytes, with the cut said in the text.
	bashHeadBytes = 16 << 10
	bashTailBytes = 16 << 10
	// bashGrace is the time between TERM and KILL on timeout or abort. It is
	// short so that shutdown (3 s, PROTOCOL section 1) can still answer a
	// call whose command ignores TERM.
	bashGrace = time.Second
	// BashWarmIdle is how long the reaper started ahead for the next
	// command waits for one before it leaves (process.Warm): long enough
	// to span the model's turn between two commands.
	BashWarmIdle = time.Minute
)

var bashDescription = fmt.Sprintf("Run a shell command with bash, with the login profile's environment, in the workspace root. stdin is /dev/null and there is no terminal "+
	"unless tty is true (one merged stream, for programs that refuse to run without one). timeout is in seconds: default %d, at most %d; "+
	"on timeout the whole process tree is killed and the partial output returned. stdout and stderr are returned separately, each "+
	"cut to its first %d and last %d bytes, the complete output saved in a file under $PI_SCRATCH_DIR when cut. "+
	"A non-zero exit is an error whose output is shown: read it before retrying. Processes it leaves running (`&`) are killed when it ends: "+
	"to keep one running (a dev server, a watcher, a long build) set runInBackground, which answers at once with a shellId for BashOutput "+
	"and KillShell (at most %d at once a session; they end with the session).",
	bashDefaultTimeout, bashMaxTimeout, bashHeadBytes, bashTailBytes, background.MaxRunning)

// Bash is the Bash tool. Its denylist and the check of the turn's shell
// are the envelope's (handlers/bash_denylist.go), run before the card.
var Bash = Tool[BashArgs, any]{
	Spec:     Spec{Name: "Bash", Class: perms.ClassExec, Risk: perms.RiskHigh, Description: bashDescription, NeedsWorkspace: true},
	Run:      runBash,
	Precheck: bashBackgroundPrecheck,
	// The card shows the command itself (the envelope escapes control
	// characters; a command is never redacted: what a card hides can be
	// the name of what runs).
	Preview: func(c *Call, a BashArgs) (string, string) {
		return c.Host.Bash().CardNote(a) + a.BackgroundNote() + a.Command, ""
	},
}

// BashArgs are Bash's arguments.
type BashArgs struct {
	Command     string `json:"command"`
	Timeout     int    `json:"timeout"`
	Description string `json:"description"`
	TTY         bool   `json:"tty"`
	// Sandbox "off" asks to run outside the command sandbox (always a
	// card, never remembered); Justification says why.
	Sandbox       string `json:"sandbox"`
	Justification string `json:"justification"`
	// RunInBackground starts the command and answers at once with its
	// shellId (bash_background.go).
	RunInBackground bool `json:"runInBackground"`
}

// BashHost is what Bash needs of hostcore beyond a Host.
type BashHost interface {
	// CheckShell resolves the effective shell and refuses the call when
	// its turn pinned another.
	CheckShell(ctx context.Context) (string, error)
	// EnvFile writes the BASH_ENV script and returns its path, "" when
	// it is not to be used.
	EnvFile(shell string) string
	// Output sends output chunks as tool.output notifications.
	Output() func(stream string, seq int, chunks [][]byte)
	// Warm is the reaper kept ready for the next command (nil: none);
	// Batch runs commands as batch tasks.
	Warm() *process.Warm
	Batch() bool
	// Sandbox is how the command is to run (bash_sandbox.go), given its
	// environment; an error refuses it. CardNote is what its card says
	// first.
	Sandbox(a BashArgs, env []string) (BashSandbox, error)
	CardNote(a BashArgs) string
	// ShellEnv is how commands get the login profile's environment: the
	// mode setting, and the snapshot cache (bash_snapshot.go).
	ShellEnv(ctx context.Context) (shellenv.Mode, *shellenv.Cache)
	// Background holds the commands run with runInBackground.
	Background() *background.Registry
}

// MaxCommandBytes is the longest command bash -lc can be given (the
// denylist reads no longer one).
const MaxCommandBytes = denylist.MaxCommandBytes

// runBash runs the command under the per-command reaper (sandbox/process):
// whatever the command does, this returns in bounded time with nothing left
// running.
func runBash(ctx context.Context, c *Call, a BashArgs) (Out[any], error) {
	var none Out[any]
	if a.Timeout == 0 {
		a.Timeout = bashDefaultTimeout
	}
	// The effective shell is resolved again right before spawning: the
	// settings may have changed while the card was open.
	bh := c.Host.Bash()
	shell, err := bh.CheckShell(ctx)
	if err != nil {
		return none, err
	}
	bash, err := process.ResolveBash()
	if err != nil {
		return none, Fail(CodeShellNotFound, "%v", err)
	}
	launch, err := prepareBash(ctx, c, bh, bash, a)
	if err != nil {
		return none, err
	}
	defer launch.release()

	spec := process.Spec{
		Path:      launch.path,
		Args:      launch.args,
		Dir:       c.Workspace,
		Env:       launch.env,
		TTY:       a.TTY,
		Batch:     bh.Batch(),
		Timeout:   time.Duration(a.Timeout) * time.Second,
		Grace:     bashGrace,
		HeadBytes: bashHeadBytes,
		TailBytes: bashTailBytes,
		SpillDir:  c.Scratch,
		OnOutput:  bh.Output(),
		Warm:      bh.Warm(),
	}
	if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
		// Said plainly: the start would fail with "starting /bin/bash: no
		// such file or directory", which names the wrong file.
		return none, Fail(CodeToolFailed, "the workspace directory %s is gone (%v): the command was not run", redact.EscapeText(spec.Dir), errOrNotDir(err))
	}
	// The workspace is its canonical path: if a link now stands there (or
	// on the way to it), the command would run in whatever it points to,
	// where the file tools see only outside paths.
	if real, err := filepath.EvalSymlinks(spec.Dir); err != nil || real != spec.Dir {
		return none, PolicyDenied("the workspace path %s now leads to %s (a link was put in its place): the command was not run", redact.EscapeText(spec.Dir), redact.EscapeText(real))
	}
	sb, err := bh.Sandbox(a, spec.Env)
	if err != nil {
		return none, err
	}
	spec.Sandbox = sb.Policy
	if a.RunInBackground {
		return startBackground(ctx, c, bh, spec, launch, shell, sb)
	}
	res, err := process.Run(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return none, ErrAborted
		}
		return none, Fail(CodeToolFailed, "the command could not be started: %v", err)
	}
	out, f := bashResult(res, shell, a)
	if f != nil {
		launch.neverStarted(f, res, a)
	}
	sb.annotate(&out, f)
	switch {
	case f == nil:
		return Out[any]{Text: out.Text, Details: out.Details}, nil
	case res.Aborted:
		what := "; the command's process tree was killed"
		if res.NotStarted {
			what = "; the command had not started, and nothing ran"
		}
		f.Message = AbortedMessage(ctx) + what
		f.Text = f.Message + "." + strings.TrimPrefix(f.Text, "Aborted.")
	case f.Code == CodeToolFailed:
		if kind := failedPatch(a.Command, res); kind != "" {
			patchFailed(c, kind, f)
		}
	}
	return none, f
}

// BashDetails are Bash's details: both streams kept apart.
type BashDetails struct {
	// ExitCode is null when a signal ended the command (as Node's
	// child_process reports it: no exit code, the signal named).
	ExitCode *int `json:"exitCode"`
	BashStreams
	TimedOut        bool   `json:"timedOut"`
	Shell           string `json:"shell"`
	Signal          string `json:"signal,omitempty"`
	StdoutFileCut   bool   `json:"stdoutFileCut,omitempty"`
	StderrFileCut   bool   `json:"stderrFileCut,omitempty"`
	StdoutFile      string `json:"stdoutFile,omitempty"`
	StderrFile      string `json:"stderrFile,omitempty"`
	StdoutFileError string `json:"stdoutFileError,omitempty"`
	StderrFileError string `json:"stderrFileError,omitempty"`
	// A failed patch command (design section 4d).
	MutationFailure
	PatchCommand string `json:"patchCommand,omitempty"`
	// Sandbox is "landlock", "none" (SandboxReason says why) or "off"
	// (bash_sandbox.go).
	Sandbox       string `json:"sandbox,omitempty"`
	SandboxReason string `json:"sandboxReason,omitempty"`
}

// BashStreams are a command's two streams as a result shows them, each
// cut to its head and tail (Truncated), with the bytes it wrote.
type BashStreams struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdoutTruncated"`
	StderrTruncated bool   `json:"stderrTruncated"`
	StdoutBytes     int64  `json:"stdoutBytes"`
	StderrBytes     int64  `json:"stderrBytes"`
}

// bashResult renders a finished command: details with both streams kept
// apart, and the text the model reads. A command that did not exit 0 is
// a failure whose text is the same.
func bashResult(res process.Result, shell string, a BashArgs) (Out[BashDetails], *Failure) {
	d := BashDetails{
		BashStreams: BashStreams{Stdout: res.Stdout.Text(), Stderr: res.Stderr.Text(),
			StdoutTruncated: res.Stdout.Truncated, StderrTruncated: res.Stderr.Truncated,
			StdoutBytes: res.Stdout.Total, StderrBytes: res.Stderr.Total},
		TimedOut: res.TimedOut, Shell: shell, Signal: res.Signal,
		StdoutFileCut: res.Stdout.FullCut, StderrFileCut: res.Stderr.FullCut,
		StdoutFile: res.Stdout.FullPath, StderrFile: res.Stderr.FullPath,
		StdoutFileError: res.Stdout.FullErr, StderrFileError: res.Stderr.FullErr,
	}
	if res.Signal == "" {
		code := res.ExitCode
		d.ExitCode = &code
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
	if code != "" {
		return Out[BashDetails]{}, &Failure{Code: code, Message: status, Text: b.String(), Details: d}
	}
	return Out[BashDetails]{Text: b.String(), Details: d}, nil
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
// writes the BASH_ENV script, BashEnvScript, and returns its path; called
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

// bashPathVar carries the command's PATH to BashEnvScript; bashLevelVar
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

// BashEnvScript runs in bash -lc after the profile files (bash reads
// BASH_ENV then, for a non-interactive shell): the PATH hostcore gave the
// command comes first again, followed by what the profile files added,
// without repeats and without empty entries (an empty one would be the
// workspace); then it unsets BASH_ENV and its variables, so that the
// command and the scripts it runs see none of them, and leaves the start
// mark (shellenv.StartedScript): a command that timed out without it
// never started, its profile did not finish. It says nothing: a
// profile's `set -x` is off while it runs, a read-only PATH is left as it
// is, `set -u` finds every variable set.
const BashEnvScript = `# Written by hostcore: bash -lc runs it through BASH_ENV, after the profile files, before each Bash command.
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
` + shellenv.StartedScript + `if [ -n "$__hostcore_x" ]; then unset __hostcore_x; set -x; else unset __hostcore_x; fi
`

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

func errOrNotDir(err error) error {
	if err != nil {
		return err
	}
	return errors.New("not a directory")
}

// AbortedMessage says why a call was aborted: its context's cause.
func AbortedMessage(ctx context.Context) string {
	why := "cancelled"
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		why = cause.Error()
	}
	return "the tool call was aborted (" + why + ")"
}
