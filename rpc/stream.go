package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
	"golang.org/x/sys/unix"
)

// MaxLine is the largest line accepted; a longer one is answered -32600 and
// skipped without being held in memory.
const MaxLine = 16 << 20

// lineStream is a jsonrpc2.ObjectStream over newline-delimited JSON. It owns
// the framing because jsonrpc2.Conn closes the connection on any read error:
// a bad line is answered here (-32700 / -32600) and reading goes on, so the
// Conn only ever sees well-formed requests and responses.
type lineStream struct {
	r *bufio.Reader
	// ended is set once a read found the end of input (or failed): a
	// terminal's end (Ctrl-D) holds for the next read only, so without it
	// hostcore would read on after the last line (cat stops there).
	ended bool

	// Every line is written whole by one Write, under wmu: lines are
	// answered as soon as they are ready, so a buffer would only copy.
	wmu sync.Mutex
	w   io.Writer
	// broken is set after a write fails: the client is gone.
	broken  bool
	onBreak func()
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

	// atEOF is called once when input ends, before ReadObject returns
	// io.EOF: it drains running calls so that they can still answer.
	atEOF func()

	// params holds the params of the request ReadObject returned last,
	// until its handler takes them (see prepare); ready says they have
	// not been taken. jsonrpc2's read loop calls the handler of each
	// request it reads before it reads again, on the same goroutine, so
	// one slot is enough.
	params      json.RawMessage
	paramsReady bool

	// direct, when set, handles a request in place of jsonrpc2 (see
	// ReadObject), on the read goroutine as jsonrpc2 would;
	// reqMethod and reqID are the method and id (as jsonrpc2 is to see it)
	// of the request prepare read last.
	direct    func(method string, id jsonrpc2.ID, notif bool)
	reqMethod string
	reqID     json.RawMessage

	// pending holds the ids (as JSON text) of host requests waiting for
	// the client's reply: a message with one of them and no method is a
	// reply, however malformed, and is never answered.
	pending sync.Map // string → *owed

	// mark, when set, is called on the read goroutine as a reply is read:
	// its value, kept in the reply's owed, says what the reply must wait
	// behind (see Server.Call).
	mark func() uint64

	log *slog.Logger
}

func newLineStream(r io.Reader, w io.Writer, log *slog.Logger) *lineStream {
	return &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, log: log, nowaitFd: -1}
}

// takeParams returns the params prepare set aside for the request just
// read (nil: it had none). Only the read goroutine calls it, in the
// request's handler.
func (s *lineStream) takeParams() (json.RawMessage, error) {
	if !s.paramsReady {
		return nil, errors.New("the request's params were already taken")
	}
	p := s.params
	s.params, s.paramsReady = nil, false
	return p, nil
}

// owed is a host→client request waiting for its reply.
type owed struct {
	// behind is, once the reply is read, how many requests the sequencer
	// had been given by then (sequencer.read): the reply is acted on only
	// once they have all been handled.
	behind atomic.Uint64
	// read: the reply has been read (Call counts it even if its wait
	// ended meanwhile).
	read atomic.Bool
}

func (s *lineStream) isPending(id json.RawMessage) bool {
	_, ok := s.pending.Load(string(id))
	return ok
}

// WriteObject writes one message as one line.
func (s *lineStream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeLine(append(restoreNumberID(data), '\n'))
}

// writeResult writes a success response. It is what jsonrpc2's
// Conn.Reply writes (a response is no request: the Conn has nothing to
// track), with the result encoded once: Conn.Reply encodes it, then
// encodes the response holding it, which validates and compacts the
// result's bytes again and again at every level (a fifth of a small
// Read's CPU). now: written by the read goroutine (writeLineNow).
func (s *lineStream) writeResult(id jsonrpc2.ID, result any, now bool) error {
	line := append(appendID(append(make([]byte, 0, 512), `{"id":`...), id), `,"result":`...)
	var err error
	if a, ok := result.(Appender); ok {
		line, err = a.AppendJSON(line)
	} else {
		var res []byte
		res, err = json.Marshal(result)
		line = append(line, res...)
	}
	if err != nil {
		return err
	}
	line = append(restoreNumberID(append(line, `,"jsonrpc":"2.0"}`...)), '\n')
	if now {
		return s.writeLineNow(line)
	}
	return s.writeLine(line)
}

