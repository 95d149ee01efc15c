package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MaxLine is the largest line accepted; a longer one is answered -32600 and
// skipped without being held in memory.
const MaxLine = 16 << 20

// lineStream is newline-delimited JSON-RPC on a reader and a writer. Its
// reading side (this file) frames: it reads lines, answers those that
// are no message (-32700, -32600) and hands on requests and replies; its
// writing side (write.go) writes whole lines.
type lineStream struct {
	r *bufio.Reader
	// ended is set once a read found the end of input (or failed): a
	// terminal's end (Ctrl-D) holds for the next read only, so without it
	// hostcore would read on after the last line (cat stops there).
	ended bool
	// owes says whether a host→client request with this id (as JSON
	// text) waits for its reply: a message with one of them and no method
	// is a reply, however malformed, and is never answered.
	owes func(id []byte) bool

	// Every line is written whole by one Write, under wmu: lines are
	// answered as soon as they are ready, so a buffer would only copy.
	wmu sync.Mutex
	w   io.Writer
	// broken is set after a write fails: the client is gone.
	broken  bool
	onBreak func()
	// afterHeader is set once a line was a Content-Length header: the
	// header lines and the body that follow it belong to a message framed
	// in a way hostcore does not read (headerFollowUp). Read goroutine only.
	afterHeader bool
	// draining is set once the server is shutting down: from then on each
	// write gets writeDrain to complete (see Run), if w takes deadlines.
	draining atomic.Bool

	// nowaitFd is stdout's descriptor when writes to it never block
	// (writeLineNow), else -1.
	nowaitFd int
	// queue holds the lines writeLineNow left behind, queued their
	// bytes; qdone, while the goroutine writing them runs, is closed
	// when it is done. Under qmu.
	qmu    sync.Mutex
	queue  [][]byte
	queued int
	qdone  chan struct{}

	// waiting counts the bytes of lines waiting in writeLine (answers
	// and notifications of running calls that the client has not taken
	// yet); behindRunning the calls waitForRoom let run while the client
	// was behind whose answers are not written yet. wake, while a call
	// waits there, is closed when either falls. Under wamu.
	wamu          sync.Mutex
	waiting       int64
	waitingMax    int64
	behindRunning int
	wake          chan struct{}

	log *slog.Logger
}

func newLineStream(r io.Reader, w io.Writer, log *slog.Logger) *lineStream {
	return &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, log: log, nowaitFd: -1}
}

// message is one well-formed line: a request (method set) or a reply to
// a host→client request.
type message struct {
	method string
	// id is the request's id as sent (nil: a notification), or the
	// reply's.
	id     json.RawMessage
	params json.RawMessage
	// A reply carries its result or its error (the client's, or one
	// saying why the reply is malformed).
	result json.RawMessage
	err    *Error
}

