package handlers

import "fmt"

// Error codes of PROTOCOL section 7.
const (
	CodeInvalidArgument     = "INVALID_ARGUMENT"
	CodeUnknownTool         = "UNKNOWN_TOOL"
	CodeToolDenied          = "TOOL_DENIED"
	CodeToolFailed          = "TOOL_FAILED"
	CodeToolTimeout         = "TOOL_TIMEOUT"
	CodeToolAborted         = "TOOL_ABORTED"
	CodeNoWorkspace         = "NO_WORKSPACE"
	CodeSessionNotFound     = "SESSION_NOT_FOUND"
	CodeSessionLookupFailed = "SESSION_LOOKUP_FAILED"
	CodeDuplicateToolCall   = "DUPLICATE_TOOL_CALL"
	CodeConflict            = "CONFLICT"
	CodeShellNotFound       = "SHELL_NOT_FOUND"
	CodeShellChanged        = "COMMAND_SHELL_CHANGED"
	CodeShellInvalid        = "COMMAND_SHELL_INVALID"
	CodePluginInPlan        = "PLUGIN_DISABLED_IN_PLAN"
	CodeNotAlone            = "NOT_ALONE_IN_BATCH"
	CodeWrongMode           = "WRONG_MODE"
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
	return &Error{Code: rpcInvalidParams, Kind: CodeInvalidArgument, Message: fmt.Sprintf(format, a...)}
}

func appError(kind, format string, a ...any) *Error {
	return &Error{Code: rpcApp, Kind: kind, Message: fmt.Sprintf(format, a...)}
}

func storageError(what string, err error) *Error {
	return &Error{Code: rpcInternal, Kind: CodeSessionLookupFailed, Message: what + ": " + err.Error(), Err: err}
}