// writeError writes an error response, exactly as jsonrpc2's
// Conn.ReplyWithError would.
func (s *lineStream) writeError(id jsonrpc2.ID, e *jsonrpc2.Error, now bool) error {
	data, err := json.Marshal(&jsonrpc2.Response{ID: id, Error: e})
	if err != nil {
		return err
	}
	line := append(restoreNumberID(data), '\n')
	if now {
		return s.writeLineNow(line)
	}
	return s.writeLine(line)
}

// appendID appends id as json.Marshal writes it (as jsonrpc2 does).
func appendID(dst []byte, id jsonrpc2.ID) []byte {
	if !id.IsString {
		return strconv.AppendUint(dst, id.Num, 10)
	}
	b, _ := json.Marshal(id.Str) // a string always encodes
	return append(dst, b...)
}

// Appender is a result that encodes itself, appending its JSON to dst
// (handlers' ToolResult): json.Marshal would validate and compact what a
// MarshalJSON returns, a second pass over every answer.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// writeLine writes one or more whole lines, each ending in '\n', with one
// Write: no other line can come between them.
func (s *lineStream) writeLine(line []byte) error {
	s.addWaiting(int64(len(line)))
	defer s.addWaiting(-int64(len(line)))
	// Lines the read goroutine left behind (writeLineNow) answered
	// requests read before this line's was, or were sent before it: they
	// go first, as they did when the read goroutine wrote them itself.
	if active := s.behind(); active != nil {
		<-active
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(line)
}

func (s *lineStream) writeLocked(line []byte) error {
	if s.broken {
		return errClientGone
	}
	if d, ok := s.w.(interface{ SetWriteDeadline(time.Time) error }); ok && s.draining.Load() {
		d.SetWriteDeadline(time.Now().Add(writeDrain))
	}
	if _, err := s.w.Write(line); err != nil {
		s.broken = true
		if s.onBreak != nil {
			go s.onBreak()
		}
		return errClientGone
	}
	return nil
}

// writeLineNow is writeLine for the read goroutine: it does not wait for
// a client that does not read, so that such a client can still finish
// writing the request it is stuck on. Where stdout is non-blocking
// (nowaitFd, see Server), one write system call puts in what the pipe or
// socket takes now; the rest, if any, is left behind: one goroutine
// writes what is left behind, in order, and holds the write lock across
// the rest of a line begun, so no other line comes between its parts. A
// line that finds the lock taken, or lines left behind before it, is
// left behind too. Server.Quiet is false while any is. Past maxBehind
// bytes left behind, the read goroutine waits for them (a client that
// sends without ever reading must not grow memory without bound).
// Elsewhere it is writeLine.
func (s *lineStream) writeLineNow(line []byte) error {
	if s.nowaitFd < 0 {
		return s.writeLine(line)
	}
	s.qmu.Lock()
	active, over := s.qdone, s.queued > maxBehind
	s.qmu.Unlock()
	if over {
		<-active
		active = nil
	}
	if active != nil || !s.wmu.TryLock() {
		s.leaveBehind(line, false)
		return nil
	}
	if s.broken || s.draining.Load() {
		defer s.wmu.Unlock()
		return s.writeLocked(line)
	}
	n, err := ignoringEINTR(func() (int, error) { return unix.Write(s.nowaitFd, line) })
	if err == unix.EAGAIN {
		n, err = 0, nil
	}
	if err != nil {
		// What writeLocked does on a failed write; the poller's write
		// would fail the same way.
		defer s.wmu.Unlock()
		return s.writeLocked(line[max(n, 0):])
	}
	if n == len(line) {
		s.wmu.Unlock()
		return nil
	}
	s.leaveBehind(line[n:], true)
	return nil
}

// addWaiting counts d bytes in (or, negative, out of) writeLine.
func (s *lineStream) addWaiting(d int64) {
	s.wamu.Lock()
	defer s.wamu.Unlock()
	s.waiting += d
	if d < 0 {
		s.wakeLocked()
	}
}

// wakeLocked lets the calls waitForRoom holds look again.
func (s *lineStream) wakeLocked() {
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// Bounds of waitForRoom: past backedUp bytes waiting in writeLine the
// client is taken to be behind, and at most behindCalls calls run at once
// that started then, while at most waitingMax bytes wait.
const (
	backedUp    = 1 << 20
	behindCalls = 8
)

// waitForRoom is called by a call before it runs. While the client keeps
// up (at most backedUp bytes waiting in writeLine) it returns at once.
// Once the client is behind, the call waits until at most waitingMax bytes
// wait and fewer than behindCalls calls that started that way have yet to
// see their answers written; done, called once the call's answer is
// written, frees its place. A client that sends requests without reading
// the answers (a Read's can be megabytes) had every call admitted by the
// in-flight budget, a thousand, hold its finished answer: gigabytes (an
// adversarial review: 3.3 GB). Waiting, a call holds only its params,
// which the budget bounds, and requests past the budget are refused BUSY
// as ever; the read goroutine never waits here. A call waits at most
// until ctx ends (shutdown), and runs then, to answer as aborted.
func (s *lineStream) waitForRoom(ctx context.Context) (done func()) {
	for {
		s.wamu.Lock()
		if s.waitingMax <= 0 || s.waiting <= backedUp {
			s.wamu.Unlock()
			return func() {}
		}
		if s.waiting <= s.waitingMax && s.behindRunning < behindCalls {
			s.behindRunning++
			s.wamu.Unlock()
			return func() {
				s.wamu.Lock()
				defer s.wamu.Unlock()
				s.behindRunning--
				s.wakeLocked()
			}
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.wamu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return func() {}
		}
	}
}

// maxBehind bounds the memory of lines writeLineNow leaves behind (their
// buffers' capacity).
const maxBehind = 16 << 20

// leaveBehind queues p for the goroutine that writes what is left behind,
// starting it if none runs. locked: the caller holds the write lock,
// which passes to that goroutine (p is the rest of a line begun; nothing
// is queued then, or the caller would not have written).
func (s *lineStream) leaveBehind(p []byte, locked bool) {
	s.qmu.Lock()
	s.queue = append(s.queue, p)
	s.queued += cap(p) // what it holds: a short answer sits in a larger buffer
	start := s.qdone == nil
	if start {
		s.qdone = make(chan struct{})
	}
	s.qmu.Unlock()
	if start {
		go s.writeBehind(locked)
	}
}

// writeBehind writes the lines left behind until none is left. Between
// two lines it lets the write lock go, so that a worker's answer is not
// held up behind a queue.
func (s *lineStream) writeBehind(locked bool) {
	for {
		s.qmu.Lock()
		if len(s.queue) == 0 {
			done := s.qdone
			s.qdone, s.queue = nil, nil
			s.qmu.Unlock()
			close(done)
			return
		}
		p := s.queue[0]
		s.queue[0], s.queue = nil, s.queue[1:]
		s.qmu.Unlock()
		if !locked {
			s.wmu.Lock()
		}
		s.writeLocked(p)
		s.wmu.Unlock()
		locked = false
		s.qmu.Lock()
		s.queued -= cap(p)
		s.qmu.Unlock()
	}
}

// settle returns once every line begun has been written whole, or has
// failed: it waits for the lines left behind, then takes the write lock
// (a worker's line in progress). Run calls it before it returns (the
// process then exits): an answer counted as given must not be cut off.
func (s *lineStream) settle() {
	for active := s.behind(); active != nil; active = s.behind() {
		<-active
	}
	s.wmu.Lock()
	s.wmu.Unlock()
}

// behind returns, while lines left behind are being written, a channel
// closed once they all are; nil when none is left.
func (s *lineStream) behind() chan struct{} {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.qdone
}

func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

var errClientGone = errors.New("client is gone: stdout closed")

// ReadObject returns the next well-formed message. Malformed lines are
// answered and skipped.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.nextLine()
		if err == errLineTooLong {
			s.replyError(nil, jsonrpc2.CodeInvalidRequest, "line exceeds 16 MiB", "INVALID_ARGUMENT")
			continue
		}
		if err != nil {
			if s.atEOF != nil {
				s.atEOF()
			}
			return io.EOF
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		msg, ok := s.prepare(line)
		if !ok {
			continue
		}
		if s.direct != nil && s.reqMethod != "" {
			// A request skips jsonrpc2's decoding (a tenth of a small
			// Read's CPU): its handler needs only these three.
			if id, ok := decodeID(s.reqID); ok {
				s.direct(s.reqMethod, id, s.reqID == nil)
				continue
			}
		}
		if err := json.Unmarshal(msg, v); err != nil {
			// Not expected: prepare hands on only messages it checked.
			s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: "+err.Error(), "")
			continue
		}
		return nil
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

// readLine's cap while reading leaves room for "\r\n"; the limit itself
// is on the line without its ending (checked here, once it is known).
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

// probe is the envelope as read before jsonrpc2 sees it.
type probe struct {
	JSONRPC *string
	ID      json.RawMessage
	Method  json.RawMessage
	Params  json.RawMessage
	Result  json.RawMessage
	Error   json.RawMessage
	line    []byte // the whole message, for members
}

// members returns every member of the message, as read.
func (p probe) members() (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	err := json.Unmarshal(p.line, &m)
	return m, err
}

func (p probe) hasMethod() bool { return len(p.Method) > 0 && string(p.Method) != "null" }
func (p probe) hasResult() bool { return len(p.Result) > 0 }
func (p probe) hasError() bool  { return len(p.Error) > 0 && string(p.Error) != "null" }

// frame reads a line's envelope; a line that is not one UTF-8 JSON object
// is answered here (-32700, or -32600 for a batch or another value) and
// false returned. Both readers, the native loop's and MessageLines, start
// with it.
func (s *lineStream) frame(line []byte) (probe, bool) {
	if !utf8.Valid(line) {
		s.replyError(nil, jsonrpc2.CodeParseError, "parse error: line is not valid UTF-8", "")
		return probe{}, false
	}
	if !json.Valid(line) {
		s.replyError(nil, jsonrpc2.CodeParseError, "parse error: line is not valid JSON", "")
		return probe{}, false
	}
	switch line[0] {
	case '[':
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "batch requests are not supported: send one message per line", "")
		return probe{}, false
	case '{':
	default:
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: a message must be a JSON object", "")
		return probe{}, false
	}
	p, err := readProbe(line)
	if err != nil {
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: "+err.Error(), "")
		return probe{}, false
	}
	return p, true
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

// readProbe reads the envelope members by their exact names: JSON-RPC
// member names are case-sensitive, and encoding/json's case-insensitive
// struct matching would take {"JSONRPC":"2.0","ERROR":{}} for a reply. A
// member given twice counts as its last. line must be one valid JSON
// object (frame checks it first).
func readProbe(line []byte) (probe, error) {
	p := probe{line: line}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return probe{}, errors.New("malformed object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return probe{}, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return probe{}, err
		}
		switch key {
		case "jsonrpc":
			p.JSONRPC = nil
			if v, ok := plainString(val); ok {
				p.JSONRPC = &v
			}
		case "id":
			p.ID = val
		case "method":
			p.Method = val
		case "params":
			p.Params = val
		case "result":
			p.Result = val
		case "error":
			p.Error = val
		}
	}
	return p, nil
}

// prepare validates one line and returns the message jsonrpc2 is to decode,
// or false once the line has been answered (or dropped). It answers what
// jsonrpc2 would otherwise treat as a fatal read error, and it never
// answers a reply: a client's reply to one of hostcore's requests that is
// malformed still ends that request's wait, as an error reply.
//
// A request reaches jsonrpc2 without its params: they are handed to the
// handler aside (takeParams). jsonrpc2 decodes a request's params into
// interface{} values and encodes them again, on the read goroutine; for a
// line of megabytes that took seconds and dozens of times its size in
// memory, while no other line, permission replies included, was read.
func (s *lineStream) prepare(line []byte) ([]byte, bool) {
	s.reqMethod, s.reqID = "", nil // a reply or a refused line is no request
	p, ok := s.frame(line)
	if !ok {
		return nil, false
	}
	id, idOK := wireID(p.ID)
	if !p.hasMethod() && (p.hasResult() || p.hasError() || (idOK && s.isPending(id))) {
		return s.reply(p, id, idOK, p.hasResult(), p.hasError())
	}
	// jsonID is the id jsonrpc2 sees; id, the one errors answered here echo.
	jsonID := id
	switch {
	case !idOK && isNumber(p.ID):
		id, jsonID, idOK = p.ID, numberAlias(p.ID), true
	case idOK && hasNumberAliasPrefix(id):
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, `invalid request: a string id must not begin with "\u0000#"`, "")
		return nil, false
	}
	if !idOK {
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: id must be a UTF-8 string or a number", "")
		return nil, false
	}
	if why := p.requestProblem(); why != "" {
		s.replyError(id, jsonrpc2.CodeInvalidRequest, "invalid request: "+why, "")
		return nil, false
	}
	s.reqMethod, _ = plainString(p.Method)
	s.reqID = jsonID
	// jsonrpc2 needs only the method and id: its decoding takes the
	// fewer members the faster.
	msg := append([]byte(`{"method":`), p.Method...)
	if jsonID != nil {
		msg = append(append(msg, `,"id":`...), jsonID...)
	}
	s.params, s.paramsReady = nil, true
	if len(p.Params) > 0 {
		s.params = p.Params
	}
	return append(msg, '}'), true
}

// reply handles a client's reply to a host request. It is never answered.
// A well-formed one goes on to jsonrpc2 as it is; a malformed one whose id
// can be read goes on as an error reply, so that the wait it answers ends
// now (a permission card denies, a question is skipped) rather than at its
// deadline, or never. One without a usable id matches nothing: dropped.
func (s *lineStream) reply(p probe, id json.RawMessage, idOK, hasResult, hasError bool) ([]byte, bool) {
	if !idOK || id == nil {
		return nil, false
	}
	var why string
	switch {
	case p.JSONRPC == nil || *p.JSONRPC != "2.0":
		why = `"jsonrpc" is not "2.0"`
	case hasResult && hasError:
		why = "it has both result and error"
	case !hasResult && !hasError:
		why = "it has neither result nor error"
	case hasError:
		var e jsonrpc2.Error
		if p.Error[0] != '{' || json.Unmarshal(p.Error, &e) != nil {
			why = "its error is not an object with an integer code and a string message"
		}
	}
	if v, ok := s.pending.Load(string(id)); ok {
		if s.mark != nil {
			v.(*owed).behind.Store(s.mark())
		}
		v.(*owed).read.Store(true)
	}
	// Rebuilt from the members read, so that jsonrpc2 (whose decoding
	// matches member names case-insensitively) sees exactly these.
	msg := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), ',')
	switch {
	case why != "":
		s.log.Warn("malformed reply from the client", "id", string(id), "why", why)
		e, _ := json.Marshal(map[string]any{"code": jsonrpc2.CodeInvalidRequest, "message": "malformed reply from the client: " + why})
		msg = append(append(msg, `"error":`...), e...)
	case hasError:
		msg = append(append(msg, `"error":`...), p.Error...)
	default:
		msg = append(append(msg, `"result":`...), p.Result...)
	}
	return append(msg, '}'), true
}

