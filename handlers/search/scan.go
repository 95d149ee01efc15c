package search

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"unicode/utf8"
)

const (
	// readChunk is ripgrep's initial buffer size. Reading in the same steps
	// makes binary detection (which discards the read that holds the first
	// NUL) cut files where ripgrep does.
	readChunk = 64 << 10
	// maxLineBuf caps the buffer of one worker. A line longer than this is
	// searched in maxLineBuf segments: a match straddling two segments is
	// missed, and the line is counted and shown once (from the segment that
	// matched first).
	maxLineBuf = 8 << 20
	// maxLineChars bounds a shown line; longer ones are cut with a marker.
	maxLineChars = 500
)

// scanState is a worker's reusable memory: the read buffer and the
// per-file scan.
type scanState struct {
	buf []byte
	fs  fileScan
}

func newScanState() any { return &scanState{buf: make([]byte, readChunk)} }

// fileScan is the state of searching one file.
type fileScan struct {
	g     *grepRun
	rel   string
	count int
	out   []byte
	lines int
	full  bool // per-file output already exceeds what can be shown
	// capped: the output has reached its bound; the next line that would
	// be written makes it full (a file whose matches exactly fill the
	// bound is shown whole, and not said to be cut).
	capped bool
	lineNo int // line number at the scan position (content mode)
	// regionStart is the line number of the current region's first byte.
	regionStart int
	emitted     int // number of the last line written to out, 0 for none
	after       int // context lines still owed after the last match
	// tail holds the last Context lines of the previous region, for the
	// before-context of a match at the top of the next one.
	tail    [][]byte
	tailNo  int
	spans   [][2]int
	midLine bool // this region continues the previous region's last line
	lastHit bool // the previous region's last line matched
}

// scanFile searches one regular file and records its result. Unreadable
// files are skipped silently, as ripgrep does with a warning.
func (g *grepRun) scanFile(st *scanState, abs, rel string) error {
	if g.include != nil && !g.include.match(rel) {
		return nil
	}
	// O_NONBLOCK: a file swapped for a FIFO after listing must not hang us.
	fd, err := openIn(g.rootFd, abs, rel, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		if g.rootFd < 0 {
			// The one file asked for: "no matches" would be a lie. In a
			// tree, an unreadable file is skipped, as ripgrep does.
			if errors.Is(err, syscall.ELOOP) {
				return fmt.Errorf("%w: %s is now a symbolic link", ErrRootChanged, DisplayName(rel))
			}
			return fmt.Errorf("cannot open %s: %w", DisplayName(rel), err)
		}
		return nil
	}
	defer closeFd(fd)
	if g.rootFd < 0 {
		// A single-file root: it must be the file that was resolved.
		if err := checkIdent(fd, g.fileIdent); err != nil {
			return err
		}
	}
	fs := &st.fs
	tail := fs.tail[:0]
	*fs = fileScan{g: g, rel: rel, lineNo: 1, tail: tail, spans: fs.spans, out: fs.out[:0]}
	keep := 0
	for {
		if err := g.ctx.Err(); err != nil {
			return err
		}
		if keep == len(st.buf) {
			if len(st.buf) < maxLineBuf {
				nb := make([]byte, 2*len(st.buf))
				copy(nb, st.buf[:keep])
				st.buf = nb
			} else {
				fs.region(st.buf[:keep], true)
				keep = 0
				continue
			}
		}
		n, err := readFd(fd, st.buf[keep:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			if err == nil && keep > 0 {
				fs.region(st.buf[:keep], false)
			}
			break
		}
		fresh := st.buf[keep : keep+n]
		if bytes.IndexByte(fresh, 0) >= 0 {
			break // binary: ripgrep stops at the read holding the first NUL
		}
		end := keep + n
		nl := bytes.LastIndexByte(fresh, '\n')
		if nl < 0 {
			keep = end
			continue
		}
		nl += keep
		fs.region(st.buf[:nl+1], false)
		keep = copy(st.buf, st.buf[nl+1:end])
	}
	if fs.count > 0 {
		g.add(fs)
	}
	return nil
}

// region searches whole lines (the last may be unterminated at EOF, or cut
// when split is set because one line outgrew the buffer).
func (fs *fileScan) region(data []byte, split bool) {
	g := fs.g
	m := g.m
	pos := 0
	fs.regionStart = fs.lineNo
	cont := fs.midLine
	fs.midLine = split
	lastHit := false
	for pos < len(data) {
		ls, le, ok := m.next(data, pos)
		if !ok {
			break
		}
		lastHit = le == len(data)
		if ls == 0 && cont && fs.lastHit {
			pos = le + 1 // same line as the previous region's last match
			if g.mode == modeContent && !fs.full {
				fs.lineNo += bytes.Count(data[:min(le+1, len(data))], newline)
			}
			continue
		}
		fs.count++
		// files_with_matches reads on past the first match, unlike
		// `rg -l`: details.matches counts matching lines in every mode.
		if g.mode == modeFiles || g.mode == modeCount || fs.full {
			pos = le + 1
			continue
		}
		pos = fs.matchLine(data, pos, ls, le)
	}
	fs.lastHit = lastHit
	if g.mode != modeContent || fs.full {
		return
	}
	// After-context owed past the last match, then the line count.
	for fs.after > 0 && pos < len(data) {
		e := bytes.IndexByte(data[pos:], '\n')
		if e < 0 {
			e = len(data)
		} else {
			e += pos
		}
		fs.emit(fs.lineNo, data[pos:e], false)
		fs.lineNo++
		fs.after--
		pos = e + 1
	}
	if pos < len(data) {
		fs.lineNo += bytes.Count(data[pos:], newline)
	}
	if c := g.o.Context; c > 0 {
		fs.saveTail(data, c)
	}
}

// matchLine writes the context before a match, the match itself, and the
// owed after-context of the previous match, returning the next line start.
func (fs *fileScan) matchLine(data []byte, pos, ls, le int) int {
	c := fs.g.o.Context
	for fs.after > 0 && pos < ls {
		e := pos + bytes.IndexByte(data[pos:ls], '\n')
		fs.emit(fs.lineNo, data[pos:e], false)
		fs.lineNo++
		fs.after--
		pos = e + 1
	}
	regionStart := fs.regionStart
	line := fs.lineNo + bytes.Count(data[pos:ls], newline)
	if c > 0 {
		first := max(line-c, fs.emitted+1, 1)
		inRegion := min(line-first, line-regionStart)
		if fromTail := line - first - inRegion; fromTail > 0 {
			for t := len(fs.tail) - fromTail; t < len(fs.tail); t++ {
				if t >= 0 {
					fs.emit(fs.tailNo+t, fs.tail[t], false)
				}
			}
		}
		fs.spans = fs.spans[:0]
		s := ls
		for range inRegion {
			e := s - 1
			s = bytes.LastIndexByte(data[:e], '\n') + 1
			fs.spans = append(fs.spans, [2]int{s, e})
		}
		for i := len(fs.spans) - 1; i >= 0; i-- {
			sp := fs.spans[i]
			fs.emit(line-1-i, data[sp[0]:sp[1]], false)
		}
	}
	fs.emit(line, data[ls:le], true)
	fs.after = c
	fs.lineNo = line + 1
	if le >= len(data) {
		fs.lineNo = line // unterminated: no newline to count
	}
	return le + 1
}

// saveTail keeps copies of the last c complete lines of data.
func (fs *fileScan) saveTail(data []byte, c int) {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	} else {
		// The region ends inside a line; its complete lines end earlier.
		end = bytes.LastIndexByte(data, '\n')
		if end < 0 {
			return
		}
	}
	spans := fs.spans[:0]
	for len(spans) < c && end >= 0 {
		s := bytes.LastIndexByte(data[:end], '\n') + 1
		spans = append(spans, [2]int{s, end})
		if s == 0 {
			break
		}
		end = s - 1
	}
	old := fs.tail[:cap(fs.tail)]
	fs.tail = fs.tail[:0]
	for i := len(spans) - 1; i >= 0; i-- {
		var b []byte
		if k := len(fs.tail); k < len(old) {
			b = old[k][:0]
		}
		line := data[spans[i][0]:spans[i][1]]
		if len(line) > 4*maxLineChars {
			line = line[:4*maxLineChars] // only ever shown cut
		}
		fs.tail = append(fs.tail, append(b, line...))
	}
	fs.spans = spans
	// lineNo is the line after the region (or the line it stops inside), so
	// the saved complete lines are the ones just before it.
	fs.tailNo = fs.lineNo - len(fs.tail)
}

