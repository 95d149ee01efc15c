package sandbox

import (
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// QuickOpen opens an existing regular file inside the workspace for
// reading in five system calls, where Resolve and OpenRegular take about
// twenty, and reports false whenever it cannot prove the answer would be
// the same, leaving the call to them.
//
// The kernel does the containment, atomically: the workspace is opened
// by its canonical path with RESOLVE_NO_SYMLINKS (so it is still the real
// directory at that path), and the file beneath it with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV: every
// component is a real directory inside the workspace, on its file
// system, and nothing is followed. What the kernel opened is therefore
// exactly the lexical path, inside the workspace and canonical, the
// answer Resolve gives for it. A link anywhere on the way, a ".." that
// climbs out, a mount point, a missing file, anything but a regular file,
// or a kernel without openat2 (before Linux 5.6) all report false.
//
// The path is cleaned first, as Resolve cleans it (filepath.Join).
func (r Roots) QuickOpen(p string) (*File, Resolved, fs.FileInfo, bool) {
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
	if quickUnsupported.Load() {
		return nil, Resolved{}, nil, false
	}
	wfd, err := unix.Openat2(unix.AT_FDCWD, r.Workspace, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		if err == unix.ENOSYS {
			quickUnsupported.Store(true)
		}
		return nil, Resolved{}, nil, false
	}
	defer unix.Close(wfd)
	fd, err := unix.Openat2(wfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	})
	if err != nil {
		return nil, Resolved{}, nil, false
	}
	var st, wst unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || unix.Fstat(wfd, &wst) != nil {
		unix.Close(fd)
		return nil, Resolved{}, nil, false
	}
	res := Resolved{
		Path: p, Root: RootWorkspace, Abs: filepath.Join(r.Workspace, rel), Display: filepath.ToSlash(rel),
		Base: r.Workspace, Name: rel, Exists: true,
		Ident:     FileIdent{Dev: uint64(st.Dev), Ino: st.Ino, OfTarget: true}, //nolint:unconvert // widths differ by platform
		BaseIdent: FileIdent{Dev: uint64(wst.Dev), Ino: wst.Ino},               //nolint:unconvert
	}
	fi := &statInfo{name: filepath.Base(rel), st: st}
	return &File{fd: fd, opened: time.Now()}, res, fi, true
}

// quickUnsupported: the kernel has no openat2; QuickOpen stops trying.
var quickUnsupported atomic.Bool

// LocalFS reports whether dir is on a local disk or memory file system,
// where a read cannot hang on a server: only there may a caller read on a
// goroutine that must not wait (see handlers' quick Reads).
func LocalFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch uint32(st.Type) { //nolint:unconvert // the field's type differs by architecture
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
