package search

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadPattern wraps an invalid regular expression or glob; the message
// says what is wrong, and the handler answers INVALID_ARGUMENT with it.
var ErrBadPattern = errors.New("invalid pattern")

// Limits applied when the options leave them zero.
const (
	DefaultGlobHeadLimit = 100
	DefaultGrepHeadLimit = 250
	DefaultGrepMaxBytes  = 50 * 1024
)

// Grep output modes.
const (
	ModeFilesWithMatches = "files_with_matches"
	ModeCount            = "count"
	ModeContent          = "content"
)

// GlobOptions is one Glob call; the handler has resolved and checked Root.
type GlobOptions struct {
	Root      string // canonical absolute directory to search
	RootIdent Ident  // when set, Root must still be this directory once opened
	Pattern   string // doublestar pattern relative to Root, e.g. "**/*_test.go", "*.go", "src/**/x.{ts,tsx}"
	HeadLimit int    // default 100 when 0
}

// GlobResult lists matches newest first; Count is the total before the limit.
type GlobResult struct {
	Paths     []string // slash paths relative to Root, newest first by modification time (ties: path order), at most HeadLimit
	Count     int      // every match found
	Truncated bool
}

// GrepOptions is one Grep call; the handler has resolved and checked Root.
type GrepOptions struct {
	Root       string // canonical absolute directory, or a regular file searched alone (Include still filters its base name)
	RootIdent  Ident  // when set, Root must still be this directory or file once opened
	Pattern    string // RE2 syntax (Go regexp)
	Include    string // glob on the file's base name (e.g. "*.go", "*.{ts,tsx}"); with a "/" it is matched against the root-relative path; empty = all
	IgnoreCase bool
	Mode       string // "files_with_matches" (default), "count", "content"
	Context    int    // lines of context before/after in content mode
	HeadLimit  int    // default 250 output entries (lines/files) when 0
	MaxBytes   int    // whole-text bound, default 50*1024
	// DisplayPrefix is put before every path in Text, so the caller can show
	// paths relative to something other than Root (e.g. the workspace).
	DisplayPrefix string
}

// GrepResult is the bounded text for the model and the totals for details.
type GrepResult struct {
	// Text holds one entry a line: `path` (files_with_matches), `path:count`
	// (count), or `path:line:text` for matches and `path-line-text` for
	// context lines with "--" between non-adjacent groups (content). Paths
	// are relative to Root (the base name for a single-file Root), sorted.
	// A notice line ends it when output was cut.
	Text string
	// Files is the number of files with at least one match.
	Files int
	// Matches is the number of matching lines, in every mode: in
	// files_with_matches mode too a file is read to its end, unlike
	// `rg -l`, so the count the details report is true.
	Matches   int
	Truncated bool
}

