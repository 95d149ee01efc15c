//go:build unix

package landlock

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedByOwner reports whether the file permissions alone keep this
// user (and so the command, which runs as this user, with no_new_privs
// barring setuid programs) from reading, writing and, for a directory,
// searching p, and this user cannot change them: the file is another
// user's, and this user is not root. /etc/shadow and the host's keys are
// closed to an ordinary user that way; carving them out of / would cost
// a rule for each entry of /etc and gain nothing.
func closedByOwner(p string, fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	uid := os.Geteuid()
	if !ok || uid == 0 || int(st.Uid) == uid {
		return false
	}
	if unix.Access(p, unix.R_OK) == nil || unix.Access(p, unix.W_OK) == nil {
		return false
	}
	return !fi.IsDir() || unix.Access(p, unix.X_OK) != nil
}
