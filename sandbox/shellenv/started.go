package shellenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// StartedVar names the variable that carries a Started mark's path to the
// command's shell. The restore script (and, in login mode, the BASH_ENV
// script that runs after the profile: StartedScript) creates that file
// and unsets the variable, so the command never sees it.
const StartedVar = "HOSTCORE_STARTED"

// StartedScript is the shell text that leaves the mark: appended to a
// script that runs after the profile files and before the command (the
// login mode's BASH_ENV script), it tells a command that timed out
// before it started (a profile that hangs) from one that ran. It prints
// nothing, whatever the shell's options (set -u, -e, noclobber).
const StartedScript = `if [[ -n ${` + StartedVar + `-} ]]; then \builtin : >|"$` + StartedVar + `"; fi 2>/dev/null; \builtin unset ` + StartedVar + "\n"

// Started tells whether a command's shell got past its startup (the login
// profile in login mode, the snapshot's restore in snapshot mode) and
// began running the command. Make one per command, give its Env to the
// command's environment, ask Done once the command has ended (a timeout
// with !Done means the profile did not finish), then Remove it.
type Started struct{ path string }

// NewStarted names a fresh mark in dir (a directory only hostcore
// writes to: the session's scratch or the data dir); the file appears
// only when the shell leaves the mark.
func NewStarted(dir string) (*Started, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("naming the start mark: %w", err)
	}
	if dir == "" {
		return nil, errors.New("naming the start mark: no directory")
	}
	return &Started{path: filepath.Join(dir, ".started-"+hex.EncodeToString(b[:]))}, nil
}

// Env is the variable to add to the command's environment.
func (m *Started) Env() string { return StartedVar + "=" + m.path }

// Done reports whether the shell left the mark: it began the command.
func (m *Started) Done() bool {
	_, err := os.Lstat(m.path)
	return err == nil
}

// Remove deletes the mark's file, if the shell made it.
func (m *Started) Remove() {
	os.Remove(m.path)
}
