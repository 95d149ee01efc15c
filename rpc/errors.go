package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// JSON-RPC codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeServerBusy is the code of BUSY and SHUTTING_DOWN, in the range
	// the specification reserves for implementation-defined server errors.
	CodeServerBusy = -32000
)

// Error is a JSON-RPC error object: one hostcore answers with, or one a
// client replied with to a host→client request (Call returns it).
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error says, in the protocol's terms, that the client answered a
// host→client request with an error: the text may reach the model (a
// plugin call that failed), which knows JSON-RPC, not this program's
// libraries.
func (e *Error) Error() string {
	return fmt.Sprintf("the client answered with error %d: %s", e.Code, e.Message)
}

// ReplyShapeError says that a client's reply to a host→client request
// does not have the shape the request asks for (a card answered with a
// bare string), in JSON terms: the decoder's own text names Go types. It
// wraps the decoder's error.
type ReplyShapeError struct {
	Method string
	Err    error
}

func (e *ReplyShapeError) Error() string {
	return "the client's reply to " + e.Method + " is malformed: " + jsonProblem(e.Err)
}

func (e *ReplyShapeError) Unwrap() error { return e.Err }

// decodeReply decodes a reply's result into result.
func decodeReply(method string, raw json.RawMessage, result any) error {
	if err := json.Unmarshal(raw, result); err != nil {
		return &ReplyShapeError{Method: method, Err: err}
	}
	return nil
}

// jsonProblem says what a decoding error found wrong, in JSON terms.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "its result must be " + JSONKind(te.Type) + ", not " + article(te.Value)
		}
		return fmt.Sprintf("member %q of its result must be %s, not %s", te.Field, JSONKind(te.Type), article(te.Value))
	}
	return "its result is not valid JSON"
}

// article names a JSON kind as the decoder reports it ("string",
// "number 1.5") with its article.
func article(v string) string {
	switch {
	case v == "":
		return "another kind"
	case v[0] == 'a' || v[0] == 'o':
		return "an " + v
	}
	return "a " + v
}

// JSONKind names the JSON kind a Go type is decoded from, so that an
// error says "must be a string", never a Go type name.
func JSONKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Interface:
		return "a JSON value"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	}
	return "a number"
}

// Coded is implemented by errors that choose their JSON-RPC code and
// hostcore errorCode. Anything else goes out as -32603.
type Coded interface {
	error
	RPCCode() int64
	ErrorCode() string
}

// toWire is the one place an error becomes a wire error; code 0 never
// leaves it.
func toWire(err error) *Error {
	e := &Error{Code: CodeInternalError, Message: err.Error()}
	var c Coded
	if errors.As(err, &c) {
		if code := c.RPCCode(); code != 0 {
			e.Code = code
		}
		if ec := c.ErrorCode(); ec != "" {
			e.Data, _ = json.Marshal(map[string]string{"errorCode": ec})
		}
	}
	return e
}

// ErrNoClient is returned by Call when nobody is left to answer. Its
// InputClosed tells perms.Wait a card was left unanswered because the
// client's input closed.
var ErrNoClient error = noClient{}

type noClient struct{}

func (noClient) Error() string     { return "client cannot answer: input closed" }
func (noClient) InputClosed() bool { return true }

// errNotSent is ErrNoClient for a request that was never written: the
// input had closed before it. Its NotSent lets a caller tell a card that
// nobody saw from one left unanswered.
type errNotSent struct{}

func (errNotSent) Error() string        { return ErrNoClient.Error() }
func (errNotSent) Is(target error) bool { return target == ErrNoClient }
func (errNotSent) NotSent() bool        { return true }

// errClosed ends the waits of host→client requests still open when Run
// returns.
var errClosed = errors.New("the connection to the client is closed")

// stopping is the cause calls are cancelled with when hostcore stops
// (perms.Stopping).
type stopping string

func (e stopping) Error() string  { return string(e) }
func (e stopping) Stopping() bool { return true }

// Stopping is the cause to cancel Run's context with when hostcore stops
// (shutdown, a signal): a call waiting on its card is then denied, as
// PROTOCOL section 1 says ("pending waits resolve as deny"), where a
// plain cancellation cancels it.
func Stopping(reason string) error { return stopping(reason) }

// errStopped answers a request that hostcore, stopping, will not run.
var errStopped = &stoppedError{}

type stoppedError struct{}

func (*stoppedError) Error() string {
	return "hostcore is shutting down: the request was not run"
}
func (*stoppedError) RPCCode() int64    { return CodeServerBusy } // application errors (PROTOCOL section 7)
func (*stoppedError) ErrorCode() string { return "SHUTTING_DOWN" }

// errBusy answers a request over the in-flight budget.
var errBusy = &busyError{}

type busyError struct{}

func (*busyError) Error() string {
	return "server busy: too many requests (or too many large ones) are running; retry once some have been answered"
}
func (*busyError) RPCCode() int64    { return CodeServerBusy }
func (*busyError) ErrorCode() string { return "BUSY" }

type panicError struct{ v any }

func (p *panicError) Error() string { return "internal error: handler panicked" }
