package landlock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minABI is the oldest Landlock ABI the sandbox runs on: ABI 3 (Linux
// 6.2) is the first to control truncate(2), without which a command could
// empty any file it can read.
const minABI = 3

// scopeABI is the first ABI with scoping (Linux 6.12): a command can then
// neither signal processes outside its sandbox nor connect to their
// abstract unix sockets.
const scopeABI = 6

var available = sync.OnceValues(probe)

// Available reports the Landlock ABI the sandbox uses on this machine, or
// 0 with the reason it cannot run (the kernel has no Landlock, it is off,
// it is too old, this process may not use it). With an ABI below 6 the
// sandbox runs and reason says what it lacks. It asks the kernel itself
// (landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION), which
// works without securityfs, and then restricts a throwaway thread, which
// proves that a seccomp filter or a container does not refuse the calls.
// The answer is computed once.
func Available() (abi int, reason string) { return available() }

func probe() (int, string) {
	abi, err := kernelABI()
	if err != nil {
		return 0, err.Error()
	}
	rs, err := newRuleset(abi, nil)
	if err != nil {
		return 0, err.Error()
	}
	defer rs.Close()
	if err := onSpareThread(rs.restrictThread); err != nil {
		return 0, err.Error()
	}
	if abi < scopeABI {
		return abi, fmt.Sprintf("Landlock ABI %d: a sandboxed command can still signal processes outside its sandbox and reach their abstract unix sockets (scoping needs ABI %d, Linux 6.12)", abi, scopeABI)
	}
	return abi, ""
}

// kernelABI is the kernel's Landlock ABI, capped at the newest this
// package knows (7), or why there is none to use.
func kernelABI() (int, error) {
	abi, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return 0, errors.New("the kernel has no Landlock (built without CONFIG_SECURITY_LANDLOCK)")
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, errors.New("this kernel has Landlock disabled (it is not in the lsm= boot parameter)")
	case err != nil:
		return 0, fmt.Errorf("asking the kernel for Landlock: %w", err)
	case abi < minABI:
		return 0, fmt.Errorf("the kernel's Landlock ABI %d cannot stop truncation (the sandbox needs ABI %d, Linux 6.2)", abi, minABI)
	}
	return min(abi, 7), nil
}

// configs are the access rights handled at each ABI: every file system
// right the ABI has (all of them restricted, then granted back by rule)
// and its scopes. Network rights are not handled: commands keep the
// network.
var configs = map[int]golandlock.Config{3: golandlock.V3, 4: golandlock.V4, 5: golandlock.V5, 6: golandlock.V6, 7: golandlock.V7}

// Ruleset is a policy made into a kernel Landlock ruleset, ready to be
// enforced on the command (Fork) or on this process before an exec (Exec).
type Ruleset struct {
	fd      int
	flags   uint32
	handled uint64
	notes   []string
}

// Prepare resolves p against the disk as it is now and builds its kernel
// ruleset. It fails, rather than build a weaker one, when Landlock is
// missing or a rule cannot be added: the caller then runs nothing, or
// says the command runs unsandboxed ("sandbox": "none" and the reason).
func Prepare(p Policy) (*Ruleset, error) {
	rs, _, err := prepare(p)
	return rs, err
}

// prepare is Prepare, with the plan the ruleset was made from.
func prepare(p Policy) (*Ruleset, plan, error) {
	abi, err := kernelABI()
	if err != nil {
		return nil, plan{}, err
	}
	pl, err := makePlan(p)
	if err != nil {
		return nil, plan{}, err
	}
	rs, err := newRuleset(abi, pl.Rules)
	if err != nil {
		return nil, plan{}, err
	}
	rs.notes = pl.Notes
	return rs, pl, nil
}

func newRuleset(abi int, rules []rule) (*Ruleset, error) {
	base := configs[abi]
	cfg := golandlock.Config{HandledAccessFS: base.HandledAccessFS, Scoped: base.Scoped}
	fd, flags, err := cfg.NewRulesetFD()
	if err != nil {
		return nil, fmt.Errorf("creating the Landlock ruleset: %w", err)
	}
	rs := &Ruleset{fd: fd, flags: flags, handled: uint64(cfg.HandledAccessFS)}
	for _, r := range rules {
		if err := rs.add(r); err != nil {
			rs.Close()
			return nil, err
		}
	}
	return rs, nil
}