// next returns the next message; lines that are none are answered (or, a
// malformed reply without a usable id, dropped) and skipped. At the end
// of input (or a read error) it returns io.EOF, and from then on.
func (s *lineStream) next() (message, error) {
	for {
		line, err := s.nextLine()
		if err == errLineTooLong {
			s.replyError(nil, CodeInvalidRequest, "line exceeds 16 MiB", "INVALID_ARGUMENT")
			continue
		}
		if err != nil {
			return message{}, io.EOF
		}
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if m, ok := s.parse(line); ok {
			return m, nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to '\n', refusing lines over MaxLine without buffering
// them whole. A trailing '\r' is dropped. The last line may lack '\n'.
func (s *lineStream) readLine() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLine+2 {
				tooLong = true
				buf = nil
			} else {
				buf = grow(buf, len(chunk))
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			// Any read error ends the input (nextLine): the next read
			// answers EOF without reading again, after a last line with
			// no line ending or one too long too.
			s.ended = true
			if tooLong {
				return nil, errLineTooLong
			}
			if len(buf) > 0 && err == io.EOF {
				return trimEOL(buf), nil
			}
			return nil, err
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return trimEOL(buf), nil
	}
}

// grow makes room for n more bytes in buf, doubling its capacity: a long
// line (a large Write) arrives in bufio-sized pieces, and append's own
// growth, a quarter at a time past a few hundred KiB, made reading a 15 MiB
// line take 70-170 ms against 10-35 ms doubled (BenchmarkReadLongLine).
// The capacity stops at the longest line readLine keeps.
func grow(buf []byte, n int) []byte {
	if len(buf)+n <= cap(buf) {
		return buf
	}
	nb := make([]byte, len(buf), min(max(2*cap(buf), len(buf)+n), max(MaxLine+2, len(buf)+n)))
	copy(nb, buf)
	return nb
}

// nextLine reads one line. readLine's cap while reading leaves room for
// "\r\n"; the limit itself is on the line without its ending (checked
// here, once it is known).
func (s *lineStream) nextLine() ([]byte, error) {
	if s.ended {
		return nil, io.EOF
	}
	line, err := s.readLine()
	if err == nil && len(line) > MaxLine {
		return nil, errLineTooLong
	}
	if err != nil && err != errLineTooLong && err != io.EOF {
		// A terminal hung up (EIO), a descriptor closed under hostcore:
		// nothing more can be read, as at EOF.
		s.log.Warn("reading stdin failed; ending as at end of input", "err", err)
		err = io.EOF
	}
	return line, err
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// probe is a message's envelope as read.
type probe struct {
	JSONRPC *string
	ID      json.RawMessage
	Method  json.RawMessage
	Params  json.RawMessage
	Result  json.RawMessage
	Error   json.RawMessage
	// members holds every member, as read.
	members map[string]json.RawMessage
}

func (p probe) hasMethod() bool { return len(p.Method) > 0 && string(p.Method) != "null" }
func (p probe) hasResult() bool { return len(p.Result) > 0 }
func (p probe) hasError() bool  { return len(p.Error) > 0 && string(p.Error) != "null" }

// frame reads a line's envelope; a line that is not one UTF-8 JSON object
// is answered here (-32700, or -32600 for a batch or another value) and
// false returned. Both readers, the native loop's and MessageLines, start
// with it.
func (s *lineStream) frame(line []byte) (probe, bool) {
	if isContentLength(line) {
		s.refuseHeader()
		return probe{}, false
	}
	if s.afterHeader {
		s.headerFollowUp(line)
		return probe{}, false
	}
	if !utf8.Valid(line) {
		s.replyError(nil, CodeParseError, "parse error: line is not valid UTF-8", "")
		return probe{}, false
	}
	if line[0] == '{' {
		// Decoding checks the whole line first: one pass fewer than
		// checking it, then decoding it.
		p, err := readProbe(line)
		if err != nil {
			s.replyError(nil, CodeParseError, "parse error: line is not valid JSON", "")
			return probe{}, false
		}
		return p, true
	}
	switch {
	case !json.Valid(line):
		s.replyError(nil, CodeParseError, "parse error: line is not valid JSON", "")
	case line[0] == '[':
		s.replyError(nil, CodeInvalidRequest, "batch requests are not supported: send one message per line", "")
	default:
		s.replyError(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object", "")
	}
	return probe{}, false
}

// headersRefused is the answer to a Content-Length header (the framing of
// LSP and of vscode-jsonrpc's default stream reader): said in full, since a
// client that frames so cannot read hostcore's lines and its author reads
// the traffic to find out why.
const headersRefused = "parse error: hostcore reads one JSON message per line, with no headers " +
	"(Content-Length framing is not read): write each message as one line of JSON ending in a newline"

// isContentLength says whether a line starts with a Content-Length header
// (header names are case-insensitive).
func isContentLength(line []byte) bool {
	const name = "content-length:"
	return len(line) >= len(name) && strings.EqualFold(string(line[:len(name)]), name)
}

// refuseHeader answers a Content-Length header once, and has the lines of
// the same message that follow it dropped or refused (headerFollowUp).
func (s *lineStream) refuseHeader() {
	s.replyError(nil, CodeParseError, headersRefused, "")
	s.afterHeader = true
}

// headerFollowUp takes a line that follows a Content-Length header: more
// header lines are dropped (the header was answered once); the body line
// ends the header and is not run, since a client that frames one message
// with headers frames all of them so and running some would be worse than
// running none. A body that is a request with an id is refused with its id,
// so that the client's wait for it ends; any other body is dropped. A body
// written without a line ending has the next message's header glued to
// it: that header is answered as the first was.
func (s *lineStream) headerFollowUp(line []byte) {
	if line[0] != '{' && isHeaderLine(line) {
		return
	}
	s.afterHeader = false
	if i := bytes.Index(bytes.ToLower(line), []byte("content-length:")); i > 0 {
		s.refuseHeader()
		return
	}
	p, err := readProbe(line)
	if err != nil || !p.hasMethod() || !validID(p.ID) || len(p.ID) == 0 || string(p.ID) == "null" {
		return
	}
	s.replyError(p.ID, CodeInvalidRequest, "invalid request: the message came after a Content-Length header, "+
		"and was not run: hostcore reads one JSON message per line, with no headers", "")
}

// isHeaderLine says whether a line reads as "Name: value" with a header
// name (letters, digits and dashes).
func isHeaderLine(line []byte) bool {
	name, _, ok := bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// readProbe reads the envelope members by their exact names: JSON-RPC
// member names are case-sensitive, and encoding/json's case-insensitive
// struct matching would take {"JSONRPC":"2.0","ERROR":{}} for a reply.
// A map keeps names as written (escapes decoded) and, for a member given
// twice, the last. An error says line is not one valid JSON object.
func readProbe(line []byte) (probe, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return probe{}, err
	}
	p := probe{ID: m["id"], Method: m["method"], Params: m["params"], Result: m["result"], Error: m["error"], members: m}
	if raw, ok := m["jsonrpc"]; ok {
		if v, ok := plainString(raw); ok {
			p.JSONRPC = &v
		}
	}
	return p, nil
}

// requestProblem says why a message read as a request is not one ("" when
// it is), its id's kind aside: each reader has its own rule for that.
func (p probe) requestProblem() string {
	m, _ := plainString(p.Method)
	switch {
	case p.JSONRPC == nil || *p.JSONRPC != "2.0":
		return `"jsonrpc" must be "2.0"`
	case p.hasMethod() && (p.hasResult() || p.hasError()):
		return "both method and result/error"
	case !p.hasMethod():
		return "missing method"
	case m == "":
		return "method must be a non-empty string"
	case string(p.ID) == "null":
		return "id must not be null"
	}
	return ""
}

// parse validates one line and returns its message, or false once the
// line has been answered (or dropped). It never answers a reply: a
// client's reply to one of hostcore's requests that is malformed still
// ends that request's wait, as an error reply.
func (s *lineStream) parse(line []byte) (message, bool) {
	p, ok := s.frame(line)
	if !ok {
		return message{}, false
	}
	if !p.hasMethod() && (p.hasResult() || p.hasError() || (s.owes != nil && s.owes(p.ID))) {
		return s.reply(p)
	}
	switch {
	case isNumber(p.ID):
		// JSON-RPC allows any number as an id: it is echoed as sent.
	case len(p.ID) > 0 && p.ID[0] == '"' && unicodeString(p.ID) && hasReservedPrefix(p.ID):
		s.replyError(nil, CodeInvalidRequest, `invalid request: a string id must not begin with "\u0000#"`, "")
		return message{}, false
	case !validID(p.ID):
		s.replyError(nil, CodeInvalidRequest, "invalid request: id must be a UTF-8 string or a number", "")
		return message{}, false
	}
	id := p.ID
	if string(id) == "null" {
		id = nil
	}
	if why := p.requestProblem(); why != "" {
		s.replyError(id, CodeInvalidRequest, "invalid request: "+why, "")
		return message{}, false
	}
	method, _ := plainString(p.Method)
	return message{method: method, id: id, params: p.Params}, true
}

// reply reads a client's reply to a host request. It is never answered.
// A malformed one whose id can be read becomes an error reply, so that
// the wait it answers ends now (a permission card denies, a question is
// skipped) rather than at its deadline, or never. One without a usable
// id matches nothing: dropped.
func (s *lineStream) reply(p probe) (message, bool) {
	id, idOK := wireID(p.ID)
	if !idOK || id == nil {
		s.log.Warn("reply without a usable id dropped", "id", boundedID(p.ID))
		return message{}, false
	}
	hasResult, hasError := p.hasResult(), p.hasError()
	var why string
	var e Error
	switch {
	case p.JSONRPC == nil || *p.JSONRPC != "2.0":
		why = `"jsonrpc" is not "2.0"`
	case hasResult && hasError:
		why = "it has both result and error"
	case !hasResult && !hasError:
		why = "it has neither result nor error"
	case hasError:
		if p.Error[0] != '{' || json.Unmarshal(p.Error, &e) != nil {
			why = "its error is not an object with an integer code and a string message"
		}
	}
	switch {
	case why != "":
		s.log.Warn("malformed reply from the client", "id", string(id), "why", why)
		return message{id: id, err: &Error{Code: CodeInvalidRequest, Message: "malformed reply from the client: " + why}}, true
	case hasError:
		return message{id: id, err: &e}, true
	}
	return message{id: id, result: p.Result}, true
}

// wireID returns a reply's id as raw JSON, nil when absent or null, and
// false when it is of a kind no id is (host ids are strings; a number is
// kept, to be matched against none and logged).
func wireID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	if raw[0] == '"' {
		return raw, unicodeString(raw)
	}
	return raw, isNumber(raw)
}

// validID says whether a request id is absent, null, a number or a
// string that can be echoed: an id that is not UTF-8 could be echoed
// neither as sent (the output must be UTF-8) nor changed (the client
// could not match it).
func validID(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null" || isNumber(raw) || raw[0] == '"' && unicodeString(raw)
}

// unicodeString says whether a JSON string (as written, quotes included)
// is UTF-8 and escapes no lone surrogate ("\ud800"): decoding turns one
// into U+FFFD, and an id answered with U+FFFD matches nothing the client
// sent, so such an id is refused as one that is not UTF-8 is.
func unicodeString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i++; raw[i] != 'u' {
			continue // \" \\ \n ...: i is on the escaped byte
		}
		// raw[i+1:i+5] are the digits (the line is valid JSON).
		switch r := hex4(raw[i+1:]); {
		case r < 0xd800 || r >= 0xe000:
			i += 4
		case r >= 0xdc00 || len(raw) < i+11 || raw[i+5] != '\\' || raw[i+6] != 'u':
			return false // a low half first, or a high half alone
		default:
			if low := hex4(raw[i+7:]); low < 0xdc00 || low >= 0xe000 {
				return false
			}
			i += 10
		}
	}
	return true
}

// hex4 reads the four hex digits of a \u escape; -1 if they are not.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return -1
	}
	return int(n)
}

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// hasReservedPrefix reports whether a string id decodes to a string
// beginning with NUL '#' (however it was escaped): hostcore reserves those
// ids, and refuses such a request with id null.
func hasReservedPrefix(id json.RawMessage) bool {
	str, ok := plainString(id)
	return ok && strings.HasPrefix(str, "\x00#")
}

// plainString decodes a JSON string value as json.Unmarshal into a string
// does (false for a value of another kind, "" for null); one without
// escapes is its bytes between the quotes (most are).
func plainString(raw []byte) (string, bool) {
	if string(raw) == "null" {
		return "", true // as json.Unmarshal leaves a string: untouched
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// replyError answers a line that is no message; only the read goroutine
// answers one.
func (s *lineStream) replyError(id json.RawMessage, code int64, msg, errorCode string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if errorCode != "" {
		e["data"] = map[string]string{"errorCode": errorCode}
	}
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	s.writeLineNow(append(data, '\n'))
}
