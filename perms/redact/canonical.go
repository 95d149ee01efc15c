package redact

import (
	"bytes"
	"encoding/json"
)

// MaxValues bounds the JSON values (members, elements, scalars) in one
// call's args. Decoded into interface{} values every one costs tens of
// bytes however short its text: a 15 MiB line of "1," cost a gigabyte.
// Real args are a few values with long strings; Edit's largest list of
// edits stays far below this.
const MaxValues = 100_000

// TooManyValues says whether valid JSON text holds more than MaxValues
// values, counting the commas and brackets outside strings without
// decoding anything.
func TooManyValues[T ~string | ~[]byte](raw T) bool {
	n, inString, escaped := 0, false, false
	for i := range len(raw) {
		b := raw[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			switch b {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == ',' || b == '[' || b == '{':
			n++
			if n > MaxValues {
				return true
			}
		}
	}
	return false
}

// Decode decodes one JSON value into interface{} values, numbers as
// json.Number (exact, as written).
func Decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Canonical re-encodes JSON text with sorted keys and exact numbers, so
// that equal args hash equal. Text too large to decode, or not JSON, is
// its own canonical form.
func Canonical(raw []byte) []byte {
	if TooManyValues(raw) {
		return raw // refused unread; its hash is that of the text as sent
	}
	v, err := Decode(raw)
	if err != nil {
		return raw
	}
	return CanonicalValue(v, raw)
}

// CanonicalValue is Canonical for a value Decode produced from raw.
func CanonicalValue(v any, raw []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