// emit writes one content line: `path:n:text` for a match, `path-n-text`
// for context, with "--" between non-adjacent groups (ripgrep's format).
func (fs *fileScan) emit(n int, line []byte, match bool) {
	if fs.full || n <= fs.emitted {
		return
	}
	if fs.capped {
		fs.full = true // a line beyond the bound: the output is cut
		return
	}
	if fs.emitted > 0 && n != fs.emitted+1 && fs.g.o.Context > 0 {
		fs.out = append(fs.out, "--\n"...)
	}
	sep := byte('-')
	if match {
		sep = ':'
	}
	if plainName(fs.rel) && plainName(fs.g.o.DisplayPrefix) {
		fs.out = append(fs.out, fs.g.o.DisplayPrefix...)
		fs.out = append(fs.out, fs.rel...)
	} else {
		fs.out = append(fs.out, DisplayName(fs.g.o.DisplayPrefix+fs.rel)...)
	}
	fs.out = append(fs.out, sep)
	fs.out = strconv.AppendInt(fs.out, int64(n), 10)
	fs.out = append(fs.out, sep)
	fs.out = appendCut(fs.out, line, fs.g.m, match)
	fs.out = append(fs.out, '\n')
	fs.lines++
	fs.emitted = n
	if fs.lines >= fs.g.headLimit || len(fs.out) >= fs.g.maxBytes {
		fs.capped = true
	}
}

// appendCut appends line, cut to maxLineChars characters. A long matching
// line is shown from shortly before its first match, so the hit is visible.
func appendCut(dst, line []byte, m lineMatcher, match bool) []byte {
	if len(line) <= maxLineChars {
		return append(dst, line...)
	}
	total := utf8.RuneCount(line)
	if total <= maxLineChars {
		return append(dst, line...)
	}
	start := 0
	if match {
		if i := m.index(line); i > maxLineChars-100 {
			start = i - 100
			for start > 0 && !utf8.RuneStart(line[start]) {
				start--
			}
		}
	}
	end, n := start, 0
	for end < len(line) && n < maxLineChars {
		_, size := utf8.DecodeRune(line[end:])
		end += size
		n++
	}
	if start > 0 {
		dst = append(dst, "[…] "...)
	}
	dst = append(dst, line[start:end]...)
	dst = append(dst, " [… line cut: "...)
	dst = strconv.AppendInt(dst, int64(maxLineChars), 10)
	dst = append(dst, " of "...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	return append(dst, " characters shown]"...)
}

var newline = []byte{'\n'}
