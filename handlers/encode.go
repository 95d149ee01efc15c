package handlers

import (
	"encoding/json"
	"strconv"
	"unsafe"
)

// The ToolResult is encoded by hand: it is every tools.execute's answer,
// and encoding/json's reflection over it (and its compaction of what a
// MarshalJSON returns) was a twentieth of a small Read's CPU. The JSON is
// encoding/json's: the same members in the same order, omitempty where
// the struct tags say it, the same values; only <, > and & are written as
// themselves rather than \u003c, \u003e and \u0026 (appendJSONString).
// TestToolResultEncoding holds the two together.

// AppendJSON appends r's JSON encoding to dst (rpc writes results with it).
func (r *ToolResult) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"toolCallId":`...)
	dst = appendJSONText(dst, r.ToolCallID)
	dst = append(dst, `,"traceId":`...)
	dst = appendJSONText(dst, r.TraceID)
	dst = append(dst, `,"ok":`...)
	dst = strconv.AppendBool(dst, r.OK)
	dst = append(dst, `,"isError":`...)
	dst = strconv.AppendBool(dst, r.IsError)
	if r.ErrorCode != "" {
		dst = append(dst, `,"errorCode":`...)
		dst = appendJSONText(dst, r.ErrorCode)
	}
	if r.Message != "" {
		dst = append(dst, `,"message":`...)
		dst = appendJSONText(dst, r.Message)
	}
	dst = append(dst, `,"content":`...)
	if r.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range r.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":`...)
			dst = appendJSONText(dst, c.Type)
			dst = append(dst, `,"text":`...)
			dst = appendJSONText(dst, c.Text)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	var err error
	if r.Details != nil {
		dst = append(dst, `,"details":`...)
		if dst, err = appendDetails(dst, r.Details); err != nil {
			return nil, err
		}
	}
	if r.Root != "" {
		dst = append(dst, `,"root":`...)
		dst = appendJSONText(dst, r.Root)
	}
	if r.Path != "" {
		dst = append(dst, `,"path":`...)
		dst = appendJSONText(dst, r.Path)
	}
	if r.Review != nil {
		b, err := json.Marshal(r.Review)
		if err != nil {
			return nil, err
		}
		dst = append(append(dst, `,"review":`...), b...)
	}
	if r.Terminate {
		dst = append(dst, `,"terminate":true`...)
	}
	dst = append(dst, `,"decision":`...)
	dst = appendJSONText(dst, r.Decision)
	t := r.Timing
	dst = append(dst, `,"timing":{"prompted":`...)
	dst = strconv.AppendBool(dst, t.Prompted)
	dst = append(dst, `,"permissionWaitMs":`...)
	dst = strconv.AppendInt(dst, t.PermissionWaitMs, 10)
	dst = append(dst, `,"durationMs":`...)
	dst = strconv.AppendInt(dst, t.DurationMs, 10)
	dst = append(dst, `,"overheadMs":`...)
	dst = strconv.AppendInt(dst, t.OverheadMs, 10)
	dst = append(dst, `,"totalMs":`...)
	dst = strconv.AppendInt(dst, t.TotalMs, 10)
	dst = append(dst, '}')
	if r.AuditError != "" {
		dst = append(dst, `,"auditError":`...)
		dst = appendJSONText(dst, r.AuditError)
	}
	return append(dst, '}'), nil
}

// MarshalJSON is AppendJSON for encoding/json.
func (r *ToolResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// appendDetails encodes a result's details: Read's by hand, anything else
// through encoding/json.
func appendDetails(dst []byte, d any) ([]byte, error) {
	if rd, ok := d.(ReadDetails); ok {
		dst = append(dst, `{"totalLines":`...)
		if rd.TotalLines == nil {
			dst = append(dst, "null"...)
		} else {
			dst = strconv.AppendInt(dst, int64(*rd.TotalLines), 10)
		}
		dst = append(dst, `,"startLine":`...)
		dst = strconv.AppendInt(dst, int64(rd.StartLine), 10)
		dst = append(dst, `,"endLine":`...)
		dst = strconv.AppendInt(dst, int64(rd.EndLine), 10)
		dst = append(dst, `,"truncated":`...)
		dst = strconv.AppendBool(dst, rd.Truncated)
		return append(dst, '}'), nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendJSONText appends s as a JSON string (appendJSONString, bash.go,
// reading s in place).
func appendJSONText(dst []byte, s string) []byte {
	return appendJSONString(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}
