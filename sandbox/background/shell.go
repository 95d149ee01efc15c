package background

import (
	"context"
	"os"
	"sync"
	"time"

	"hostcore/sandbox/process"
)

// Shell is one background command.
type Shell struct {
	ID         string
	SessionID  string
	ToolCallID string // the Bash call that started it

	started time.Time
	cancel  context.CancelFunc
	done    chan struct{} // closed once its tree is gone and its state final

	// headMax and tailMax bound what a read returns of each stream.
	headMax, tailMax int

	mu       sync.Mutex
	streams  []*stream // stdout, then stderr (none with a terminal)
	killedBy string
	res      process.Result
	startErr string
	took     time.Duration
}

// Files are the paths of the streams' files: stdout's, then stderr's
// (one merged stream under a terminal).
func (sh *Shell) Files() []string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []string
	for _, st := range sh.streams {
		out = append(out, st.path)
	}
	return out
}

// Done is closed once the command has ended and its tree is gone.
func (sh *Shell) Done() <-chan struct{} { return sh.done }

func (sh *Shell) ended() bool {
	select {
	case <-sh.done:
		return true
	default:
		return false
	}
}

// output is the command's Spec.OnOutput: each chunk goes to its stream's
// file and to what the next read returns.
func (sh *Shell) output(name string, _ int, chunks [][]byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st := sh.stream(name)
	if st == nil {
		return
	}
	for _, p := range chunks {
		st.write(p, sh.headMax, sh.tailMax)
	}
}

func (sh *Shell) stream(name string) *stream {
	for _, st := range sh.streams {
		if st.name == name {
			return st
		}
	}
	return nil
}

// finish records how the command ended. process.Run has returned: every
// output call has too.
func (sh *Shell) finish(res process.Result, err error) {
	sh.mu.Lock()
	sh.res, sh.took = res, time.Since(sh.started)
	if err != nil {
		sh.startErr = err.Error()
	}
	if !res.Aborted {
		// It ended on its own before a kill reached it.
		sh.killedBy = ""
	}
	sh.closeFiles()
	sh.mu.Unlock()
	close(sh.done)
}

// closeFiles closes the streams' files; the files stay.
func (sh *Shell) closeFiles() {
	for _, st := range sh.streams {
		if st.file != nil {
			if err := st.file.Close(); err != nil && st.fileErr == "" {
				st.fileErr = err.Error()
			}
			st.file = nil
		}
	}
}

// Kill ends the command with its whole tree (process.Run's kill ladder)
// and waits until it is gone. killed is false when it had already ended,
// on its own or by an earlier kill.
func (sh *Shell) Kill(by string) (killed bool) {
	sh.mu.Lock()
	mine := !sh.ended() && sh.killedBy == ""
	if mine {
		sh.killedBy = by
	}
	sh.mu.Unlock()
	sh.cancel()
	waitBounded(func() { <-sh.done }, killWait)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return mine && sh.killedBy == by
}

// Output is a read of a command: its state, and what each stream wrote
// since the previous read.
type Output struct {
	ShellID    string
	State      string // StateRunning or StateExited
	ExitCode   *int   // once exited; nil when a signal ended it
	Signal     string
	KilledBy   string
	StartError string
	Duration   time.Duration // so far, or until it ended
	Streams    []StreamOutput
}

// StreamOutput is one stream of a read.
type StreamOutput struct {
	Name string
	// New is what arrived since the previous read, its first headMax and
	// last tailMax bytes kept; its FullPath names the stream's file.
	New process.Stream
	// Bytes counts everything the stream wrote; File is its file, which
	// holds the first Saved bytes (FileCut past FileMax), or FileError.
	Bytes     int64
	File      string
	Saved     int64
	FileCut   bool
	FileError string
}

// Read returns the command's state and what it wrote since the previous
// read, and starts the next read from here.
func (sh *Shell) Read() Output {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := sh.stateLocked()
	for _, st := range sh.streams {
		out.Streams = append(out.Streams, st.take())
	}
	return out
}

// State is Read without the output: nothing is consumed.
func (sh *Shell) State() Output {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.stateLocked()
}

func (sh *Shell) stateLocked() Output {
	out := Output{ShellID: sh.ID, State: StateRunning, Duration: time.Since(sh.started)}
	if !sh.ended() {
		return out
	}
	out.State, out.Duration = StateExited, sh.took
	out.KilledBy, out.StartError, out.Signal = sh.killedBy, sh.startErr, sh.res.Signal
	if sh.res.Signal == "" && sh.startErr == "" {
		code := sh.res.ExitCode
		out.ExitCode = &code
	}
	return out
}

// exit is the report of an ended command.
func (sh *Shell) exit() Exit {
	o := sh.State()
	e := Exit{SessionID: sh.SessionID, ShellID: sh.ID, ToolCallID: sh.ToolCallID, ExitCode: o.ExitCode, Signal: o.Signal,
		KilledBy: o.KilledBy, StartError: o.StartError, Duration: o.Duration}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if st := sh.stream("stdout"); st != nil {
		e.Stdout = st.total
	}
	if st := sh.stream("stderr"); st != nil {
		e.Stderr = st.total
	}
	return e
}

// stream is one output stream: its file, and a window of what arrived
// since the last read.
type stream struct {
	name    string
	file    *os.File // nil once closed
	path    string
	saved   int64
	max     int64 // the file's bound: FileMax
	cut     bool
	fileErr string
	total   int64

	win *process.Window // since the last read; made by the first write
}

func (s *stream) write(p []byte, headMax, tailMax int) {
	s.total += int64(len(p))
	if s.file != nil && s.fileErr == "" {
		w := p
		if room := s.max - s.saved; int64(len(w)) > room {
			w, s.cut = w[:room], true
		}
		if len(w) > 0 {
			n, err := s.file.Write(w)
			s.saved += int64(n)
			if err != nil {
				s.fileErr = err.Error()
			}
		}
	}
	if s.win == nil {
		s.win = process.NewWindow(headMax, tailMax)
	}
	s.win.Write(p)
}

// take returns what arrived since the last read and starts anew.
func (s *stream) take() StreamOutput {
	out := StreamOutput{Name: s.name, Bytes: s.total, File: s.path, Saved: s.saved, FileCut: s.cut, FileError: s.fileErr}
	if s.win == nil {
		return out
	}
	out.New = s.win.Stream()
	if out.New.Truncated {
		if s.fileErr == "" {
			out.New.FullPath = s.path // else the file is not the whole stream
		}
		out.New.FullCut, out.New.FullSize, out.New.FullErr = s.cut, s.saved, s.fileErr
	}
	s.win.Reset()
	return out
}
