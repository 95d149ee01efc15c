package rpcerr

import (
	"fmt"

	"hostcore/handlers/tools"
)

// JSON-RPC codes of the errors a method answers with. Application errors
// use the implementation-defined server range.
const (
	CodeInvalidParams = -32602
	CodeInternal      = -32603
	CodeApp           = -32000
)

// Error is a JSON-RPC error with a hostcore errorCode. It satisfies the
// rpc package's Coded interface without importing it.
type Error struct {
	Code    int64
	Kind    string // errorCode
	Message string
	Err     error
}

func (e *Error) Error() string     { return e.Message }
func (e *Error) Unwrap() error     { return e.Err }
func (e *Error) RPCCode() int64    { return e.Code }
func (e *Error) ErrorCode() string { return e.Kind }

// InvalidParams is a request whose params are wrong: -32602 with
// INVALID_ARGUMENT.
func InvalidParams(format string, a ...any) *Error {
	return &Error{Code: CodeInvalidParams, Kind: tools.CodeInvalidArgument, Message: fmt.Sprintf(format, a...)}
}

// App is an application error of the implementation-defined server
// range, with its errorCode.
func App(kind, format string, a ...any) *Error {
	return &Error{Code: CodeApp, Kind: kind, Message: fmt.Sprintf(format, a...)}
}

// Storage is a failure of the store: -32603 with SESSION_LOOKUP_FAILED,
// what failed and why.
func Storage(what string, err error) *Error {
	return &Error{Code: CodeInternal, Kind: tools.CodeSessionLookupFailed, Message: what + ": " + err.Error(), Err: err}
}
