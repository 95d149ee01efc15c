package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"hostcore/perms"
	"hostcore/sandbox"
)

// Read limits; the tool description is generated from them.
const (
	ReadDefaultLines = 2000
	ReadMaxLineChars = 2000
	// ReadCountLimit: files up to this size get an exact totalLines even
	// when only a window is shown; bigger ones are not read past the window.
	ReadCountLimit = 64 << 20
	readMaxOutput  = 256 << 10
)

var readDescription = fmt.Sprintf("Read a text file in the workspace (or an absolute path in the session scratch directory). "+
	"Lines are numbered like cat -n. At most %d lines are returned by default; use offset (1-based line) and limit to page. "+
	"Lines longer than %d characters are cut. Binary files are refused. A directory is refused: use Glob to list files.",
	ReadDefaultLines, ReadMaxLineChars)

// readerPool reuses Read's 64 KiB buffers across calls.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// Read is the Read tool.
var Read = Tool[ReadArgs, ReadDetails]{
	Spec: Spec{Name: "Read", Class: perms.ClassRead, Risk: perms.RiskLow, Description: readDescription, PathArg: "path"},
	Run:  runRead,
}

// ReadArgs are Read's arguments.
type ReadArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// ReadDetails is Read's details.
type ReadDetails struct {
	TotalLines *int `json:"totalLines"` // null when the file was too big to count past the window
	StartLine  int  `json:"startLine"`
	EndLine    int  `json:"endLine"`
	Truncated  bool `json:"truncated"`
}

// ReadDirectory is the details of a Read of a directory: the call to
// make instead.
type ReadDirectory struct {
	Suggestion struct {
		Tool string   `json:"tool"`
		Args GlobArgs `json:"args"`
	} `json:"suggestion"`
}

func runRead(ctx context.Context, c *Call, a ReadArgs) (Out[ReadDetails], error) {
	var none Out[ReadDetails]
	if a.Offset <= 0 {
		a.Offset = 1
	}
	if a.Limit <= 0 {
		a.Limit = ReadDefaultLines
	}
	f, fi, err := sandbox.OpenRegular(c.Target)
	switch {
	case errors.Is(err, sandbox.ErrIsDir):
		f := Fail(CodeInvalidArgument, "%s is a directory, not a file: use Glob with path %q to list its files", c.Target.Display, c.Target.Display)
		var d ReadDirectory
		d.Suggestion.Tool, d.Suggestion.Args = "Glob", GlobArgs{Pattern: "*", Path: c.Target.Display}
		f.Details = d
		return none, f
	case errors.Is(err, sandbox.ErrNotRegular):
		return none, Fail(CodeInvalidArgument, "%s is not a regular file (FIFO, socket or device); it was not opened", c.Target.Display)
	case errors.Is(err, fs.ErrNotExist):
		return none, Fail(CodeToolFailed, "file not found: %s", c.Target.Display)
	case err != nil:
		return none, Fail(CodeToolFailed, "cannot read %s: %v", c.Target.Display, err)
	}
	defer f.Close()

	br := readerPool.Get().(*bufio.Reader)
	br.Reset(&onceEOF{r: f})
	defer func() { br.Reset(nil); readerPool.Put(br) }()
	head, _ := br.Peek(8 << 10)
	if bytes.IndexByte(head, 0) >= 0 {
		return none, Fail(CodeToolFailed, "%s is a binary file (%d bytes); Read only shows text", c.Target.Display, fi.Size())
	}

	var out strings.Builder
	line, shown, lastShown := 0, 0, 0
	truncated, counted := false, true
	if a.Offset > 1 {
		line, err = skipLines(ctx, br, a.Offset-1)
		switch {
		case errors.Is(err, errNUL):
			return none, Fail(CodeToolFailed, "%s is a binary file (a NUL byte at line %d, %d bytes); Read only shows text", c.Target.Display, line+1, fi.Size())
		case ctx.Err() != nil:
			return none, ErrAborted
		case err != nil:
			return none, Fail(CodeToolFailed, "reading %s: %v", c.Target.Display, sandbox.ReadErr(err))
		}
	}
	for {
		if ctx.Err() != nil {
			return none, ErrAborted
		}
		if line+1 >= a.Offset && (shown == a.Limit || out.Len() > readMaxOutput) {
			if _, err := br.Peek(1); err == io.EOF {
				break // the window ended with the file: nothing was cut
			}
			// The window is full: count what is left without keeping it,
			// unless the file is too big to be worth reading to the end.
			truncated = true
			if fi.Size() > ReadCountLimit {
				counted = false
				break
			}
			rest, err := countLines(ctx, br)
			if err != nil {
				return none, Fail(CodeToolFailed, "reading %s: %v", c.Target.Display, sandbox.ReadErr(err))
			}
			line += rest
			break
		}
		// A shown line of a file too big to count is read no further than
		// ReadCountLimit: a 2 GB file of one line with limit 10 needs its
		// first 2000 characters, not the rest of the line.
		budget := 0
		if line+1 >= a.Offset && fi.Size() > ReadCountLimit {
			budget = ReadCountLimit
		}
		text, more, err := readLine(ctx, br, ReadMaxLineChars, budget)
		if text == nil {
			switch {
			case errors.Is(err, errNUL):
				return none, Fail(CodeToolFailed, "%s is a binary file (a NUL byte at line %d, %d bytes); Read only shows text", c.Target.Display, line+1, fi.Size())
			case ctx.Err() != nil:
				return none, ErrAborted
			}
			if err != nil && err != io.EOF {
				return none, Fail(CodeToolFailed, "reading %s: %v", c.Target.Display, sandbox.ReadErr(err))
			}
			break
		}
		line++
		if line >= a.Offset {
			out.WriteString(strconv.Itoa(line))
			out.WriteByte('\t')
			out.Write(bytes.TrimSuffix(text, []byte("\r")))
			switch {
			case errors.Is(err, errLineUnfinished):
				fmt.Fprintf(&out, "… [line cut: more than %d more characters; the rest of the line was not read]", more)
			case more > 0:
				fmt.Fprintf(&out, "… [line cut: %d more characters]", more)
			}
			out.WriteByte('\n')
			shown++
			lastShown = line
		}
		if err == io.EOF {
			break
		}
		if errors.Is(err, errLineUnfinished) {
			truncated, counted = true, false
			break
		}
	}
	if truncated && !counted {
		line = -1
	}
	d := ReadDetails{StartLine: a.Offset, EndLine: lastShown, Truncated: truncated}
	if line >= 0 {
		total := line
		d.TotalLines = &total
	}
	if shown == 0 {
		d.StartLine, d.EndLine = 0, 0
		if line >= 0 && a.Offset > line && line > 0 {
			f := Fail(CodeInvalidArgument, "offset %d is past the end of %s (%d lines)", a.Offset, c.Target.Display, line)
			f.Details = d
			return none, f
		}
	}
	if truncated {
		fmt.Fprintf(&out, "[... truncated: showing lines %d-%d", d.StartLine, d.EndLine)
		if d.TotalLines != nil {
			fmt.Fprintf(&out, " of %d", *d.TotalLines)
		}
		fmt.Fprintf(&out, "; use offset %d to continue]\n", lastShown+1)
	}
	text := out.String()
	if shown == 0 && !truncated {
		text = "(empty file)"
	}
	return Out[ReadDetails]{Text: text, Details: d}, nil
}

