package process

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// commandCgroup is a cgroup v2 of one command, where one can be had (a
// cgroup2 hierarchy mounted, and the right to make a child of hostcore's
// own cgroup: root, or a cgroup delegated to the user). The shell is born
// in it (clone3 CLONE_INTO_CGROUP) and so is everything it starts,
// whatever session, group or parent it moves to: cgroup.kill ends them
// all at once, forks in flight included. Without it the tree is what the
// scans of /proc find, which a process that calls setsid on every fork
// can outrun (a review's ulimit-bounded fork bomb outlived cancel,
// timeout and hostcore's exit).
type commandCgroup struct {
	dir string
	fd  int
}

// cgroupPrefix starts the name of every command cgroup: hostcore-<mark>.
const cgroupPrefix = "hostcore-"

// newCommandCgroup makes the cgroup of the run marked mark; nil where
// none can be had (cgroup.kill needs Linux 5.14).
func newCommandCgroup(mark string) *commandCgroup {
	dir := cgroupDirFor(mark)
	if dir == "" || os.Mkdir(dir, 0o755) != nil {
		return nil
	}
	cg := &commandCgroup{dir: dir, fd: -1}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		cg.remove()
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil
	}
	cg.fd = fd
	return cg
}

// attach makes attr start its process in the cgroup.
func (cg *commandCgroup) attach(attr *syscall.SysProcAttr) {
	if cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, cg.fd
	}
}

// detach undoes attach.
func (cg *commandCgroup) detach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD, attr.CgroupFD = false, 0
}

// pids lists the processes in the cgroup now.
func (cg *commandCgroup) pids() []int {
	if cg == nil {
		return nil
	}
	return readPids(filepath.Join(cg.dir, "cgroup.procs"))
}

// signal sends sig to pid if it is (still) in the cgroup: through a
// pidfd taken before the check, so that a pid reused since cgroup.procs
// was read is never signalled.
func (cg *commandCgroup) signal(pid int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil || !strings.Contains(string(data), "/"+filepath.Base(cg.dir)+"\n") {
		return
	}
	unix.PidfdSendSignal(fd, sig, nil, 0)
}

// kill sends SIGKILL to every process in the cgroup.
func (cg *commandCgroup) kill() {
	if cg != nil {
		killCgroupDir(cg.dir)
	}
}

// remove deletes the cgroup once it is empty (its last processes may
// still be exiting: a few tries).
func (cg *commandCgroup) remove() {
	if cg == nil {
		return
	}
	if cg.fd >= 0 {
		syscall.Close(cg.fd)
		cg.fd = -1
	}
	removeCgroupDir(cg.dir)
}

// killCgroupOf kills and removes the cgroup of the run marked mark, if
// there is one: hostcore's fallback when the reaper died without doing it
// (the reaper shares hostcore's cgroup, under which it made this one).
func killCgroupOf(mark string) {
	dir := cgroupDirFor(mark)
	if dir == "" {
		return
	}
	if _, err := os.Stat(dir); err != nil {
		return
	}
	killCgroupDir(dir)
	removeCgroupDir(dir)
}

func killCgroupDir(dir string) {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
}

func removeCgroupDir(dir string) {
	for i := 0; i < 50; i++ {
		if err := syscall.Rmdir(dir); err == nil || err == syscall.ENOENT {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// cgroupDirFor names the cgroup of the run marked mark, below this
// process's own cgroup v2; "" when no cgroup2 hierarchy is mounted or the
// mark cannot be a name.
func cgroupDirFor(mark string) string {
	base := cgroupBase()
	if base == "" || mark == "" || strings.ContainsAny(mark, "/\x00") || mark == "." || mark == ".." {
		return ""
	}
	return filepath.Join(base, cgroupPrefix+mark)
}

// cgroupBase is this process's own cgroup v2 directory, "" without one.
// It does not change while the process runs: read once (Run asks after
// every command).
var cgroupBase = sync.OnceValue(func() string {
	mnt, root := cgroup2Mount()
	own := ownCgroup2()
	if mnt == "" || own == "" {
		return ""
	}
	rel, ok := strings.CutPrefix(own, strings.TrimSuffix(root, "/"))
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) || strings.Contains(rel, "/..") {
		return ""
	}
	return filepath.Join(mnt, rel)
})

// cgroup2Mount is where the cgroup2 hierarchy is mounted, and the cgroup
// path that mount shows at its top.
func cgroup2Mount() (mountPoint, root string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) >= 5 {
			return unescapeMount(fields[4]), unescapeMount(fields[3])
		}
	}
	return "", ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a blank).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup2 is this process's cgroup in the v2 hierarchy ("0::/path").
func ownCgroup2() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return p
		}
	}
	return ""
}

func readPids(path string) []int {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return pids
}
