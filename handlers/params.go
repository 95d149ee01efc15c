package handlers

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"hostcore/handlers/jsonobj"
)

// decodeExecuteParams is json.Unmarshal of tools.execute's params into
// ExecuteParams, without reflection for the params every call sends: a
// flat object of plain strings (no escapes), an integer batchSize and the
// args. Anything else (an escape, a value of another kind, a member name
// that is not ASCII) is left to json.Unmarshal, so every answer and every
// error is encoding/json's own: member names match case-insensitively,
// null leaves a field as it was, the last of a repeated member wins.
// FuzzExecuteParams holds the two together. raw is valid JSON.
func decodeExecuteParams(raw []byte) (ExecuteParams, error) {
	var p ExecuteParams
	if !quickParams(raw, &p) {
		p = ExecuteParams{}
		err := json.Unmarshal(raw, &p)
		return p, err
	}
	return p, nil
}

// quickParams fills p from raw, or reports false.
func quickParams(raw []byte, p *ExecuteParams) bool {
	return jsonobj.Members(raw, func(quoted, val []byte) bool {
		name, plain := jsonobj.Name(quoted)
		return plain && isASCII(name) && p.set(string(name), val)
	})
}

// set stores one member; false: json.Unmarshal must decide.
func (p *ExecuteParams) set(key string, val []byte) bool {
	var dst *string
	switch {
	case strings.EqualFold(key, "sessionId"):
		dst = &p.SessionID
	case strings.EqualFold(key, "turnId"):
		dst = &p.TurnID
	case strings.EqualFold(key, "toolCallId"):
		dst = &p.ToolCallID
	case strings.EqualFold(key, "toolName"):
		dst = &p.ToolName
	case strings.EqualFold(key, "promptId"):
		dst = &p.PromptID
	case strings.EqualFold(key, "messageId"):
		dst = &p.MessageID
	case strings.EqualFold(key, "delegate"):
		dst = &p.Delegate
	case strings.EqualFold(key, "shell"):
		dst = &p.Shell
	case strings.EqualFold(key, "args"):
		p.Args = append(json.RawMessage(nil), val...)
		return true
	case strings.EqualFold(key, "batchSize"):
		if string(val) == "null" {
			return true
		}
		n, err := strconv.Atoi(string(val))
		if err != nil || val[0] == '-' && n == 0 {
			return false
		}
		p.BatchSize = &n
		return true
	default:
		return true // not a field: ignored
	}
	switch {
	case string(val) == "null":
		return true
	case len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0:
		return false
	}
	*dst = string(val[1 : len(val)-1])
	return true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
