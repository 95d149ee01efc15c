package shellenv

import "fmt"

// Mode is how the Bash tool gives commands the login profile's
// environment: the setting's values.
type Mode string

const (
	// ModeSnapshot runs each command as `bash -c` with a snapshot of the
	// login shell restored (Take, Cache): the profile runs once, not per
	// command. The default.
	ModeSnapshot Mode = "snapshot"
	// ModeLogin runs each command as `bash -lc`: the profile runs every
	// time. The fallback when no snapshot can be taken.
	ModeLogin Mode = "login"
)

// ParseMode reads a setting's value; "" is the default, ModeSnapshot.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeSnapshot:
		return ModeSnapshot, nil
	case ModeLogin:
		return ModeLogin, nil
	}
	return "", fmt.Errorf("shell environment mode %q is not %q or %q", s, ModeSnapshot, ModeLogin)
}
