package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

var (
	// ErrIsDir is a directory where a file was expected; Read answers it with
	// INVALID_ARGUMENT and a Glob suggestion (design §4).
	ErrIsDir = errors.New("is a directory")
	// ErrNotRegular is a FIFO, socket, device or (for Remove) symlink where a
	// regular file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotExist is a missing target; errors.Is(err, fs.ErrNotExist) holds.
	ErrNotExist = fmt.Errorf("file does not exist: %w", fs.ErrNotExist)
	// ErrTooLarge is a file bigger than the caller's limit.
	ErrTooLarge = errors.New("file too large")
)

// ErrNotPorted answers every file operation where containment is not
// ported yet (Windows; see sys_windows.go): it rests on directory
// descriptors held open and on device and inode numbers. Failing is the
// safe answer; a file tool that read or wrote without those checks could
// be led outside the workspace.
var ErrNotPorted = errors.New("file operations are not supported on this platform yet")

// openBase opens res.Base as an os.Root and checks it is still the directory
// Resolve saw. Every operation goes through the returned root, so whatever is
// swapped in below Base afterwards, the kernel cannot be made to leave it.
// A workspace or scratch base comes held open from bases.
func openBase(res Resolved) (dirRoot, error) {
	if res.Base == "" || !filepath.IsAbs(res.Base) || !validName(res.Name) {
		return dirRoot{}, fmt.Errorf("%w: unresolved target %q", ErrInvalidPath, res.Path)
	}
	if res.BaseIdent != (FileIdent{}) && res.Root != RootExternal {
		return bases.take(res.Base, res.BaseIdent)
	}
	root, err := openChecked(res.Base, res.BaseIdent)
	return dirRoot{Root: root}, err
}

// openChecked opens dir as an os.Root and checks that it is the directory
// Resolve saw there (ident; not checked when unknown).
func openChecked(dir string, ident FileIdent) (*os.Root, error) {
	root, err := openDirRoot(nil, dir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	if ident == (FileIdent{}) {
		return root, nil
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	if identOf(fi) != ident {
		root.Close()
		return nil, fmt.Errorf("%w: directory %s was replaced", ErrChanged, dir)
	}
	return root, nil
}

// openParent opens the target's parent directory as a root of its own and
// returns it with the target's last component. When create is set, missing
// parents are made first. The directory held open is proven to be the real
// directory at its canonical path (no symlink anywhere on it, the same
// device and inode), so a symlink planted in a missing component, or a
// directory swapped after the approval was checked, cannot redirect the
// operation: everything after this happens to one name in that directory.
func openParent(res Resolved, create bool) (dirRoot, string, error) {
	root, err := openBase(res)
	if err != nil {
		return dirRoot{}, "", err
	}
	dir, base := filepath.Dir(res.Name), filepath.Base(res.Name)
	if dir == "." {
		return root, base, nil
	}
	defer root.Close()
	if create {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return dirRoot{}, "", fmt.Errorf("creating directory for %s: %w", res.Display, err)
		}
	}
	parent, err := openDirRoot(root.Root, dir)
	if err != nil {
		return dirRoot{}, "", notExist(err, res.Display)
	}
	want := filepath.Join(res.Base, dir)
	real, err := filepath.EvalSymlinks(want)
	held, herr := parent.Stat(".")
	there, lerr := os.Lstat(want)
	if err != nil || real != want || herr != nil || lerr != nil || !there.IsDir() || identOf(held) != identOf(there) {
		parent.Close()
		return dirRoot{}, "", fmt.Errorf("%w: %s is no longer the directory that was checked", ErrChanged, filepath.Dir(res.Display))
	}
	return dirRoot{Root: parent}, base, nil
}

// classify maps a file's type onto the package errors; nil for a regular file.
func classify(fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return ErrIsDir
	default:
		return fmt.Errorf("%w: %s", ErrNotRegular, fi.Mode().Type())
	}
}

func notExist(err error, name string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotExist, name)
	}
	return err
}