// Glob lists the files under o.Root whose root-relative path matches
// o.Pattern, with the walk filters of Grep (ignore files, hidden names,
// symlinks). The static prefix of the pattern ("src/" in "src/**/*.ts") is
// walked directly and a pattern without "**" bounds the walk depth.
//
// Differences from `rg --files -g`: the pattern is a doublestar path pattern
// relative to the root, so "*.go" matches only top-level files ("**/*.go"
// matches at any depth); and a pattern with a dot-name segment (".github/**")
// also walks hidden entries, ".git" excepted.
func Glob(ctx context.Context, o GlobOptions) (GlobResult, error) {
	if o.HeadLimit <= 0 {
		o.HeadLimit = DefaultGlobHeadLimit
	}
	pattern := strings.TrimPrefix(o.Pattern, "./")
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return GlobResult{}, fmt.Errorf("%w: glob %q does not parse", ErrBadPattern, o.Pattern)
	}
	if strings.HasPrefix(pattern, "/") {
		return GlobResult{}, fmt.Errorf("%w: glob %q must be relative to the search path", ErrBadPattern, o.Pattern)
	}
	hidden := namesHidden(pattern)
	base, rest := doublestar.SplitPattern(pattern)
	if base == "." {
		base = ""
	}
	maxDepth := -1
	if !strings.Contains(rest, "**") {
		maxDepth = strings.Count(rest, "/")
	}
	match := globMatcher(pattern)

	chain, prefix := ancestorIgnores(o.Root)
	start := o.Root
	if base != "" {
		var ok bool
		if chain, ok = descend(o.Root, base, prefix, chain, hidden); !ok {
			return GlobResult{}, ctx.Err()
		}
		start = filepath.Join(o.Root, filepath.FromSlash(base))
	}

	rootFd, err := openRoot(o.Root, o.RootIdent)
	if err != nil {
		return GlobResult{}, err
	}
	defer closeFd(rootFd)

	// Only the HeadLimit newest matches are kept (a bounded heap, oldest
	// on top), so a pattern over a huge tree costs memory for what is
	// shown, not for every match; count covers them all.
	var (
		mu    sync.Mutex
		hits  globHeap
		count int
	)
	err = walk(ctx, walkOptions{
		root:       start,
		rootRel:    base,
		rootFd:     rootFd,
		prefix:     prefix,
		ignore:     chain,
		hidden:     hidden,
		maxDepth:   maxDepth,
		fileInline: true,
		visit: func(_ *worker, abs, rel string) error {
			if !match(rel) {
				return nil
			}
			fi, err := os.Lstat(abs)
			if err != nil {
				return nil
			}
			h := globHit{rel, fi.ModTime().UnixNano()}
			mu.Lock()
			count++
			if len(hits) < o.HeadLimit {
				heap.Push(&hits, h)
			} else if newer(h, hits[0]) {
				hits[0] = h
				heap.Fix(&hits, 0)
			}
			mu.Unlock()
			return nil
		},
	})
	if err != nil {
		return GlobResult{}, err
	}
	slices.SortFunc(hits, func(a, b globHit) int {
		switch {
		case newer(a, b):
			return -1
		case newer(b, a):
			return 1
		}
		return 0
	})
	res := GlobResult{Count: count, Truncated: count > len(hits)}
	for _, h := range hits {
		res.Paths = append(res.Paths, h.rel)
	}
	return res, nil
}

// globHit is one Glob match.
type globHit struct {
	rel   string
	mtime int64
}

// newer orders matches as Glob lists them: newest first, then by path.
func newer(a, b globHit) bool {
	if a.mtime != b.mtime {
		return a.mtime > b.mtime
	}
	return a.rel < b.rel
}

// globHeap keeps the listed matches with the one to drop first on top.
type globHeap []globHit

