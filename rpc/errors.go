package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
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

// Error keeps the text jsonrpc2 libraries give a reply error, which
// handlers strip to pass the client's own message on.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc2: code %v message: %s", e.Code, e.Message)
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
var errClosed = errors.New("jsonrpc2: connection is closed")

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
