package sandbox

import "sync/atomic"

// dirSyncFault, when set, runs before every directory sync and fails it
// with what it returns: how tests make a change land without being synced
// (a file system that fails fsync on directories, as some FUSE and
// network ones do).
var dirSyncFault atomic.Pointer[func() error]

// FailDirSyncs makes every directory sync fail with err until restore is
// called. For tests only (of this package and of handlers).
func FailDirSyncs(err error) (restore func()) {
	f := func() error { return err }
	dirSyncFault.Store(&f)
	return func() { dirSyncFault.Store(nil) }
}
