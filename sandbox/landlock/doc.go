// Package landlock confines the commands hostcore runs with Landlock, the
// Linux security module an unprivileged process uses to restrict itself
// and everything it starts.
//
// # What a command may do
//
// A sandboxed command reads the whole disk except the sensitive paths
// (Policy.Deny, by default Sensitive: ssh keys, cloud, browser and
// package-manager credentials, the host's keys and password hashes),
// and writes only in its roots: in workspace-write mode the workspace, the
// session's scratch, the temp dirs (/tmp, $TMPDIR, /dev/shm), the user's
// cache dir ($XDG_CACHE_HOME or ~/.cache, so builds keep their caches)
// and the dirs a setting names; in read-only mode the scratch only, with
// the command's TMPDIR (and TMP, TEMP) pointed at a dir inside it
// (Policy.PrivateTmp, CommandEnv). The shared temp dirs stay closed to
// writes in read-only mode: a workspace under /tmp would be written
// through them, and so would whatever other programs keep there; tools
// that honour TMPDIR keep working, one that writes a fixed /tmp path
// fails. /dev is closed but for the null, zero and random devices,
// /dev/tty and the command's own terminal (Policy.Terminal): a block
// device would hand root the disk, denied paths and all, and the user's
// other terminals in /dev/pts would take keystrokes typed by the command
// (TIOCSTI) into a shell outside the sandbox.
// A write never makes a device node, for the same reason. The network is
// left alone.
//
// The kernel checks the file a command reaches, not the words that named
// it, so no spelling gets around a denied path: `d=.ssh; cat ~/$d/id_rsa`,
// a path built by printf, a symbolic link in the workspace,
// /proc/self/root/..., a hard link or a copy all meet the same refusal.
//
// # Carving denied paths out of an allow-list
//
// Landlock only grants: a rule on a directory opens everything beneath
// it, and nothing closes a subtree again. So a grant whose tree holds a
// denied path is not made on that tree but on each of its entries except
// the denied one, recursively down to the denied path (see makePlan): to
// keep ~/.ssh closed, / is granted as /usr, /etc, /home ... one rule each,
// /home as its users' homes, and the home as each of its entries but .ssh.
// The directories on the way (/, /home, ~, ~/.config) are therefore
// entered and their entries opened by name, but not listed, unless
// Policy.ListAll trades the names inside denied directories for listings
// everywhere. Symbolic links get no rule (the kernel checks their
// target), nor do sockets and fifos. Entries created after the command
// started are closed to it until the next command.
//
// A denied path that does not exist yet is carved the same way: its
// nearest existing ancestor is granted entry by entry, never whole (a
// missing ~/.aws carves ~, a missing ~/.config/gcloud carves ~/.config,
// a dangling link the place its target would be), so a credentials file
// a login writes while a command runs is closed to that command, as is
// any other entry made there meanwhile; the next command plans again
// (see Cache) and reads the new entries but the denied one. A directory
// above denied paths not made yet only is still listed (ls ~ in a home
// without credentials): a listing grant opens names, never a file, so a
// denied directory made later shows its names to a running command and
// nothing more. A denied path
// that the file permissions already close to the user for good (another
// user's file, the user not root: /etc/shadow for an ordinary user), or
// whose nearest existing ancestor they close so, is not carved out. The
// price is rules: for an ordinary user, a missing host key
// (/etc/ssh/ssh_host_dsa_key) carves /etc, a hundred or more.
//
// A home with a huge number of entries would cost a rule each, each an
// open and a system call at every command. The enumeration is bounded
// (maxDirEntries a directory, maxRules in all): past the bound the
// directory's entries stay closed, with a note saying so (Ruleset.Notes);
// the roots granted by name beneath it (a workspace in the home, the
// cache) stay open. The sandbox fails closed, never open.
//
// # Nothing inside reaches hostcore
//
// A sandboxed process cannot ptrace, nor open the /proc descriptors,
// memory or environment of, a process outside its sandbox: Landlock
// refuses the access checks (ptrace_may_access) from a domain to a
// process that is not inside it. So /proc is readable as a whole (ps, top
// and a process's own /proc/self work) while /proc/<hostcore>/fd/0 and
// pidfd_getfd on hostcore are refused. The numbers of hostcore's
// descriptors can be listed, not opened or read as links. Root's commands
// keep one thing the kernel grants CAP_PERFMON whatever the security
// modules say: the environ and maps of any process. With ABI 6 and later
// the sandbox is also scoped: a command can neither signal a process
// outside it nor connect to its abstract unix sockets. Connecting to a
// named unix socket (ssh-agent, the Docker socket) stays possible: the
// ABIs up to 7 do not control it.
//
// # Applying it
//
// Go runs no code between fork and exec, so a child cannot restrict
// itself after the fork. Ruleset.Fork is for the process that forks the
// command (the reaper): the ruleset is enforced on a thread of its own,
// which then forks; the child inherits that thread's domain and
// no_new_privs, and the thread is thrown away with its goroutine. It is
// never the main thread, which stands for the whole process in /proc and
// for signals.
//
// The ruleset is built from the disk as it is when the
// command starts: by Prepare, or by a Cache, which keeps the last
// policy's ruleset with the state of every path its plan read (the
// listed directories, the roots and the denied paths and the
// directories above them) and plans again as soon as one differs. A
// plan is kept only when two plans made around a look at those paths
// agree, and none of its directories changed within racyWindow of it,
// since a file system stamps modification times at a clock tick and a
// second change in the same tick keeps the time; a time in whole seconds
// (a file system with one- or two-second stamps) is trusted only after
// coarseWindow. The ruleset is made in
// hostcore and its descriptor handed to the reaper (Handoff, Adopt).
//
// # Never a silent downgrade
//
// Available asks the kernel for its Landlock ABI (landlock_create_ruleset
// with LANDLOCK_CREATE_RULESET_VERSION, no securityfs needed) and
// restricts a throwaway thread to prove the calls are allowed here. The
// sandbox needs ABI 3 (Linux 6.2), the first to control truncation;
// scoping needs ABI 6 (Linux 6.12), and Available says so when it is
// missing. Prepare and Fork enforce exactly the rights of the
// kernel's ABI or fail: the caller then runs nothing, or runs the command
// unsandboxed and says so ("sandbox": "none" with the reason). On other
// systems than Linux every entry point fails with the reason.
//
// # What stays open
//
// Bind mounts that show a denied directory at a second place, and hard
// links to a denied file made before the command, are reached by their
// other names. The writable cache dir is trusted by the user's later
// builds (GOCACHE): what a command writes there can reach a build run
// outside the sandbox. Package caches outside ~/.cache (~/.npm, the Go
// module cache ~/go/pkg/mod, ~/.cargo/registry) are read, not written,
// unless a setting names them: downloads into them are refused. /proc is
// read-only, and devices other than those above (GPUs) are closed.
package landlock
