package handlers

import (
	"bytes"
	"encoding/json"
)

// AppendJSON appends r's JSON encoding to dst (rpc writes results with
// it): encoding/json's, with <, > and & written as themselves, as every
// text a tool returns is meant to be read.
func (r *ToolResult) AppendJSON(dst []byte) ([]byte, error) {
	return appendJSON(dst, (*toolResultJSON)(r))
}

// toolResultJSON is ToolResult without its methods, so that encoding it
// does not come back to AppendJSON.
type toolResultJSON ToolResult

// appendJSON appends v's encoding/json encoding, without HTML escaping
// and without the Encoder's newline.
func appendJSON(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