// OpenRegular opens an existing regular file for reading. The type is checked
// before the open and again on the open descriptor; the open itself uses
// O_NONBLOCK, so a FIFO swapped in between cannot hang the call, and the
// descriptor keeps it, so a read that would wait fails (see ReadErr).
func OpenRegular(res Resolved) (*File, fs.FileInfo, error) {
	root, name, err := openParent(res, false)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	// The target is canonical: its last component is no symbolic link. One
	// found there now was swapped in after the check (and the approval),
	// and following it, even inside the parent, would read another file
	// than the one the user approved (~/.bashrc -> ~/.ssh/id_rsa).
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil, notExist(err, res.Display)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%w: %s became a symbolic link", ErrChanged, res.Display)
	}
	if err := classify(fi); err != nil {
		return nil, nil, err
	}
	// os.Root follows a link that stays inside the root whatever the flags
	// say, so a link swapped in after the Lstat is caught by identity: the
	// file opened must be the one the Lstat saw at the name.
	f, err := root.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, nil, notExist(err, res.Display)
	}
	ofi, err := f.Stat()
	if err == nil && identOf(ofi) != identOf(fi) {
		err = fmt.Errorf("%w: %s was replaced while it was opened", ErrChanged, res.Display)
	}
	if err == nil {
		err = classify(ofi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// A file of stored data cannot be polled and refuses deadlines. One
	// that can (/proc/kmsg, a trace pipe: their reads wait for events)
	// gets one before each read, or Go would park the read on the poller
	// until an event that may never come.
	pollable := f.SetReadDeadline(time.Time{}) == nil
	return &File{f: f, pollable: pollable, opened: time.Now()}, ofi, nil
}

// File is a regular file opened by OpenRegular for reading.
type File struct {
	f        *os.File
	pollable bool
	opened   time.Time
}

// Read reads like os.File.Read. A pollable file's read fails (see ReadErr)
// when it finds no data for eventFileReadMax, or once eventFileTotalMax
// has passed since the open: a source that keeps trickling data would
// otherwise be read for ever, and a blocked read cannot be cancelled.
func (f *File) Read(p []byte) (int, error) {
	if f.pollable {
		d := time.Now().Add(eventFileReadMax)
		if end := f.opened.Add(eventFileTotalMax); end.Before(d) {
			d = end
		}
		f.f.SetReadDeadline(d)
	}
	return f.f.Read(p)
}

// Close closes the file.
func (f *File) Close() error {
	return f.f.Close()
}

// ErrWouldBlock is a read of a file that is not stored data: /proc/kmsg
// or a trace pipe wait for events that may never come, and a tool call
// must not wait with them (a blocked read cannot be interrupted).
var ErrWouldBlock = errors.New("its reads wait for events (it is not a file of stored data)")

// eventFileReadMax bounds each read of a file that can be polled (see
// OpenRegular): /proc files of that kind answer at once when they have data.
const eventFileReadMax = 2 * time.Second

// eventFileTotalMax bounds all the reads of a pollable file.
const eventFileTotalMax = 10 * time.Second

// ReadErr names a read error of a file from OpenRegular: EAGAIN becomes
// ErrWouldBlock.
func ReadErr(err error) error {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrWouldBlock
	}
	return err
}

// ReadFileLimit reads a whole regular file of at most max bytes.
func ReadFileLimit(res Resolved, max int64) ([]byte, fs.FileInfo, error) {
	return ReadFileRoom(res, max, 0)
}

// ReadFileRoom is ReadFileLimit into a buffer with room for at least
// room more bytes (Edit makes its result there when it may).
func ReadFileRoom(res Resolved, max, room int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := OpenRegular(res)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, fi.Size(), max)
	}
	// The size may change while reading; the limit holds regardless.
	data, err := readAllSized(io.LimitReader(f, max+1), min(fi.Size(), max)+1+room)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", res.Display, ReadErr(err))
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
	}
	return data, fi, nil
}

// readAllSized is io.ReadAll starting from a buffer of size bytes: a file
// read at the size it had is allocated once (the byte past it lets the
// end of input be seen without growing), where io.ReadAll's doublings
// would leave about as much again behind as garbage.
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: let append pick the growth
		}
	}
}

// WriteAtomic replaces the target with data: parents are created through the
// root (0o755), data goes to an O_EXCL temp file in the target's directory
// which is fsynced, given the old file's permission bits (0o644 for a new
// file, regardless of umask) and renamed over the target; then the directory
// is fsynced so an acknowledged write survives a crash. Should that fsync
// fail, the change is made all the same: the error is a NotDurableError. The rename replaces a
// symlink at the last component rather than following it. A directory, FIFO,
// socket or device at the target is refused. created reports that nothing
// existed at the target before.
func WriteAtomic(res Resolved, data []byte) (created bool, err error) {
	if res.Name == "." {
		return false, ErrIsDir
	}
	root, base, err := openParent(res, true)
	if err != nil {
		return false, err
	}
	defer root.Close()

	perm := fs.FileMode(0o644)
	created = true
	switch fi, err := root.Lstat(base); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("writing %s: %w", res.Display, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// Swapped in after resolution (Resolve follows links, so Name never
		// names one): replace the link itself, never its target.
		created = false
	default:
		if err := classify(fi); err != nil {
			return false, err
		}
		perm, created = fi.Mode().Perm(), false
	}

	tmp, err := writeTemp(root.Root, ".", base, data, perm)
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", res.Display, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			root.Remove(tmp)
		}
	}()
	if err := root.Rename(tmp, base); err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return false, fmt.Errorf("%w: %s", ErrIsDir, res.Display)
		}
		return false, fmt.Errorf("writing %s: %w", res.Display, err)
	}
	renamed = true
	if err := syncDir(root.Root, "."); err != nil {
		return created, &NotDurableError{Display: res.Display, Err: err}
	}
	return created, nil
}

// NotDurableError: the change was made (the file is in place) but its
// directory could not be synced, so it may not survive a power loss. It
// is no failure of the change: a caller that reported it as "not written"
// would be wrong, and would throw away the undo of a change that landed.
type NotDurableError struct {
	Display string
	Err     error
}

