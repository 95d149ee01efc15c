package background

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"hostcore/sandbox/process"
)

// Limits of the background commands.
const (
	// MaxRunning is how many commands of one session may run at once.
	MaxRunning = 8
	// maxKept bounds the shells a session remembers, running or ended: an
	// ended one is kept so that its last output and exit can be read, and
	// the oldest ended ones are forgotten past this.
	maxKept = 4 * MaxRunning
	// FileMax bounds each stream's output file, as a foreground command's
	// complete copy is bounded.
	FileMax = process.SpillMax
	// killWait bounds how long KillShell and the end of a session wait for
	// a command's tree to be gone. process.Run returns within the kill
	// ladder's grace and its backstops; this only keeps a stuck kill from
	// holding the caller for good.
	killWait = 10 * time.Second
)

// Why hostcore ended a command (Exit.KilledBy, Output.KilledBy).
const (
	KilledByKillShell = "KillShell"
	KilledBySession   = "session.delete"
	KilledByStop      = "shutdown"
)

// The states of a command.
const (
	StateRunning = "running"
	StateExited  = "exited"
)

var (
	// ErrLimit refuses a command past MaxRunning.
	ErrLimit = fmt.Errorf("this session already runs %d background commands, the most it may: end one with KillShell (or let one finish) first", MaxRunning)
	// ErrNotFound: no command of that id in the session.
	ErrNotFound = errors.New("no background command with that shellId in this session")
	// ErrClosed refuses a command once hostcore is stopping.
	ErrClosed = errors.New("hostcore is stopping: no background command can start")
)

// Exit is what the Registry reports when a command has ended.
type Exit struct {
	SessionID  string
	ShellID    string
	ToolCallID string
	ExitCode   *int // nil when a signal ended it
	Signal     string
	KilledBy   string // "" when it ended by itself
	StartError string // it could not be started
	Stdout     int64  // bytes written, each stream
	Stderr     int64
	Duration   time.Duration
}

// Registry holds the background commands of every session of one
// connection.
type Registry struct {
	mu       sync.Mutex
	sessions map[string][]*Shell // by session id, oldest first
	closed   bool
	running  sync.WaitGroup
	onExit   func(Exit)
}

// New makes a Registry; onExit (if set) is called, on the command's own
// goroutine, each time a command ends, except once the Registry is closed
// (nobody is left to tell).
func New(onExit func(Exit)) *Registry {
	return &Registry{sessions: map[string][]*Shell{}, onExit: onExit}
}

// Options describe one background command.
type Options struct {
	SessionID  string
	ToolCallID string
	// Dir is where its output files go (the session's scratch directory).
	Dir string
	// Spec is the command as a foreground Bash would run it; its Timeout,
	// OnOutput, SpillDir and Warm are the Registry's to set, and its
	// HeadBytes and TailBytes bound what each read returns of a stream.
	Spec process.Spec
}

// Start starts the command and returns its Shell at once.
func (r *Registry) Start(o Options) (*Shell, error) {
	id, err := newShellID()
	if err != nil {
		return nil, err
	}
	sh := &Shell{ID: id, SessionID: o.SessionID, ToolCallID: o.ToolCallID, started: time.Now(), done: make(chan struct{}),
		headMax: cmp.Or(o.Spec.HeadBytes, process.DefaultHeadBytes), tailMax: cmp.Or(o.Spec.TailBytes, process.DefaultTailBytes)}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return nil, ErrClosed
	case r.runningLocked(o.SessionID) >= MaxRunning:
		return nil, ErrLimit
	}
	names := []string{"stdout", "stderr"}
	if o.Spec.TTY {
		names = names[:1] // one merged stream
	}
	for _, name := range names {
		st, err := openStream(o.Dir, id, name)
		if err != nil {
			sh.closeFiles()
			for _, st := range sh.streams {
				os.Remove(st.path)
			}
			return nil, fmt.Errorf("creating the output file: %w", err)
		}
		sh.streams = append(sh.streams, st)
	}
	spec := o.Spec
	// It runs until it ends or is ended: no timeout, no warm reaper (the
	// next foreground command's would be held for as long as this runs),
	// no spill of its own (the Registry's files hold everything), and a
	// capture of the minimum size (the output is read from the streams).
	spec.Timeout, spec.Warm, spec.SpillDir = 0, nil, ""
	spec.HeadBytes, spec.TailBytes = 1, 1
	spec.OnOutput = sh.output
	ctx, cancel := context.WithCancel(context.Background())
	sh.cancel = cancel
	r.sessions[o.SessionID] = r.keptLocked(append(r.sessions[o.SessionID], sh))
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		defer cancel()
		res, err := process.Run(ctx, spec)
		sh.finish(res, err)
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if r.onExit != nil && !closed {
			r.onExit(sh.exit())
		}
	}()
	return sh, nil
}

// runningLocked counts the session's commands still running.
func (r *Registry) runningLocked(session string) int {
	n := 0
	for _, sh := range r.sessions[session] {
		if !sh.ended() {
			n++
		}
	}
	return n
}

// keptLocked drops the oldest ended shells past maxKept.
func (r *Registry) keptLocked(shells []*Shell) []*Shell {
	for len(shells) > maxKept {
		i := 0
		for i < len(shells) && !shells[i].ended() {
			i++
		}
		if i == len(shells) {
			break // all running: at most MaxRunning, never reached
		}
		shells = append(shells[:i], shells[i+1:]...)
	}
	return shells
}

// Get is the session's command of that id.
func (r *Registry) Get(session, id string) (*Shell, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sh := range r.sessions[session] {
		if sh.ID == id {
			return sh, nil
		}
	}
	return nil, ErrNotFound
}

// Running lists the ids of the session's commands still running.
func (r *Registry) Running(session string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, sh := range r.sessions[session] {
		if !sh.ended() {
			ids = append(ids, sh.ID)
		}
	}
	return ids
}

// EndSession kills every command of the session, waits until their trees
// are gone, and forgets them.
func (r *Registry) EndSession(session string) {
	r.mu.Lock()
	shells := r.sessions[session]
	delete(r.sessions, session)
	r.mu.Unlock()
	killAll(shells, KilledBySession)
}

// Close kills every command of every session and waits until their trees
// are gone; no command starts after it, and no exit is reported. It may be
// called more than once (as hostcore begins to stop, and at its end).
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	var shells []*Shell
	for _, s := range r.sessions {
		shells = append(shells, s...)
	}
	r.mu.Unlock()
	killAll(shells, KilledByStop)
	waitBounded(r.running.Wait, killWait)
}

// killAll ends the shells side by side: the stop of a session or of
// hostcore waits for the slowest, not for their sum.
func killAll(shells []*Shell, by string) {
	var wg sync.WaitGroup
	for _, sh := range shells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh.Kill(by)
		}()
	}
	wg.Wait()
}

// waitBounded runs wait, giving up on it after d.
func waitBounded(wait func(), d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// newShellID is a shell id no other command has and no other session can
// guess: 96 random bits.
func newShellID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("naming the background command: %w", err)
	}
	return "bash_" + hex.EncodeToString(b[:]), nil
}

// openStream creates a stream's file in dir, refusing anything already at
// its name, a link included (O_EXCL): the scratch directory is writable by
// commands.
func openStream(dir, id, name string) (*stream, error) {
	path := filepath.Join(dir, id+"."+name+".log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return &stream{name: name, file: f, path: path, max: FileMax}, nil
}
