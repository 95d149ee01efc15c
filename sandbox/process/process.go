package process

import (
	"errors"
	"time"

	"hostcore/sandbox/landlock"
)

// Defaults for the zero values of Spec.
const (
	DefaultGrace     = 2 * time.Second
	DefaultHeadBytes = 30000
	DefaultTailBytes = 30000
)

// readBuf is the size of one read from an output pipe: the default pipe
// capacity on Linux, so one read can drain a full pipe.
const readBuf = 64 << 10

// floodRead is the size of one read once a flood has grown the pipe
// (GrowPipe, to a mebibyte): as much as the pipe holds, so that a flood
// is read, handed to the emitter and written out in a few large pieces
// rather than in the 64 KiB ones a command's first output comes in (200 MB
// through Bash: a tenth faster).
const floodRead = 1 << 20

// Spec describes one command.
type Spec struct {
	Path string   // shell executable, e.g. /bin/bash; a bare name is looked up in PATH
	Args []string // arguments after the executable, e.g. {"-lc", command}
	Dir  string   // working directory; "" = hostcore's
	Env  []string // environment; nil = hostcore's
	// TTY runs the command under a pseudo-terminal: stdin, stdout and stderr
	// are the terminal, and the one merged stream is reported as "stdout"
	// (with the terminal's \r\n line endings).
	TTY bool
	// Batch runs the command, and everything it starts, as a batch task
	// (Linux SCHED_BATCH; see forkBatch). Off: commands run as the user's
	// shell runs them.
	Batch   bool
	Timeout time.Duration // 0 = none
	Grace   time.Duration // time between TERM and KILL; 0 = DefaultGrace
	// Sandbox, if set, confines the command and everything it starts
	// (see package landlock); the command does not start if it cannot be.
	Sandbox *landlock.Policy

	// HeadBytes and TailBytes bound what is kept of each stream in memory;
	// 0 = DefaultHeadBytes / DefaultTailBytes.
	HeadBytes, TailBytes int
	// SpillDir, if set, receives a file with the complete stream once a
	// stream is truncated (created on the first truncation and written as
	// output arrives, so memory stays flat).
	SpillDir string
	// OnOutput, if set, receives the output as it arrives (chunks are only
	// valid during the call: copy them to keep them): chunks of at most
	// 16 KiB, each delivered at most 50 ms after its bytes arrived, never
	// splitting a UTF-8 rune. chunks[i] has sequence number seq+i, counting
	// from 0 per stream; the chunks that are ready together come in one call
	// (a flood: a pipe read's worth, up to 64 KiB), so a consumer can send
	// them with one write. Calls for one stream are sequential, calls for
	// stdout and stderr may be concurrent. Every call has returned before
	// Run returns, so OnOutput must not block for long: it holds the
	// command's output back while it runs.
	OnOutput func(stream string, seq int, chunks [][]byte)
	// Warm, if set, provides a reaper started ahead of time (for commands
	// without a TTY), and Run starts the next one.
	Warm *Warm
}

// Result is what became of a command.
type Result struct {
	ExitCode       int    // -1 if killed by a signal
	Signal         string // e.g. "SIGKILL"; "" if the shell exited
	TimedOut       bool   // Spec.Timeout expired and the tree was killed
	Aborted        bool   // ctx was cancelled and the tree was killed
	NotStarted     bool   // stopped before the reaper took the command: nothing ran
	Stdout, Stderr Stream
	Duration       time.Duration
}

// ErrNotPorted is what Run answers where running commands is not ported
// yet (see run_other.go).
var ErrNotPorted = errors.New("running commands is not supported on this platform yet")
