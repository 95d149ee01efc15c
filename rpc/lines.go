package rpc

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
)

// MessageLines gives a JSON-RPC library that reads a stream of JSON values
// (the MCP SDK's stdio transport, which ends the whole session on the first
// value it cannot decode) the framing of hostcore's own loop. The reader
// passes on only lines that are one well-formed JSON-RPC message; every
// other line is answered on w as lineStream answers it (-32700 for a line
// that is not UTF-8 JSON; -32600 for a batch, a non-object, a "jsonrpc"
// other than "2.0", an id that is neither a string nor an integer, a line
// over MaxLine, a message that is neither a request nor a reply) and
// skipped. A malformed reply is dropped, never answered. The writer is
// where the library writes: each Write is one whole line, and lines never
// interleave with the answers written here.
//
// hooks, when not nil, see the requests in the order they were read and the
// ids of the responses as they are written.
func MessageLines(r io.Reader, w io.Writer, log *slog.Logger, hooks *LineHooks) (io.ReadCloser, io.WriteCloser) {
	s := newLineStream(r, w, log)
	return &checkedLines{s: s, hooks: hooks}, lineWriter{s, hooks}
}

// LineHooks let a frontend act on messages in arrival order, before the
// library hands them to goroutines of their own.
type LineHooks struct {
	// Request sees each request with an id as it is read, and may return
	// params to pass on in place of its own (nil: unchanged).
	Request func(id json.RawMessage, method string, params json.RawMessage) json.RawMessage
	// Answered is told the id of each response written.
	Answered func(id json.RawMessage)
}

type checkedLines struct {
	s     *lineStream
	hooks *LineHooks
	next  []byte // the rest of the line being handed out
}

func (c *checkedLines) Read(p []byte) (int, error) {
	for len(c.next) == 0 {
		line, err := c.s.nextLine()
		if err == errLineTooLong {
			c.s.replyError(nil, CodeInvalidRequest, "line exceeds 16 MiB", "INVALID_ARGUMENT")
			continue
		}
		if err != nil {
			return 0, io.EOF
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if p, ok := c.s.wellFormed(line); ok {
				c.next = append(c.hooked(line, p), '\n')
			}
		}
	}
	n := copy(p, c.next)
	c.next = c.next[n:]
	return n, nil
}

func (c *checkedLines) Close() error { return nil }

// hooked passes a request through the Request hook; p is the line's
// envelope, as wellFormed read it.
func (c *checkedLines) hooked(line []byte, p probe) []byte {
	if c.hooks == nil || c.hooks.Request == nil || len(p.ID) == 0 || string(p.ID) == "null" || !p.hasMethod() {
		return line
	}
	var method string
	json.Unmarshal(p.Method, &method)
	params := c.hooks.Request(p.ID, method, p.Params)
	if params == nil {
		return line
	}
	members := p.members
	members["params"] = params
	out, err := json.Marshal(members)
	if err != nil {
		return line
	}
	return out
}

// responseID returns the id of a response line, nil for anything else.
func responseID(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		switch t {
		case "method":
			return nil
		case "result", "error":
			if id != nil {
				return id // the result itself need not be read
			}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t == "id" {
			id = v
		}
	}
	return id
}

// wellFormed says whether line is one JSON-RPC message a library can take,
// answering it (or, for a reply, logging it) when it is not; the envelope
// read is returned for the hooks.
func (s *lineStream) wellFormed(line []byte) (probe, bool) {
	p, ok := s.frame(line)
	if !ok {
		return p, false
	}
	idOK := integerOrStringID(p.ID)
	if !p.hasMethod() && (p.hasResult() || p.hasError()) {
		if !idOK || p.JSONRPC == nil || *p.JSONRPC != "2.0" || p.hasResult() == p.hasError() || (p.hasError() && p.Error[0] != '{') {
			s.log.Warn("malformed reply from the client dropped", "line", string(line[:min(len(line), 200)]))
			return p, false
		}
		return p, true
	}
	var id json.RawMessage
	if idOK && len(p.ID) > 0 && string(p.ID) != "null" {
		id = p.ID
	}
	switch why := p.requestProblem(); {
	case !idOK:
		s.replyError(nil, CodeInvalidRequest, "invalid request: id must be a UTF-8 string or an integer", "")
	case why != "":
		s.replyError(id, CodeInvalidRequest, "invalid request: "+why, "")
	case len(p.Params) > 0 && p.Params[0] != '{' && p.Params[0] != '[':
		s.replyError(id, CodeInvalidParams, "invalid params: params must be an object or an array", "INVALID_ARGUMENT")
	default:
		return p, true
	}
	return p, false
}

// integerOrStringID says whether raw is absent, null, a UTF-8 string or an
// integer that fits in 64 bits: the ids MCP allows.
func integerOrStringID(raw json.RawMessage) bool {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return true
	case raw[0] == '"':
		return unicodeString(raw)
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// lineWriter writes a library's lines through the stream's lock. An error
// answer with code 0 (the MCP SDK sends one for a request before
// initialize) goes out as -32600: no error reaches the client with code 0.
type lineWriter struct {
	s     *lineStream
	hooks *LineHooks
}

func (w lineWriter) Write(p []byte) (int, error) {
	line := p
	if bytes.Contains(p, []byte(`"code":0`)) {
		line = fixCodeZero(p)
	}
	err := w.s.writeLine(line)
	if w.hooks != nil && w.hooks.Answered != nil {
		if id := responseID(p); id != nil {
			w.hooks.Answered(id)
		}
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w lineWriter) Close() error { return nil }

func fixCodeZero(line []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || len(m["error"]) == 0 {
		return line
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(m["error"], &e) != nil || string(e["code"]) != "0" {
		return line
	}
	e["code"] = json.RawMessage(strconv.Itoa(CodeInvalidRequest))
	m["error"], _ = json.Marshal(e)
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(out, '\n')
}
