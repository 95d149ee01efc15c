// Package jsonobj walks the members of a JSON object without decoding
// their values: the envelope of every request (rpc) and the params of
// every tools.execute (handlers) are read with it, where a decode into a
// map or through reflection cost a tenth of a small call's CPU. Its input
// must already be valid JSON (json.Valid) in valid UTF-8 (a decoder would
// turn invalid bytes in a name into U+FFFD; Name gives them as they are);
// it checks only what it needs. AppendString writes the other way: a
// short string as encoding/json does (rpc's ids, store's journal lines).
package jsonobj

// Members calls fn with each member's name, as written (quotes and
// escapes included), and raw value, in order, while fn returns true. It
// reports false when b is not an object or fn stopped.
func Members(b []byte, fn func(name, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		kEnd := ValueEnd(b, i)
		if b[i] != '"' || kEnd < 0 {
			return false
		}
		name := b[i:kEnd]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vEnd := ValueEnd(b, i)
		if vEnd < 0 || !fn(name, b[i:vEnd]) {
			return false
		}
		i = skipSpace(b, vEnd)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return i < len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// ValueEnd returns the index just past the JSON value starting at b[i],
// or -1.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := ValueEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return len(b)
}

// Name returns a member name as Members gave it, without its quotes, and
// whether it is plain: without escapes, so that it is the name itself.
func Name(quoted []byte) ([]byte, bool) {
	name := quoted[1 : len(quoted)-1]
	for _, c := range name {
		if c == '\\' {
			return name, false
		}
	}
	return name, true
}