func (h globHeap) Len() int           { return len(h) }
func (h globHeap) Less(i, j int) bool { return newer(h[j], h[i]) }
func (h globHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *globHeap) Push(x any)        { *h = append(*h, x.(globHit)) }
func (h *globHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// globMatcher returns the path test for a Glob pattern. The common
// "**/<name pattern>" form is matched on the base name alone.
func globMatcher(pattern string) func(rel string) bool {
	if name, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.Contains(name, "/") && !strings.Contains(name, "**") {
		return func(rel string) bool {
			return doublestar.MatchUnvalidated(name, path.Base(rel))
		}
	}
	return func(rel string) bool { return doublestar.MatchUnvalidated(pattern, rel) }
}

// namesHidden reports whether a pattern spells out a dot-name segment, which
// asks for hidden entries explicitly.
func namesHidden(pattern string) bool {
	for seg := range strings.SplitSeq(pattern, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

// descend applies the walk's filters to each directory of a pattern's
// static prefix, loading their ignore files, so that starting the walk below
// the root lists exactly what a walk from the root would.
func descend(root, base, prefix string, chain *ignoreNode, hidden bool) (*ignoreNode, bool) {
	dir, rel := root, ""
	for part := range strings.SplitSeq(base, "/") {
		var has [len(ignoreFileNames)]bool
		for i, name := range ignoreFileNames {
			_, err := os.Lstat(filepath.Join(dir, name))
			has[i] = err == nil
		}
		topRel := joinRel(prefix, rel)
		chain = loadIgnoreDir(chain, dir, topRel, has)
		if part == "" || part == ".." || part == "." || part == ".git" || (part[0] == '.' && !hidden) {
			return nil, false
		}
		dir = filepath.Join(dir, part)
		if lstatType(dir) != typeDir {
			return nil, false
		}
		if chain != nil && chain.ignored(topRel, part, true) {
			return nil, false
		}
		rel = joinRel(rel, part)
	}
	return chain, true
}

// Grep searches o.Root for lines matching o.Pattern.
//
// Behaviour follows ripgrep's defaults: ignore files (.gitignore at every
// level, .ignore, .git/info/exclude, and those of the enclosing work tree
// above the root) are honoured; hidden entries, ".git" and symlinks are
// skipped; a file is binary from the first NUL byte: the read (64 KiB, as
// ripgrep's buffer) holding it and everything after is not searched, so a
// match in an earlier read still counts, as with `rg -l`.
//
// Differences from ripgrep: .gitignore files apply even outside a git work
// tree (ripgrep needs --no-require-git for that); in count and content modes
// matches before the binary cut are reported, where `rg -c` drops the file;
// a case-insensitive ASCII literal does not match the Kelvin sign or long s
// (which ripgrep's Unicode folding equates with k and s); a single file root
// is searched even if ignored.
func Grep(ctx context.Context, o GrepOptions) (GrepResult, error) {
	g, err := newGrepRun(ctx, o)
	if err != nil {
		return GrepResult{}, err
	}
	st, err := os.Stat(o.Root)
	if err != nil {
		return GrepResult{}, err
	}
	if st.Mode().IsRegular() {
		g.rootFd, g.fileIdent = -1, o.RootIdent
		name := filepath.Base(o.Root)
		if g.include == nil || g.include.match(name) {
			if err := g.scanFile(newScanState().(*scanState), o.Root, name); err != nil {
				return GrepResult{}, err
			}
		}
		return g.result(), nil
	}
	if !st.IsDir() {
		return GrepResult{}, fmt.Errorf("search root %s is neither a directory nor a regular file", o.Root)
	}
	if g.rootFd, err = openRoot(o.Root, o.RootIdent); err != nil {
		return GrepResult{}, err
	}
	defer closeFd(g.rootFd)
	chain, prefix := ancestorIgnores(o.Root)
	err = walk(ctx, walkOptions{
		root:     o.Root,
		rootFd:   g.rootFd,
		prefix:   prefix,
		ignore:   chain,
		maxDepth: -1,
		// An include that names a dot-name (.env, .github/**) asks for
		// hidden entries, as Glob's pattern does.
		hidden:   namesHidden(o.Include),
		newState: newScanState,
		visit: func(w *worker, abs, rel string) error {
			return g.scanFile(w.state.(*scanState), abs, rel)
		},
	})
	if err != nil {
		return GrepResult{}, err
	}
	return g.result(), nil
}

// Ident is a file's device and inode; the zero Ident checks nothing.
type Ident struct{ Dev, Ino uint64 }

// ErrRootChanged is a search root that is no longer the directory or file
// the caller resolved (and had approved): something was swapped in since.
var ErrRootChanged = errors.New("the search path changed since it was checked; nothing was searched")

// ErrNotPorted answers Glob and Grep where the walk is not ported yet
// (Windows; see sys_windows.go): it opens every entry beneath a directory
// descriptor held open, refusing links (openat2, or O_NOFOLLOW), and
// checks roots by device and inode, and a walk without that could be led
// out of the root.
var ErrNotPorted = errors.New("searching files (Glob, Grep) is not supported on this platform yet")

// openRoot opens the search root that every walked path is resolved
// beneath. root is canonical: a symlink in any component of it now is a
// swap since the caller resolved it, refused (openCanonical). The
// directory opened is also checked against want, for a directory renamed
// in place of another.
func openRoot(root string, want Ident) (int, error) {
	fd, err := openCanonical(root, syscall.O_RDONLY|oDirectory)
	if err == syscall.ELOOP {
		return -1, ErrRootChanged
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	if err := checkIdent(fd, want); err != nil {
		closeFd(fd)
		return -1, err
	}
	return fd, nil
}

// checkIdent compares an open file with want (unless want is zero).
func checkIdent(fd int, want Ident) error {
	if want == (Ident{}) {
		return nil
	}
	got, err := fdIdent(fd)
	if err != nil {
		return err
	}
	if got != want {
		return ErrRootChanged
	}
	return nil
}

type grepMode uint8

const (
	modeFiles grepMode = iota
	modeCount
	modeContent
)

// grepRun is one Grep call: its matcher, limits and the shared results.
type grepRun struct {
	ctx       context.Context
	o         GrepOptions
	rootFd    int   // the directory searched, or -1 for a single-file root
	fileIdent Ident // a single-file root's expected identity
	m         lineMatcher
	mode      grepMode
	include   *nameFilter
	headLimit int
	maxBytes  int

	mu       sync.Mutex
	results  []fileResult
	textSize int
	cutoff   string // content of files sorting after this is never shown
}

type fileResult struct {
	rel   string
	count int
	text  []byte // content mode only
	lines int
	full  bool // text stops before the file's last match
}

func newGrepRun(ctx context.Context, o GrepOptions) (*grepRun, error) {
	g := &grepRun{ctx: ctx, o: o, headLimit: o.HeadLimit, maxBytes: o.MaxBytes}
	if g.headLimit <= 0 {
		g.headLimit = DefaultGrepHeadLimit
	}
	if g.maxBytes <= 0 {
		g.maxBytes = DefaultGrepMaxBytes
	}
	switch o.Mode {
	case "", ModeFilesWithMatches:
		g.mode = modeFiles
	case ModeCount:
		g.mode = modeCount
	case ModeContent:
		g.mode = modeContent
	default:
		return nil, fmt.Errorf("%w: unknown output mode %q", ErrBadPattern, o.Mode)
	}
	if o.Context < 0 {
		g.o.Context = 0
	}
	m, err := compileMatcher(o.Pattern, o.IgnoreCase)
	if err != nil {
		return nil, err
	}
	g.m = m
	if o.Include != "" {
		f, err := newNameFilter(o.Include)
		if err != nil {
			return nil, err
		}
		g.include = f
	}
	return g, nil
}

// add records a file with matches. Content text is kept only while it could
// still be shown: once the files sorting first already fill the output, the
// text of files after them is dropped, so memory stays near MaxBytes however
// many files match.
func (g *grepRun) add(fs *fileScan) {
	r := fileResult{rel: fs.rel, count: fs.count, lines: fs.lines, full: fs.full}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mode == modeContent && (g.cutoff == "" || r.rel < g.cutoff) {
		r.text = slices.Clone(fs.out)
		g.textSize += len(r.text)
	}
	g.results = append(g.results, r)
	if g.textSize > 4*g.maxBytes+readChunk {
		g.prune()
	}
}

func (g *grepRun) prune() {
	slices.SortFunc(g.results, func(a, b fileResult) int { return strings.Compare(a.rel, b.rel) })
	size, lines := 0, 0
	for i := range g.results {
		r := &g.results[i]
		if size >= g.maxBytes || lines >= g.headLimit {
			if g.cutoff == "" || r.rel < g.cutoff {
				g.cutoff = r.rel
			}
			r.text = nil
			continue
		}
		size += len(r.text)
		lines += r.lines
	}
	g.textSize = size
}

// result assembles the bounded text in path order.
func (g *grepRun) result() GrepResult {
	slices.SortFunc(g.results, func(a, b fileResult) int { return strings.Compare(a.rel, b.rel) })
	var res GrepResult
	for _, r := range g.results {
		res.Files++
		res.Matches += r.count
	}
	const noticeRoom = 256
	budget := g.maxBytes - noticeRoom
	var b strings.Builder
	entries := 0
	cut := false
	add := func(line string, entry bool) bool {
		if (entry && entries >= g.headLimit) || b.Len()+len(line)+1 > budget {
			cut = true
			return false
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if entry {
			entries++
		}
		return true
	}
outer:
	for i, r := range g.results {
		switch g.mode {
		case modeFiles:
			if !add(DisplayName(g.o.DisplayPrefix+r.rel), true) {
				break outer
			}
		case modeCount:
			if !add(DisplayName(g.o.DisplayPrefix+r.rel)+":"+strconv.Itoa(r.count), true) {
				break outer
			}
		case modeContent:
			if r.text == nil {
				cut = true // pruned: files before it already fill the output
				break outer
			}
			if i > 0 && g.o.Context > 0 && !add("--", false) {
				break outer
			}
			for line := range strings.Lines(string(r.text)) {
				line = strings.TrimSuffix(line, "\n")
				if !add(line, line != "--") {
					break outer
				}
			}
			if r.full {
				cut = true // the file's own output was capped while scanning
				break outer
			}
		}
	}
	if cut {
		res.Truncated = true
		var what string
		switch g.mode {
		case modeFiles:
			what = fmt.Sprintf("%d of %d files listed", entries, res.Files)
		case modeCount:
			what = fmt.Sprintf("%d of %d files counted", entries, res.Files)
		default:
			what = fmt.Sprintf("%d lines shown; %d matching lines in %d files", entries, res.Matches, res.Files)
		}
		fmt.Fprintf(&b, "[output truncated: %s; narrow the pattern, path or include]\n", what)
	}
	res.Text = b.String()
	return res
}

// nameFilter is Grep's include glob.
type nameFilter struct {
	pattern string
	suffix  string // fast path for "*.ext"
	path    bool   // pattern has a "/": match the relative path
}

func newNameFilter(p string) (*nameFilter, error) {
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("%w: include glob %q does not parse", ErrBadPattern, p)
	}
	f := &nameFilter{pattern: p, path: strings.Contains(p, "/")}
	if s, ok := strings.CutPrefix(p, "*"); ok && !f.path && !strings.ContainsAny(s, `*?[{\`) {
		f.suffix = s
	}
	return f, nil
}

func (f *nameFilter) match(rel string) bool {
	if f.path {
		return doublestar.MatchUnvalidated(f.pattern, rel)
	}
	name := path.Base(rel)
	if f.suffix != "" || f.pattern == "*" {
		return strings.HasSuffix(name, f.suffix)
	}
	return doublestar.MatchUnvalidated(f.pattern, name)
}

// DisplayName is how a path is written into a tool's text: as it is, or,
// when it holds a control character (a newline above all, C1 controls, the
// Unicode line and paragraph separators, bidirectional overrides) or bytes
// that are not UTF-8, quoted with Go's escapes. A file named
// "a.txt:1:needle\nevil.go" would otherwise forge a second result line.
func DisplayName(p string) string {
	if plainName(p) {
		return p
	}
	return strconv.Quote(p)
}

// plainName says p can be written as it is (DisplayName).
func plainName(p string) bool {
	for i := 0; i < len(p); i++ {
		if b := p[i]; b < 0x20 || b >= 0x7f {
			return plainUnicode(p)
		}
	}
	return true
}

func plainUnicode(p string) bool {
	if !utf8.ValidString(p) {
		return false
	}
	for _, r := range p {
		switch {
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0x2028, r == 0x2029,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return false
		}
	}
	return true
}
