package sandbox

import (
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// QuickDir is a session's workspace held open for QuickOpen. The
// directory is opened by its canonical path without following links
// (RESOLVE_NO_SYMLINKS: it is still the real directory at that path) and
// checked to be on a local disk or memory file system (localFSType), and that
// answer is kept for quickDirTTL: within it, a file is opened beneath the
// directory as found then, even if the path were swapped since, so no
// swap can widen what is read, only keep it to the tree the session was
// bound to. The zero value is ready; Close lets go of the directory.
type QuickDir struct {
	mu      sync.Mutex
	path    string
	fd      int // -1 or 0 when not open (0 is never ours: stdin)
	local   bool
	checked time.Time
	dev     uint64
	ino     uint64
	// expiry closes the directory once it is quickDirTTL old: held open,
	// it would keep its file system from being unmounted (a project on a
	// USB disk) and a deleted workspace pinned.
	expiry *time.Timer
}

// quickDirTTL is how long QuickDir trusts what it found at the workspace
// path.
const quickDirTTL = time.Second

// Close closes the directory.
func (d *QuickDir) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drop()
}

// expire closes the directory if it has been held for quickDirTTL.
func (d *QuickDir) expire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd > 0 && time.Since(d.checked) >= quickDirTTL {
		d.drop()
	}
}

func (d *QuickDir) drop() {
	if d.fd > 0 {
		unix.Close(d.fd)
	}
	if d.expiry != nil {
		d.expiry.Stop()
	}
	d.fd, d.path = 0, ""
}

// dir returns the workspace's descriptor, opening or checking it again
// when it is older than quickDirTTL or was for another path. d.mu is held.
func (d *QuickDir) dir(workspace string) (int, bool) {
	if d.fd > 0 && d.path == workspace && time.Since(d.checked) < quickDirTTL {
		return d.fd, d.local
	}
	d.drop()
	if quickUnsupported.Load() {
		return 0, false
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, workspace, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		if err == unix.ENOSYS {
			quickUnsupported.Store(true)
		}
		return 0, false
	}
	var st unix.Stat_t
	var sf unix.Statfs_t
	if fd == 0 || unix.Fstat(fd, &st) != nil || unix.Fstatfs(fd, &sf) != nil {
		unix.Close(fd)
		return 0, false
	}
	d.fd, d.path, d.checked = fd, workspace, time.Now()
	d.dev, d.ino, d.local = uint64(st.Dev), st.Ino, localFSType(int64(sf.Type)) //nolint:unconvert // widths differ by platform
	if d.expiry == nil {
		d.expiry = time.AfterFunc(quickDirTTL, d.expire)
	} else {
		d.expiry.Reset(quickDirTTL)
	}
	return d.fd, d.local
}

// QuickOpen opens an existing regular file inside the workspace for
// reading in four system calls (the O_PATH descriptor it looks through is
// closed with the file), where Resolve and OpenRegular take about twenty,
// and reports false whenever it cannot prove the answer would be the
// same, leaving the call to them. d holds the workspace directory
// (see QuickDir); a workspace not on a local file system reports false,
// so nothing here can wait on a server.
//
// The kernel does the containment, atomically: the file is opened
// beneath the workspace directory with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV: every
// component is a real directory inside the workspace, on its file
// system, and nothing is followed. What the kernel opened is therefore
// exactly the lexical path, inside the workspace and canonical, the
// answer Resolve gives for it. A link anywhere on the way, a ".." that
// climbs out, a mount point, a missing file, anything but a regular file,
// or a kernel without openat2 (before Linux 5.6) all report false.
//
// The path is cleaned first, as Resolve cleans it (filepath.Join).
func (r Roots) QuickOpen(d *QuickDir, p string) (*File, Resolved, fs.FileInfo, bool) {
	if r.Workspace == "" || p == "" || len(p) > maxPathLen || strings.IndexByte(p, 0) >= 0 ||
		strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
		// A name only a directory can have ("a.txt/") is cleaned away
		// below; such a path is never a file's.
		return nil, Resolved{}, nil, false
	}
	rel := p
	if filepath.IsAbs(p) {
		var ok bool
		if rel, ok = strings.CutPrefix(filepath.Clean(p), r.Workspace+"/"); !ok {
			return nil, Resolved{}, nil, false
		}
	}
	rel = filepath.Clean(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, Resolved{}, nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	wfd, local := d.dir(r.Workspace)
	if wfd <= 0 || !local {
		return nil, Resolved{}, nil, false
	}
	// Nothing but a regular file is opened, as OpenRegular opens nothing
	// else: opening a FIFO releases its writer, opening a device runs its
	// driver. The type is looked at first, through an O_PATH descriptor
	// (which opens nothing) resolved as the open below is: a stat by path
	// (fstatat) would walk into a file system mounted inside the
	// workspace, and one whose server never answers (FUSE, NFS) would
	// hold the read goroutine, and with it every later request, for good.
	// The file opened must then be the one looked at.
	const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV
	var pre, st unix.Stat_t
	pfd, err := unix.Openat2(wfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return nil, Resolved{}, nil, false
	}
	if unix.Fstat(pfd, &pre) != nil || pre.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(pfd)
		return nil, Resolved{}, nil, false
	}
	fd, err := unix.Openat2(wfd, rel, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		unix.Close(pfd)
		return nil, Resolved{}, nil, false
	}
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != pre.Dev || st.Ino != pre.Ino {
		unix.Close(fd)
		unix.Close(pfd)
		return nil, Resolved{}, nil, false
	}
	res := Resolved{
		Path: p, Root: RootWorkspace, Abs: filepath.Join(r.Workspace, rel), Display: filepath.ToSlash(rel),
		Base: r.Workspace, Name: rel, Exists: true,
		Ident:     FileIdent{Dev: uint64(st.Dev), Ino: st.Ino, OfTarget: true}, //nolint:unconvert // widths differ by platform
		BaseIdent: FileIdent{Dev: d.dev, Ino: d.ino},
	}
	fi := &statInfo{name: filepath.Base(rel), st: st}
	return &File{fd: fd, pathFd: pfd, left: st.Size, opened: time.Now()}, res, fi, true
}

// quickUnsupported: the kernel has no openat2; QuickOpen stops trying.
var quickUnsupported atomic.Bool

// localFSType says whether a statfs type is that of a local disk or
// memory file system, where a read cannot hang on a server.
func localFSType(t int64) bool {
	switch t {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, 0x2fc12fc1 /* zfs */, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// statInfo is an fs.FileInfo from fstat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string { return s.name }
func (s *statInfo) Size() int64  { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (s *statInfo) Sys() any {
	return &syscall.Stat_t{Dev: s.st.Dev, Ino: s.st.Ino, Mode: s.st.Mode, Size: s.st.Size}
}

// readFd reads like os.File.Read: 0 bytes at the end is io.EOF.
func readFd(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: "file", Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func closeFd(fd int) error { return unix.Close(fd) }
