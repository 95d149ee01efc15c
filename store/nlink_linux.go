package store

import "golang.org/x/sys/unix"

// unlinked says whether the file open as fd has no name left. It asks
// statx for the link count only: an fstat, which asks for the times too,
// makes the kernel (multigrain timestamps, Linux 6.13 on) give the
// file's next write a fine-grained time and so dirty its inode, which
// made the journal's next append 1.3-1.7 µs slower here.
func unlinked(fd int) bool {
	var st unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_NLINK, &st)
	if err == unix.ENOSYS {
		var fst unix.Stat_t
		return unix.Fstat(fd, &fst) == nil && fst.Nlink == 0
	}
	return err == nil && st.Mask&unix.STATX_NLINK != 0 && st.Nlink == 0
}
