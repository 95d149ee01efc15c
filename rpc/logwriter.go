package rpc

import (
	"io"
	"strconv"
	"sync"
	"time"
)

// LogWriter passes log lines on to w (stderr) from a goroutine of its own,
// so that logging never waits for the reader of stderr. A client that
// never reads hostcore's stderr (Node's spawn gives it a pipe by default,
// and a sidecar that listens to stdout only stops reading it once its own
// buffer is full) would otherwise stop every goroutine that logs once the
// pipe is full, the read loop and the handling of SIGTERM among them.
//
// Lines wait in memory up to logBacklog bytes, those being written
// included; past that, whole lines are dropped and counted, and a line
// saying how many follows once stderr takes lines again. Each Write is one
// line (slog's handlers write one record per call). Lines still waiting
// when the process dies without Close (a fatal runtime error, SIGKILL)
// are lost; the runtime's own crash report goes to stderr directly.
//
// While lines come close together (a stream of tool calls, each logging
// its timing line) the goroutine writes what gathered once per logBatch,
// not each line as it comes: waking it is a thread wake-up, which cost
// about 12 µs of each call's time (a third of a small Read's own work).
// A line that comes after logBatch of quiet is written at once, so a
// call's line is not held where a kill would lose it; Close writes at
// once.
type LogWriter struct {
	w       io.Writer
	mu      sync.Mutex
	buf     []byte // lines waiting for the writer goroutine
	writing int    // bytes the writer goroutine is writing now
	dropped int64  // lines dropped since the last note
	closing bool
	wake    chan struct{}
	stop    chan struct{} // closed by the first Close: write what waits now
	done    chan struct{}
	batch   time.Duration // logBatch; tests set others
}

// logBacklog bounds the log lines waiting for stderr.
const logBacklog = 1 << 20

// logBatch: lines that come within logBatch of the last write wait for
// the next, logBatch after it, and go out together.
const logBatch = 10 * time.Millisecond

// NewLogWriter starts the goroutine that writes to w.
func NewLogWriter(w io.Writer) *LogWriter {
	return newLogWriter(w, logBatch)
}

func newLogWriter(w io.Writer, batch time.Duration) *LogWriter {
	l := &LogWriter{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), batch: batch}
	go l.run()
	return l
}

// Write queues p, or drops it when logBacklog bytes wait already. It
// never blocks and never fails.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.writing+len(l.buf)+len(p) > logBacklog {
		l.dropped++
	} else {
		l.buf = append(l.buf, p...)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Close writes what waits, for at most wait (stderr may never be read),
// and stops the goroutine once it has.
func (l *LogWriter) Close(wait time.Duration) {
	l.mu.Lock()
	if !l.closing {
		l.closing = true
		close(l.stop)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	select {
	case <-l.done:
	case <-time.After(wait):
	}
}

func (l *LogWriter) run() {
	defer close(l.done)
	var (
		out  []byte
		last time.Time // when the last write ended
	)
	batch := time.NewTimer(time.Hour)
	batch.Stop()
	for {
		l.mu.Lock()
		for len(l.buf) == 0 && l.dropped == 0 {
			if l.closing {
				l.mu.Unlock()
				return
			}
			l.mu.Unlock()
			<-l.wake
			l.mu.Lock()
		}
		l.mu.Unlock()
		// Lines within logBatch of the last write wait for the rest of
		// it, those that came during that write too (they found the lock
		// free as soon as it ended, and went out at once in a second
		// write); lines written meanwhile go out with them.
		if wait := l.batch - time.Since(last); wait > 0 {
			batch.Reset(wait)
			select {
			case <-batch.C:
			case <-l.stop:
				batch.Stop()
			}
		}
		l.mu.Lock()
		out, l.buf = l.buf, out[:0]
		dropped := l.dropped
		l.dropped = 0
		l.writing = len(out)
		l.mu.Unlock()
		if dropped > 0 {
			out = appendDropNote(out, dropped)
		}
		l.w.Write(out) // a failed write loses these lines; there is nowhere else to say so
		last = time.Now()
		l.mu.Lock()
		l.writing = 0
		l.mu.Unlock()
	}
}

// appendDropNote appends a log line in slog's JSON shape saying that n
// lines were dropped.
func appendDropNote(b []byte, n int64) []byte {
	b = append(b, `{"time":"`...)
	b = time.Now().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"WARN","msg":"log lines dropped: stderr was not read fast enough","dropped":`...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, "}\n"...)
}
