package process

import "unicode/utf8"

// Window keeps the first headMax and the last tailMax bytes of what is
// written to it and counts the rest, so memory stays flat however much a
// command prints. It is used by one goroutine at a time.
type Window struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // everything after head while it all fits; then the recent bytes, trimmed to tailMax now and then
	total            int64
}

// NewWindow returns an empty window.
func NewWindow(headMax, tailMax int) *Window {
	return &Window{headMax: headMax, tailMax: tailMax, head: make([]byte, 0, headMax), tail: make([]byte, 0, 2*tailMax)}
}

// Truncated says whether more was written than the window keeps.
func (w *Window) Truncated() bool { return w.total > int64(w.headMax+w.tailMax) }

// Write keeps what p adds to the head and the tail.
func (w *Window) Write(p []byte) {
	w.total += int64(len(p))
	if n := min(w.headMax-len(w.head), len(p)); n > 0 {
		w.head = append(w.head, p[:n]...)
		p = p[n:]
	}
	if len(p) >= w.tailMax {
		w.tail = append(w.tail[:0], p[len(p)-w.tailMax:]...)
		return
	}
	if len(w.tail)+len(p) > cap(w.tail) {
		// Keep the last tailMax-len(p) bytes; the buffer never grows past 2*tailMax.
		keep := w.tailMax - len(p)
		w.tail = w.tail[:copy(w.tail, w.tail[len(w.tail)-keep:])]
	}
	w.tail = append(w.tail, p...)
}

// Stream is what the window holds. A truncated head and tail are cut back
// to whole UTF-8 runes so the text shown is valid; the caller adds what it
// knows of the complete stream (FullPath and the rest).
func (w *Window) Stream() Stream {
	if !w.Truncated() {
		return Stream{Head: string(w.head) + string(w.tail), Total: w.total}
	}
	head := w.head[:runeCut(w.head)]
	tail := w.tail
	if len(tail) > w.tailMax {
		tail = tail[len(tail)-w.tailMax:]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return Stream{Head: string(head), Tail: string(tail), Total: w.total, Omitted: w.total - int64(len(head)) - int64(len(tail)), Truncated: true}
}

// Reset empties the window for what comes next.
func (w *Window) Reset() { w.head, w.tail, w.total = w.head[:0], w.tail[:0], 0 }
