package jsonobj

import "encoding/json"

// AppendString appends s as json.Marshal encodes a string (HTML
// characters escaped, invalid UTF-8 as U+FFFD): printable ASCII that
// needs no escape as it is, anything else through encoding/json. For the
// short identifiers hostcore writes on every call (ids, audit fields),
// which are almost always plain.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