// add adds one rule. The path is opened without following a final
// symbolic link (the plan resolved them; one put there since is not
// followed). A path gone since the plan is left out: nothing to grant.
func (rs *Ruleset) add(r rule) error {
	flags := unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW
	if r.Dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Open(r.Path, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox rule for %s: %w", r.Path, err)
	}
	defer unix.Close(fd)
	allowed := rights(r.Access, r.Dir) & rs.handled
	if allowed == 0 {
		return nil
	}
	attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: allowed}
	if err := ll.LandlockAddPathBeneathRule(rs.fd, &attr, 0); err != nil {
		return fmt.Errorf("sandbox rule for %s (%v): %w", r.Path, r.Access, err)
	}
	return nil
}

// rights are the kernel's bits for an access on a directory or a file
// (a rule on a file takes only file rights). Write never includes making
// device nodes: a device node made in the workspace would open the disk.
func rights(a access, dir bool) uint64 {
	var r uint64
	if a&accRead != 0 {
		r |= ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	}
	if a&accWrite != 0 {
		r |= ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
			ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
			ll.AccessFSMakeSym | ll.AccessFSRefer
	}
	if a&accList != 0 {
		r |= ll.AccessFSReadDir
	}
	if a&accIoctl != 0 {
		r |= ll.AccessFSIoctlDev
	}
	if !dir {
		r &= ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	}
	return r
}

// Handoff is what another process needs to enforce the ruleset: its
// descriptor, to pass over a unix socket (the reaper gets the ruleset
// hostcore prepared, see Cache), and the flags to enforce it with.
func (rs *Ruleset) Handoff() (fd int, flags uint32) { return rs.fd, rs.flags }

// Adopt makes a ruleset of a descriptor received from Handoff; the
// Ruleset owns it. It refuses a descriptor that is no Landlock ruleset,
// so that nothing is started unconfined on a mixed-up descriptor.
func Adopt(fd int, flags uint32) (*Ruleset, error) {
	if link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err != nil || link != "anon_inode:[landlock-ruleset]" {
		unix.Close(fd)
		return nil, fmt.Errorf("descriptor %d (%s) is not a Landlock ruleset", fd, link)
	}
	unix.CloseOnExec(fd)
	return &Ruleset{fd: fd, flags: flags}, nil
}

// Notes says what the ruleset had to leave closed that the policy would
// have opened (a directory too big to enumerate): nil when nothing.
func (rs *Ruleset) Notes() []string { return rs.notes }

// Close releases the ruleset. Processes it was enforced on keep it.
func (rs *Ruleset) Close() error {
	if rs.fd < 0 {
		return nil
	}
	err := unix.Close(rs.fd)
	rs.fd = -1
	return err
}

// restrictThread enforces the ruleset on the calling thread, which the
// caller has locked and never unlocks. no_new_privs comes first: the
// kernel requires it of an unprivileged caller, and a setuid program
// could otherwise shed the sandbox.
func (rs *Ruleset) restrictThread() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(rs.fd, rs.flags); err != nil {
		return fmt.Errorf("enforcing the Landlock ruleset: %w", err)
	}
	return nil
}

// Fork calls fork (a syscall.ForkExec of the command, possibly wrapped)
// on a thread of its own that is first restricted by the ruleset: a
// child inherits the Landlock domain and no_new_privs of the thread that
// forks it, and so does everything it starts. The thread is never given
// back to the Go runtime: it ends with Fork's goroutine, and the rest of
// the process stays unrestricted. (Go runs no code of ours between fork
// and exec, so the restriction cannot be applied in the child.) fork must
// not hand the work to another goroutine.
func (rs *Ruleset) Fork(fork func() (int, error)) (int, error) {
	var pid int
	err := onSpareThread(func() error {
		if err := rs.restrictThread(); err != nil {
			return err
		}
		var err error
		pid, err = fork()
		return err
	})
	return pid, err
}

// onSpareThread runs f on a thread locked to a goroutine of its own and
// never given back: the Go runtime ends the thread with the goroutine, so
// whatever f did to it (a Landlock domain, no_new_privs) leaves with it.
// The main thread is never used: it cannot end (the runtime parks it for
// good instead), and the process's /proc entry and signals answer to it,
// so a restricted main thread would put the whole process in the
// command's domain, open to it. A goroutine that lands on the main thread
// keeps it while another goroutine, which then cannot land there, runs f.
func onSpareThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			err := onSpareThread(f)
			runtime.UnlockOSThread()
			done <- err
			return
		}
		done <- f() // the thread stays locked: it ends with this goroutine
	}()
	return <-done
}
