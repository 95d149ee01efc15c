// Package sandbox decides where a tool's path lands (the session's
// workspace, its scratch directory, or outside both) and performs the file
// tools' operations so that they cannot leave the directory that was
// checked. Processes live in the subpackage process.
//
// # Resolution
//
// A path is inside a root only when two checks agree: the lexical one (the
// path cleaned, ".." folded, compared to the root or read beneath an alias
// of it, a directory whose canonical form is the root) and the canonical
// one (the longest existing prefix walked component by component with
// links resolved, then compared again). The alias keeps a session created
// on /tmp/wslink (a link to /tmp/ws), or on macOS's /tmp, in its
// workspace under the name the user gave; a link inside the root that
// leads out still fails the canonical check. Roots are canonical too, and a path is
// compared with a root by whole components, never by a bare string prefix
// (/ws is not a prefix owner of /ws_evil). Everything else is
// RootExternal, which is not an error: the caller runs the outside-path
// permission flow and calls Recheck after the approval, which must find
// the same canonical path under the same directory.
//
// # Operations through descriptors
//
// A check on strings can be undone by a link swapped in a moment later.
// So every operation opens its base directory (or the target's parent) as
// an os.Root, proves it is the directory at the canonical path (no link on
// the way, the same device and inode), and then acts on one name inside
// it: whatever is swapped in below afterwards, the kernel cannot be made to
// leave it. A session's workspace and scratch stay open between
// operations (bases): one held is used only while it is still linked, is
// the directory Resolve found at its path, and is what that path leads to
// now, so a workspace removed and made again (even with its old inode
// number) or renamed away is never written through the old descriptor.
// Directories are opened without blocking, so a FIFO swapped in
// for a directory cannot hang a call; regular files are opened with
// O_NONBLOCK and their type checked before and after the open, and a file
// whose reads wait for events (/proc/kmsg) fails instead of hanging,
// because a blocked read cannot be interrupted.
//
// # Writes
//
// Write and Edit replace a file rather than write through it: the new
// content goes to an unnamed file in the target's directory (O_TMPFILE),
// is fsynced, linked under a hidden temporary name and renamed over the
// target, and the directory is fsynced. The target is always one whole
// version, a crash while the data is written leaves nothing, and a hard
// link to an outside file keeps its content. A directory fsync that fails
// after the rename is reported as a warning, not a failure: the change
// stands and can still be rolled back.
package sandbox
