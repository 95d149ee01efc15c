package process

import (
	"errors"
	"os"
	"syscall"
)

// The spill file of a truncated stream is written in large blocks, by a
// goroutine of its own, so that the reader of the command's pipe only ever
// copies into memory: a command printing at full speed is not slowed by the
// disk, and the two run on separate cores.
//
// Where the filesystem allows it the file is written with O_DIRECT. A flood
// is written once and rarely read back; through the page cache it would
// push hundreds of megabytes of the user's cached files out, and growing the
// cache costs far more system time than the write itself (measured: 200 MB
// into ext4 took 0.40 s of system time through the cache, 0.03 s direct).
const (
	spillBlock  = 1 << 20 // bytes per write
	spillBlocks = 4       // blocks in flight per stream: the memory bound
	spillKeep   = 2       // written blocks kept for the next spill file
	spillAlign  = 4096    // O_DIRECT alignment of buffer, length and offset
)

// spillFree keeps up to spillKeep written blocks for the next spill
// file; the rest are given back (see putBlock).
var spillFree = make(chan *[]byte, spillKeep)

// spillFile is the complete copy of one stream. Write is called by one
// goroutine (the pump); the blocks are written by another.
type spillFile struct {
	f    *os.File
	path string
	size int64 // bytes kept (written or to be): at most max
	max  int64 // the file's bound (SpillMax)
	cut  bool  // bytes past max were dropped

	cur  *[]byte      // the block being filled
	n    int          // bytes in cur
	held int          // blocks taken by this file (≤ spillBlocks), only as many as the stream needs
	full chan *[]byte // filled blocks, to the writer
	free chan *[]byte // written blocks, back to Write
	done chan struct{}
	err  error         // the writer's first error; read after done
	fail chan struct{} // closed by the writer on its first error: Write stops copying
}

// createSpill creates the file in dir, named after the stream; it keeps at
// most max bytes.
func createSpill(dir, name string, max int64) (*spillFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, name+"-*.log")
	if err != nil {
		return nil, err
	}
	s := &spillFile{f: f, path: f.Name(), max: max, full: make(chan *[]byte, spillBlocks), free: make(chan *[]byte, spillBlocks),
		done: make(chan struct{}), fail: make(chan struct{})}
	direct := setDirect(f, true) == nil
	s.cur, s.held = getBlock(), 1
	go s.writer(direct)
	return s, nil
}

// Write copies p into blocks, handing each full one to the writer. Bytes
// past the file's bound are dropped.
func (s *spillFile) Write(p []byte) {
	if room := s.max - s.size; int64(len(p)) > room {
		p = p[:max(room, 0)]
		s.cut = true
	}
	s.size += int64(len(p))
	for len(p) > 0 {
		select {
		case <-s.fail:
			return
		default:
		}
		k := copy((*s.cur)[s.n:], p)
		s.n += k
		p = p[k:]
		if s.n == spillBlock {
			s.full <- s.cur
			s.cur = nil
			select {
			case s.cur = <-s.free:
			default:
				if s.held < spillBlocks {
					s.cur = getBlock()
					s.held++
					break
				}
				select {
				case s.cur = <-s.free:
				case <-s.fail:
					return
				}
			}
			s.n = 0
		}
	}
}

// writer writes the blocks in order. A direct write the filesystem refuses
// is retried through the cache, and the file stays that way.
func (s *spillFile) writer(direct bool) {
	defer close(s.done)
	for b := range s.full {
		if s.err == nil {
			data := *b
			w := data
			if direct && len(w)%spillAlign != 0 {
				// The last block: padded to the alignment here (with
				// zeros: the pooled block holds some other stream's
				// bytes), cut back to the real size by Close.
				w = data[:(len(data)+spillAlign-1)&^(spillAlign-1)]
				clear(w[len(data):])
			}
			n, err := s.f.Write(w)
			if err != nil && direct && errors.Is(err, syscall.EINVAL) && setDirect(s.f, false) == nil {
				// Refused (or refused part way): the rest goes through
				// the cache, and so does everything after it.
				direct = false
				err = nil
				if n < len(data) {
					_, err = s.f.Write(data[n:])
				}
			}
			if err != nil {
				s.err = err
				close(s.fail)
			}
		}
		*b = (*b)[:spillBlock]
		s.free <- b
	}
}

// Close writes what is left, waits for the writer and closes the file. It
// returns the first error: the file is then not the complete stream.
func (s *spillFile) Close() error {
	if s.cur != nil && s.n > 0 {
		*s.cur = (*s.cur)[:s.n]
		s.full <- s.cur
		s.cur = nil
	}
	close(s.full)
	<-s.done
	// Every block sent to the writer has come back to free.
	if s.cur != nil {
		putBlock(s.cur)
		s.held--
	}
	for range s.held {
		putBlock(<-s.free)
	}
	err := s.err
	if err == nil {
		// A padded last block is cut back to the bytes the stream had.
		err = s.f.Truncate(s.size)
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