func (e *NotDurableError) Error() string {
	return fmt.Sprintf("%s was changed, but syncing its directory failed, so the change may not survive a power loss: %v", e.Display, e.Err)
}

func (e *NotDurableError) Unwrap() error { return e.Err }

// Durable splits err into what a caller must treat as the change not made
// (failed) and a warning for a change that was made but not synced.
func Durable(err error) (warning string, failed error) {
	var nd *NotDurableError
	if errors.As(err, &nd) {
		return nd.Error(), nil
	}
	return "", err
}

// CreateExclusive creates a new file holding data, never overwriting
// anything (a symlink at the name counts as existing); parents are created.
// Used for plan artifacts.
func CreateExclusive(res Resolved, data []byte) error {
	if res.Name == "." {
		return ErrIsDir
	}
	root, base, err := openParent(res, true)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", res.Display, err)
	}
	err = fill(f, data, 0o644)
	if cerr := procless(f.Close()); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(base)
		return fmt.Errorf("creating %s: %w", res.Display, err)
	}
	if err := syncDir(root.Root, "."); err != nil {
		return &NotDurableError{Display: res.Display, Err: err}
	}
	return nil
}

// Remove removes a regular file (rollback of a created file). Anything else
// at the name, including a symlink, is refused.
func Remove(res Resolved) error {
	if res.Name == "." {
		return ErrIsDir
	}
	root, base, err := openParent(res, false)
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Lstat(base)
	if err != nil {
		return notExist(err, res.Display)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symlink", ErrNotRegular, res.Display)
	}
	if err := classify(fi); err != nil {
		return err
	}
	if err := root.Remove(base); err != nil {
		return fmt.Errorf("removing %s: %w", res.Display, err)
	}
	if err := syncDir(root.Root, "."); err != nil {
		return &NotDurableError{Display: res.Display, Err: err}
	}
	return nil
}

// fill gives a new file its mode and data and fsyncs it.
func fill(f *os.File, data []byte, perm fs.FileMode) error {
	err := f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	return procless(err)
}

// procless takes out of a file error the /proc/self/fd/N that openDirRoot
// gives the names of files under the directories it opens, so that a
// message names the file (relative to its directory), not a descriptor
// number: "write .a.txt.tmp-1: no space left on device".
func procless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if rest, ok := strings.CutPrefix(pe.Path, "/proc/self/fd/"); ok {
			if _, name, ok := strings.Cut(rest, "/"); ok {
				pe.Path = name
			} else {
				pe.Path = "."
			}
		}
	}
	return err
}

// writeTemp writes data, with mode perm and fsynced, to a new hidden file
// next to the target and returns its name. Where the filesystem allows it
// the file is written with no name (O_TMPFILE) and named only once
// complete, so that a crash or kill -9 during a long write leaves nothing
// in the user's directory; the name exists only between that moment and
// the rename that follows.
func writeTemp(root *os.Root, dir, base string, data []byte, perm fs.FileMode) (string, error) {
	if f := unnamedTemp(root, dir); f != nil {
		defer f.Close()
		if err := fill(f, data, perm); err != nil {
			return "", err
		}
		if testHookFilled != nil {
			testHookFilled()
		}
		for range 10 {
			name := tempName(dir, base)
			err := nameTemp(root, dir, filepath.Base(name), f)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err == nil {
				return name, nil
			}
			break // no /proc, say: write it again under a name
		}
	}
	name, f, err := createTemp(root, dir, base)
	if err != nil {
		return "", err
	}
	err = fill(f, data, perm)
	if cerr := procless(f.Close()); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(name)
		return "", err
	}
	return name, nil
}

// testHookFilled, when a test sets it, runs once a temp file holds its
// data and before it is named.
var testHookFilled func()

// tempName is a fresh hidden name next to base, bounded so that a long
// target name cannot push it past NAME_MAX.
func tempName(dir, base string) string {
	if len(base) > 64 {
		base = base[:64]
	}
	var b [8]byte
	rand.Read(b[:])
	return filepath.Join(dir, "."+base+".hostcore-"+hex.EncodeToString(b[:])+".tmp")
}

// createTemp creates an O_EXCL temp file next to the target.
func createTemp(root *os.Root, dir, base string) (string, *os.File, error) {
	for range 10 {
		name := tempName(dir, base)
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("could not create a temporary file")
}

// syncDir fsyncs dir (relative to root) so a rename or unlink in it is durable.
func syncDir(root *os.Root, dir string) error {
	if f := dirSyncFault.Load(); f != nil {
		if err := (*f)(); err != nil {
			return err
		}
	}
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return procless(err)
}

// Stat describes the target through its Base root, following symlinks only
// where they stay inside it.
func Stat(res Resolved) (fs.FileInfo, error) {
	root, name, err := openParent(res, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Stat(name)
	if err != nil {
		return nil, notExist(err, res.Name)
	}
	return fi, nil
}
