package tools

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
