package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Shell is one entry of the command-shell catalog (design §5, D190). ID and
// Dialect are the stable identity a turn pins; Path is where it was found.
type Shell struct {
	ID, Dialect, Path string
	Available         bool
}

// ErrShellNotFound means no usable bash was found; its text tells the user
// how to install one.
var ErrShellNotFound = errors.New("bash not found: install bash (macOS: `brew install bash` or use /bin/bash; Linux: your package manager, e.g. `apt install bash`), or set PI_DESKTOP_BASH to the path of a bash executable")

// bashCandidates are the well-known places tried before PATH.
var bashCandidates = []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"}

// Catalog lists every catalog ID in a stable order. Only "bash" can be
// available on Linux and macOS; the Windows shells are listed unavailable so
// that a persisted Windows choice is recognised as a wrong-platform ID.
func Catalog() []Shell {
	bash := Shell{ID: "bash", Dialect: "bash"}
	if runtime.GOOS != "windows" {
		if p, err := ResolveBash(); err == nil {
			bash.Path, bash.Available = p, true
		}
	}
	return []Shell{
		{ID: "windows-powershell", Dialect: "powershell"},
		{ID: "cmd", Dialect: "cmd"},
		{ID: "git-bash", Dialect: "bash"},
		bash,
	}
}

// ResolveBash finds the bash to run commands with: the PI_DESKTOP_BASH
// override, then the well-known locations, then PATH. An override that does
// not name an executable is an error rather than silently ignored, so that a
// user who configured one learns it is broken.
func ResolveBash() (string, error) {
	if p := os.Getenv("PI_DESKTOP_BASH"); p != "" {
		// Relative, it would be checked from hostcore's directory and run
		// from the workspace's (the command's cwd): another file.
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("PI_DESKTOP_BASH=%q is not an absolute path: %w", p, ErrShellNotFound)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("PI_DESKTOP_BASH=%q is not an executable file: %w", p, ErrShellNotFound)
	}
	for _, p := range bashCandidates {
		if isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p, nil
	}
	return "", ErrShellNotFound
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// loginPathTimeout bounds the login-shell probe: a slow or interactive rc
// file must not delay every command.
const loginPathTimeout = 5 * time.Second

var loginPath = sync.OnceValue(func() string { return probeLoginPath(loginShell(), loginPathTimeout) })

// LoginPath returns the PATH the user's login shell sets up (nvm, pnpm,
// Homebrew initialised in ~/.zshrc or ~/.zprofile, invisible to `bash -lc`),
// probed once per process. It is best-effort: "" when the shell is missing,
// fails or exceeds 5 s (its process tree is then killed like any command's).
func LoginPath() string { return loginPath() }

// loginShell is $SHELL, else the first of zsh, bash, sh that exists.
func loginShell() string {
	if sh := os.Getenv("SHELL"); sh != "" && isExecutable(sh) {
		return sh
	}
	for _, sh := range []string{"/bin/zsh", "/bin/bash", "/bin/sh"} {
		if isExecutable(sh) {
			return sh
		}
	}
	return ""
}

func probeLoginPath(shell string, timeout time.Duration) string {
	return ProbeLoginPath(context.Background(), shell, nil, timeout)
}

// ProbeLoginPath is probeLoginPath with its context and environment (nil:
// hostcore's), for a caller that probes on its own schedule (the shell
// snapshot).
func ProbeLoginPath(ctx context.Context, shell string, env []string, timeout time.Duration) string {
	if shell == "" {
		return ""
	}
	res, err := Run(ctx, Spec{
		Path:    shell,
		Args:    []string{"-lic", `printf %s "$PATH"`},
		Env:     env,
		Timeout: timeout,
		Grace:   500 * time.Millisecond,
	})
	if err != nil || res.ExitCode != 0 || res.TimedOut || res.Aborted || res.Stdout.Truncated {
		return ""
	}
	// rc files may print banners before our printf; PATH itself has no newline.
	out := res.Stdout.Head
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if !strings.Contains(out, "/") {
		return ""
	}
	return out
}
