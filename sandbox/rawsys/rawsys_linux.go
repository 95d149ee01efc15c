package rawsys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// errnoErr keeps a zero Errno from becoming a non-nil error.
func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func bufPtr(p []byte) uintptr {
	if len(p) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&p[0]))
}

// Read is read(2).
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), bufPtr(p), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write is write(2).
func Write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), bufPtr(p), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Fstat is fstat(2).
func Fstat(fd int, st *unix.Stat_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errnoErr(e)
}

// Fstatat is fstatat(2).
func Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	return errnoErr(e)
}

// Openat2 is openat2(2).
func Openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// Close is close(2).
func Close(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

// LocalFS says whether fd's file lives on a local disk or memory file
// system, where a call may wait for the disk but never for a server: ext4,
// XFS, Btrfs, F2FS, ZFS, tmpfs, ramfs, overlayfs. Network file systems,
// FUSE, /proc and anything unknown report false.
func LocalFS(fd int) bool {
	var sf unix.Statfs_t
	if unix.Fstatfs(fd, &sf) != nil {
		return false
	}
	switch int64(sf.Type) { //nolint:unconvert // widths differ by platform
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, 0x2fc12fc1 /* zfs */, unix.RAMFS_MAGIC:
		return true
	}
	return false
}
