package order

import "sync"

// PathLocks serialise mutations of one file across sessions, so two
// sessions editing the same file cannot lose an update. A file's lock is
// kept only while someone holds or waits for it. The zero PathLocks is
// ready.
type PathLocks struct {
	mu    sync.Mutex
	locks map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int // holders and waiters
}

// Lock locks the file at abs (a canonical path) and returns its unlock.
func (p *PathLocks) Lock(abs string) (unlock func()) {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = map[string]*pathLock{}
	}
	l := p.locks[abs]
	if l == nil {
		l = &pathLock{}
		p.locks[abs] = l
	}
	l.refs++
	p.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		p.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(p.locks, abs)
		}
		p.mu.Unlock()
	}
}
