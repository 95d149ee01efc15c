package handlers

import (
	"fmt"
	"hostcore/handlers/tools"
)

// JSON-RPC codes for envelope errors. Application errors use the
// implementation-defined server range.
const (
	rpcInvalidParams = -32602
	rpcInternal      = -32603
	rpcApp           = -32000
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

func invalidParams(format string, a ...any) *Error {
	return &Error{Code: rpcInvalidParams, Kind: tools.CodeInvalidArgument, Message: fmt.Sprintf(format, a...)}
}

func appError(kind, format string, a ...any) *Error {
	return &Error{Code: rpcApp, Kind: kind, Message: fmt.Sprintf(format, a...)}
}

func storageError(what string, err error) *Error {
	return &Error{Code: rpcInternal, Kind: tools.CodeSessionLookupFailed, Message: what + ": " + err.Error(), Err: err}
}