// wireID returns the id as raw JSON to echo, nil when absent or null, and
// false when it is of a kind jsonrpc2 cannot carry.
func wireID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	if raw[0] == '"' {
		// An id that is not UTF-8 could be echoed neither as sent (the
		// output must be UTF-8) nor changed (the client could not match it).
		return raw, unicodeString(raw)
	}
	// jsonrpc2 reads a request's numeric id as an int64.
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && n >= 0 && raw[0] != '-' {
		return raw, true
	}
	return nil, false
}

// unicodeString says whether a JSON string (as written, quotes included)
// is UTF-8 and escapes no lone surrogate ("\ud800"): decoding turns one
// into U+FFFD, and an id answered with U+FFFD matches nothing the client
// sent (an adversarial review), so such an id is refused as one that is
// not UTF-8 is.
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

// A request id that is a number jsonrpc2 cannot carry (negative,
// fractional, written with an exponent, or past 2^63-1: JSON-RPC allows
// any number) reaches jsonrpc2 as a string alias, "\u0000#" and the
// number's text, and WriteObject puts the number back, exactly as sent,
// in the response. A client's own string id beginning with the alias
// prefix is refused, so that no response can be mistaken for one.
const numberAliasPrefix = `"\u0000#`

func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// numberAlias returns the alias of a number id as JSON text. A JSON number
// holds only -+.eE and digits: nothing to escape.
func numberAlias(raw json.RawMessage) json.RawMessage {
	return json.RawMessage(numberAliasPrefix + string(raw) + `"`)
}

