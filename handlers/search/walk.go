package search

import (
	"context"
	"runtime"
	"sync"
	"syscall"
)

// entryType is the kind of a directory entry as reported by getdents; the walk
// never stats an entry whose type the file system already gave.
type entryType uint8

const (
	typeOther entryType = iota
	typeFile
	typeDir
	typeSymlink
	typeSpecial
)

// walkOptions configures one parallel walk. Filtering follows ripgrep's
// defaults: hidden names and ".git" are skipped, ignore files are honoured,
// symlinks are never followed (nor reported), and only regular files reach
// the visitor.
type walkOptions struct {
	root       string // canonical absolute directory where the walk starts
	rootRel    string // root's slash path relative to the search root ("" when it is)
	rootFd     int    // the search root, opened; paths are resolved beneath it
	prefix     string // root relative to the top of the ignore chain
	ignore     *ignoreNode
	hidden     bool // also walk dot-names (".git" stays skipped)
	maxDepth   int  // directories deeper than this are not read; <0 = no limit
	fileInline bool // call visit from the worker that read the directory
	// visit is called once per regular file with its absolute path and its
	// slash path relative to root. It must be safe for concurrent use; w is
	// the calling worker's private state.
	visit func(w *worker, abs, rel string) error
	// newState creates a worker's private state (buffers).
	newState func() any
}

// worker is one goroutine of the pool; state carries reusable buffers.
type worker struct {
	state  any
	dirBuf []byte
}

type walkJob struct {
	abs, rel string
	ign      *ignoreNode
	depth    int
	dir      bool
}

// walker is a bounded pool (GOMAXPROCS goroutines) over a shared LIFO of
// directories and files: depth-first order keeps the queue short, and files
// are jobs of their own so one huge directory is still searched in parallel.
type walker struct {
	o       walkOptions
	ctx     context.Context
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []walkJob
	pending int // jobs queued or running
	idle    int // workers waiting for a job
	err     error
}

func walk(ctx context.Context, o walkOptions) error {
	w := &walker{o: o, ctx: ctx}
	w.cond = sync.NewCond(&w.mu)
	w.stack = append(w.stack, walkJob{abs: o.root, rel: o.rootRel, ign: o.ignore, dir: true})
	w.pending = 1
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			st := &worker{dirBuf: make([]byte, 32<<10)}
			if o.newState != nil {
				st.state = o.newState()
			}
			w.run(st)
		})
	}
	wg.Wait()
	if w.err != nil {
		return w.err
	}
	return ctx.Err()
}

func (w *walker) run(st *worker) {
	var batch []walkJob
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.pending > 0 && w.err == nil && w.ctx.Err() == nil {
			w.idle++
			w.cond.Wait()
			w.idle--
		}
		if len(w.stack) == 0 || w.err != nil || w.ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		j := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()

		var err error
		batch = batch[:0]
		if j.dir {
			batch, err = w.readDir(st, j, batch)
		} else {
			err = w.o.visit(st, j.abs, j.rel)
		}

		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.stack = append(w.stack, batch...)
		w.pending += len(batch) - 1
		switch {
		case w.pending == 0 || w.err != nil:
			w.cond.Broadcast()
		case w.idle > 0 && len(batch) > 1:
			w.cond.Broadcast()
		case w.idle > 0 && len(batch) == 1:
			w.cond.Signal()
		}
		w.mu.Unlock()
	}
}

// readDir lists one directory, loads its ignore files and returns the jobs
// for its children. Unreadable directories are skipped, as ripgrep does.
func (w *walker) readDir(st *worker, j walkJob, batch []walkJob) ([]walkJob, error) {
	fd, err := openIn(w.o.rootFd, j.abs, j.rel, syscall.O_RDONLY|oDirectory)
	if err != nil {
		return batch, nil
	}
	type ent struct {
		name string
		typ  entryType
	}
	var ents []ent
	var has [len(ignoreFileNames)]bool
	err = readDirents(fd, st.dirBuf, func(name string, typ entryType) {
		if name[0] == '.' {
			for i, n := range ignoreFileNames {
				if name == n {
					has[i] = true
				}
			}
			if !w.o.hidden || name == ".git" {
				return
			}
		}
		ents = append(ents, ent{name, typ})
	})
	closeFd(fd)
	if err != nil {
		return batch, nil
	}
	topRel := joinRel(w.o.prefix, j.rel)
	ign := loadIgnoreDir(j.ign, j.abs, topRel, has)
	for _, e := range ents {
		abs := j.abs + "/" + e.name
		typ := e.typ
		if typ == typeOther {
			typ = lstatType(abs)
		}
		if typ != typeFile && typ != typeDir {
			continue
		}
		rel := joinRel(j.rel, e.name)
		if ign != nil && ign.ignored(topRel, e.name, typ == typeDir) {
			continue
		}
		if typ == typeDir {
			if w.o.maxDepth >= 0 && j.depth+1 > w.o.maxDepth {
				continue
			}
			batch = append(batch, walkJob{abs: abs, rel: rel, ign: ign, depth: j.depth + 1, dir: true})
			continue
		}
		if w.o.fileInline {
			if err := w.o.visit(st, abs, rel); err != nil {
				return batch, err
			}
			continue
		}
		batch = append(batch, walkJob{abs: abs, rel: rel})
	}
	if err := w.ctx.Err(); err != nil {
		return batch[:0], err
	}
	return batch, nil
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	if name == "" {
		return dir
	}
	return dir + "/" + name
}