// onceEOF ends its reader at the first end of file: bufio asks the
// reader again after each EOF it hands on (Peek, then the last line's
// ReadSlice), and each ask is a read system call that finds nothing.
type onceEOF struct {
	r   io.Reader
	eof bool
}

func (o *onceEOF) Read(p []byte) (int, error) {
	if o.eof {
		return 0, io.EOF
	}
	n, err := o.r.Read(p)
	o.eof = err == io.EOF
	return n, err
}

// errNUL: a line holds a NUL byte, so the file is binary after all (the
// check at the open only sees its first 8 KiB).
var errNUL = errors.New("NUL byte")

// errLineUnfinished: readLine stopped inside a line at its byte budget.
var errLineUnfinished = errors.New("line not read to its end")

// readLine returns one line without its '\n', keeping at most max
// characters and reporting how many were dropped; it never holds more than
// max characters of a line in memory, and checks ctx between buffers, so a
// line of gigabytes (a sparse file) is neither kept nor read past a cancel.
// It returns nil at the end of input, and errNUL for a line with a NUL byte.
// With a budget above 0 it reads at most about that many bytes of the
// line and returns what it has with errLineUnfinished when the line goes
// on past them.
func readLine(ctx context.Context, br *bufio.Reader, max, budget int) ([]byte, int, error) {
	var line, carry []byte
	got, runes, dropped, read := false, 0, 0, 0
	var last byte // the line's last byte before its '\n'
	for {
		chunk, err := br.ReadSlice('\n')
		got = got || len(chunk) > 0
		read += len(chunk)
		if bytes.IndexByte(chunk, 0) >= 0 {
			return nil, 0, errNUL
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
		}
		data := chunk
		if len(carry) > 0 {
			data = append(carry, chunk...)
			carry = nil
		}
		for len(data) > 0 && runes < max {
			if err == bufio.ErrBufferFull && !utf8.FullRune(data) {
				carry = append([]byte(nil), data...) // a rune split across reads
				data = nil
				break
			}
			_, size := utf8.DecodeRune(data)
			line = append(line, data[:size]...)
			runes++
			data = data[size:]
		}
		// Past max, characters are only counted: every byte that does not
		// continue a sequence starts one, however the buffer split them.
		for _, b := range data {
			if b&0xC0 != 0x80 {
				dropped++
			}
		}
		switch {
		case err == bufio.ErrBufferFull && budget > 0 && read >= budget && len(carry) == 0 && !endsNext(br):
			return line, dropped, errLineUnfinished
		case err == bufio.ErrBufferFull:
			if cerr := ctx.Err(); cerr != nil {
				return nil, 0, cerr
			}
			continue
		case err != nil && err != io.EOF:
			return nil, 0, err
		case err == io.EOF && !got:
			return nil, 0, io.EOF
		}
		if line == nil {
			line = []byte{}
		}
		if err == nil && dropped > 0 && last == '\r' {
			dropped-- // the '\r' of a CRLF ending is no character of the line
		}
		return line, dropped, err
	}
}

// endsNext says whether the line ends with br's next bytes ("\n", "\r\n",
// or the end of input): a line that ends right at readLine's budget is
// read to its end, not called unfinished.
func endsNext(br *bufio.Reader) bool {
	next, _ := br.Peek(2)
	return len(next) == 0 || next[0] == '\n' || string(next) == "\r\n"
}
