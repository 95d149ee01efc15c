package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
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

	// Every line is written whole by one Write, under wmu: lines are
	// answered as soon as they are ready, so a buffer would only copy.
	wmu sync.Mutex
	w   io.Writer
	// broken is set after a write fails: the client is gone.
	broken  bool
	onBreak func()

	// atEOF is called once when input ends, before ReadObject returns
	// io.EOF: it drains running calls so that they can still answer.
	atEOF func()
}

func newLineStream(r io.Reader, w io.Writer) *lineStream {
	return &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w}
}

// WriteObject writes one message as one line.
func (s *lineStream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeLine(append(data, '\n'))
}

// writeLine writes one or more whole lines, each ending in '\n', with one
// Write: no other line can come between them.
func (s *lineStream) writeLine(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.broken {
		return errClientGone
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

var errClientGone = errors.New("client is gone: stdout closed")

// ReadObject returns the next well-formed message. Malformed lines are
// answered and skipped.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
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
		if ok := s.check(line); !ok {
			continue
		}
		if err := json.Unmarshal(line, v); err != nil {
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
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
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

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// probe is the envelope as read before jsonrpc2 sees it.
type probe struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// readProbe reads the envelope members by their exact names: JSON-RPC
// member names are case-sensitive, and encoding/json's case-insensitive
// struct matching would take {"JSONRPC":"2.0","ERROR":{}} for a reply.
func readProbe(line []byte) (probe, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return probe{}, err
	}
	p := probe{ID: m["id"], Method: m["method"], Result: m["result"], Error: m["error"]}
	if raw, ok := m["jsonrpc"]; ok {
		var v string
		if json.Unmarshal(raw, &v) == nil {
			p.JSONRPC = &v
		}
	}
	return p, nil
}

// check validates the envelope and answers what jsonrpc2 would otherwise
// treat as a fatal read error. It reports whether the line may go on.
func (s *lineStream) check(line []byte) bool {
	if !json.Valid(line) {
		s.replyError(nil, jsonrpc2.CodeParseError, "parse error: line is not valid JSON", "")
		return false
	}
	switch line[0] {
	case '[':
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "batch requests are not supported: send one request per line", "")
		return false
	case '{':
	default:
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: a message must be a JSON object", "")
		return false
	}
	p, err := readProbe(line)
	if err != nil {
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: "+err.Error(), "")
		return false
	}
	id, idOK := wireID(p.ID)
	if !idOK {
		s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: id must be a UTF-8 string or a non-negative integer", "")
		return false
	}
	if p.JSONRPC == nil || *p.JSONRPC != "2.0" {
		s.replyError(id, jsonrpc2.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, "")
		return false
	}
	hasMethod := len(p.Method) > 0 && string(p.Method) != "null"
	isResponse := len(p.Result) > 0 || len(p.Error) > 0
	switch {
	case hasMethod && isResponse:
		s.replyError(id, jsonrpc2.CodeInvalidRequest, "invalid request: both method and result/error", "")
		return false
	case hasMethod:
		var m string
		if json.Unmarshal(p.Method, &m) != nil || m == "" {
			s.replyError(id, jsonrpc2.CodeInvalidRequest, "invalid request: method must be a non-empty string", "")
			return false
		}
		if string(p.ID) == "null" {
			s.replyError(nil, jsonrpc2.CodeInvalidRequest, "invalid request: id must not be null", "")
			return false
		}
		return true
	case isResponse:
		return id != nil // a response without id matches nothing: drop it
	}
	s.replyError(id, jsonrpc2.CodeInvalidRequest, "invalid request: missing method", "")
	return false
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
		return raw, utf8.Valid(raw)
	}
	if _, err := strconv.ParseUint(string(raw), 10, 64); err == nil {
		return raw, true
	}
	return nil, false
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
	s.writeLine(append(data, '\n'))
}

// Close is called by jsonrpc2.Conn when the connection ends. Nothing is
// buffered: every line was written whole when it was ready.
func (s *lineStream) Close() error { return nil }