// hasNumberAliasPrefix reports whether a string id, as JSON text, decodes
// to a string beginning with the alias prefix (however it was escaped).
func hasNumberAliasPrefix(id json.RawMessage) bool {
	str, ok := plainString(id)
	return ok && strings.HasPrefix(str, "\x00#")
}

// plainString decodes a JSON string value as json.Unmarshal into a string
// does (false for a value of another kind, "" for null);
// one without escapes is its bytes between the quotes (most are), and
// JSON holds no raw control character, so such a string cannot begin
// with NUL.
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

// decodeID reads a request id as jsonrpc2 does (a non-negative integer,
// else a string; nil: none). prepare has checked it is one of these.
func decodeID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if raw == nil {
		return jsonrpc2.ID{}, true
	}
	if raw[0] != '"' {
		n, err := strconv.ParseUint(string(raw), 10, 64)
		return jsonrpc2.ID{Num: n}, err == nil
	}
	if str, ok := plainString(raw); ok {
		return jsonrpc2.ID{Str: str, IsString: true}, true
	}
	return jsonrpc2.ID{}, false
}

// restoreNumberID turns a response to an aliased id back into a response
// to the number. jsonrpc2 marshals a response with its id first.
func restoreNumberID(data []byte) []byte {
	rest, ok := bytes.CutPrefix(data, []byte(`{"id":`+numberAliasPrefix))
	if !ok {
		return data
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return data
	}
	out := make([]byte, 0, len(data))
	out = append(append(append(out, `{"id":`...), rest[:end]...), rest[end+1:]...)
	return out
}

func (s *lineStream) replyError(id json.RawMessage, code int64, msg, errorCode string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if errorCode != "" {
		e["data"] = map[string]string{"errorCode": errorCode}
	}
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	s.writeLineNow(append(data, '\n')) // only the read goroutine answers a bad line
}

// Close is called by jsonrpc2.Conn when the connection ends. Nothing is
// buffered: every line was written whole when it was ready.
func (s *lineStream) Close() error { return nil }
