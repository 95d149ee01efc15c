package rpc

import "testing"

// TestUnicodeString: a string id is echoed only if it decodes to what
// the client sent: UTF-8, and no lone surrogate escaped.
func TestUnicodeString(t *testing.T) {
	for raw, want := range map[string]bool{
		`"plain"`: true, `"\u00e9"`: true, `"\ud83d\ude00"`: true, `"\\ud800"`: true, `"a\\\ud83d\ude00"`: true,
		`"\ud800"`: false, `"\udc00"`: false, `"a\ud800b"`: false, `"\ud800\u0041"`: false, `"\ud83d\ud83d"`: false,
		`"x\ud800"`: false, "\"\xff\"": false, `"\\\ud800"`: false,
	} {
		if got := unicodeString([]byte(raw)); got != want {
			t.Errorf("unicodeString(%s) = %v, want %v", raw, got, want)
		}
	}
}
