package process

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Chunking limits for Spec.OnOutput: a consumer (the UI) gets output soon
// enough to feel live, in pieces large enough not to flood it with calls.
// The delay is half the promised 50 ms, leaving the rest for the pipes and
// the schedulers between the command's write and the client (a loaded
// machine takes more than the 1-2 ms of a quiet one), and still joins the
// lines a burst of quick commands prints into one chunk.
const (
	chunkMax   = 16 << 10
	chunkDelay = 25 * time.Millisecond
)

// Stream is the bounded record of one output stream.
type Stream struct {
	Head, Tail string // kept bytes; Tail is empty and Head holds everything when not truncated
	Total      int64  // every byte the command wrote
	Omitted    int64  // bytes between Head and Tail that are not kept
	Truncated  bool
	FullPath   string // spill file with the complete stream, when truncated and Spec.SpillDir was set
	FullCut    bool   // the spill file holds only the first FullSize bytes (SpillMax)
	FullSize   int64  // bytes in the spill file
	FullErr    string // why the complete stream could not be saved (disk full, ...), when truncated
}

// SpillMax bounds one stream's spill file. A command printing at full
// speed until its 300 s timeout would otherwise write tens of gigabytes
// to the user's disk, which stay there until the session is deleted.
const SpillMax = 1 << 30

// Text renders the stream for the model: the head, a marker that says how
// much was cut, the tail, and where the complete output was saved.
func (s Stream) Text() string {
	if !s.Truncated {
		return s.Head
	}
	var b strings.Builder
	b.WriteString(s.Head)
	if s.Head != "" && !strings.HasSuffix(s.Head, "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes omitted ...]\n", s.Omitted)
	b.WriteString(s.Tail)
	if s.FullPath != "" || s.FullErr != "" {
		if s.Tail != "" && !strings.HasSuffix(s.Tail, "\n") {
			b.WriteByte('\n')
		}
		if s.FullPath == "" {
			fmt.Fprintf(&b, "[the complete output could not be saved: %s]", s.FullErr)
		} else if s.FullCut {
			fmt.Fprintf(&b, "[first %d of %d bytes of output: %s]", s.FullSize, s.Total, s.FullPath)
		} else {
			fmt.Fprintf(&b, "[full output: %s]", s.FullPath)
		}
	}
	return b.String()
}

// capture keeps a Window of a stream. Once the stream no longer fits, and
// a spill directory is set, everything is also written to a file as it
// arrives: the model can read the part it was not shown. capture is used
// by one goroutine only.
type capture struct {
	name     string
	spillDir string

	win       *Window
	truncated bool
	spill     *spillFile // nil until the first truncation
	spillMax  int64
	spillCut  bool
	spillSize int64
	spillErr  string // why there is no spill file (see Stream.FullErr)
}

func newCapture(name string, headMax, tailMax int, spillDir string) *capture {
	return &capture{name: name, spillDir: spillDir, win: NewWindow(headMax, tailMax), spillMax: SpillMax}
}

func (c *capture) write(p []byte) {
	if !c.truncated && c.win.total+int64(len(p)) > int64(c.win.headMax+c.win.tailMax) {
		c.truncated = true
		c.openSpill() // the window still holds every earlier byte
	}
	if c.spill != nil {
		c.spill.Write(p)
	}
	c.win.Write(p)
}

func (c *capture) openSpill() {
	if c.spillDir == "" {
		return
	}
	f, err := createSpill(c.spillDir, c.name, c.spillMax)
	if err != nil {
		c.spillErr = err.Error()
		return
	}
	c.spill = f
	f.Write(c.win.head)
	f.Write(c.win.tail)
}

// finish closes the spill file and returns the record.
func (c *capture) finish() Stream {
	// A spill file that could not be written whole (disk full, say) would
	// claim to be the complete output: it is removed.
	path := ""
	if c.spill != nil {
		if err := c.spill.Close(); err != nil {
			os.Remove(c.spill.path)
			c.spillErr = err.Error()
		} else {
			path, c.spillCut, c.spillSize = c.spill.path, c.spill.cut, c.spill.size
		}
		c.spill = nil
	}
	s := c.win.Stream()
	if s.Truncated {
		s.FullPath, s.FullCut, s.FullSize, s.FullErr = path, c.spillCut, c.spillSize, c.spillErr
	}
	return s
}

// runeCut returns the length of the longest prefix of p that does not end in
// the middle of a UTF-8 sequence: an incomplete trailing rune is held back
// until more bytes arrive. Bytes that are not UTF-8 at all are not held.
func runeCut(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if utf8.FullRune(p[i:]) {
				return len(p)
			}
			return i
		}
	}
	return len(p)
}

// emitter delivers a stream to Spec.OnOutput in coalesced chunks of at most
// chunkMax bytes, at most chunkDelay after the bytes arrived, never splitting
// a rune. It runs on its own goroutine so the delay timer fires even while the
// reader is blocked; the channel between them is the back-pressure that keeps
// a slow consumer from growing memory.
// chunkPool recycles the copies pump hands to emit.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, readBuf); return &b }}

func emit(stream string, in <-chan *[]byte, out func(stream string, seq int, chunks [][]byte)) {
	var (
		pending []byte
		seq     int
		batch   [][]byte
		timer   = time.NewTimer(time.Hour)
		armed   bool
	)
	timer.Stop()
	defer timer.Stop()
	// cut appends data's whole chunks to batch and returns what is left.
	cut := func(data []byte) []byte {
		for len(data) >= chunkMax {
			n := runeCut(data[:chunkMax])
			if n == 0 {
				n = chunkMax
			}
			batch = append(batch, data[:n:n])
			data = data[n:]
		}
		return data
	}
	// flush hands the batch over; out has returned and kept nothing.
	flush := func() {
		if len(batch) > 0 {
			out(stream, seq, batch)
			seq += len(batch)
			clear(batch)
			batch = batch[:0]
		}
	}
	for {
		select {
		case p, ok := <-in:
			if !ok {
				if len(pending) > 0 {
					// EOF: nothing more can complete a rune.
					batch = append(batch, pending)
					flush()
				}
				return
			}
			if len(pending) == 0 {
				// Whole chunks go out as read (a flood: no copy); only
				// the remainder waits.
				rest := cut(*p)
				flush()
				pending = append(pending, rest...)
			} else {
				pending = append(pending, *p...)
				rest := cut(pending)
				flush()
				pending = pending[:copy(pending, rest)]
			}
			chunkPool.Put(p)
			if n := runeCut(pending); n == 0 {
				if armed {
					timer.Stop()
					armed = false
				}
			} else if !armed {
				timer.Reset(chunkDelay)
				armed = true
			}
		case <-timer.C:
			armed = false
			if n := runeCut(pending); n > 0 {
				batch = append(batch, pending[:n:n])
				flush()
				pending = pending[:copy(pending, pending[n:])]
			}
		}
	}
}
