package handlers

import (
	"strings"
	"testing"
)

func TestRedactHidesSecrets(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"git push https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
		{"export GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"},
		{"OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234"},
		{"aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
		{"curl -H 'Authorization: Bearer eyJhbGciOi.payload.sig' x", "eyJhbGciOi.payload.sig"},
		{`{"password":"hunter2"}`, "hunter2"},
		{"mysql --password=s3cr3t -u root", "s3cr3t"},
		{"psql postgres://admin:topsecret@db/x", "topsecret"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"},
		{"token: xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij"},
	} {
		got := Redact(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "[REDACTED]") {
			t.Errorf("Redact(%q) = %q: secret kept", c.in, got)
		}
	}
	if got := Redact("go test ./... && echo tokens are fine"); got != "go test ./... && echo tokens are fine" {
		t.Errorf("ordinary text changed: %q", got)
	}
}

// TestEscapeTextShowsWhatRuns: control characters, ANSI escapes, bidi
// overrides and zero-width characters are shown escaped; a literal
// backslash sequence and the character it spells never look alike.
func TestEscapeTextShowsWhatRuns(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ls\x1b[2J", `ls\x1b[2J`},
		{"rm -rf /\r# harmless", `rm -rf /\r# harmless`},
		{"echo \u202egnp.exe", `echo \u202egnp.exe`},
		{"a\u200bb", `a\u200bb`},
		{"tab\there", `tab\there`},
		{`literal\tbackslash`, `literal\\tbackslash`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"plain ünïcode ✓", "plain ünïcode ✓"},
	} {
		if got := escapeText(c.in); got != c.want {
			t.Errorf("escapeText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPreviewJSONRedactsQuotedSecrets: in canonical JSON every quote is
// escaped; secrets inside quoted strings must still go (found in review).
func TestPreviewJSONRedactsQuotedSecrets(t *testing.T) {
	for _, c := range []struct{ args, secret string }{
		{`{"command":"export API_KEY=\"abcd1234secretvalue\""}`, "abcd1234secretvalue"},
		{`{"content":"token: \"qwertyuiop\"","path":"a.yml"}`, "qwertyuiop"},
		{`{"command":"curl -d '{\"password\":\"hunter2xyz\"}' https://x"}`, "hunter2xyz"},
		{`{"nested":[{"k":"Authorization: Bearer abc.def.ghi"}]}`, "abc.def.ghi"},
	} {
		got := previewJSON(string(canonicalJSON([]byte(c.args))), previewMax)
		if strings.Contains(got, c.secret) {
			t.Errorf("preview of %s kept the secret: %s", c.args, got)
		}
	}
}

// FuzzRedactHints: the literal pre-check never lets a secret through that
// the patterns alone would catch.
func FuzzRedactHints(f *testing.F) {
	for _, s := range []string{
		"git push https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com",
		"PASSWORD=x", "Api-Key: abc", "ACCESSKEY=abcdef", "client_secret=z", "AUTHORIZATION: Basic abc",
		"AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE", "AIzaSyA-abcdefghijklmnopqrstuvwxyz0123456",
		"-----BEGIN EC PRIVATE KEY-----\nabc", "xoxp-1234567890-abc", "sk-ant-abcdefghijklmnopqrstu",
		"github_pat_abcdefghijklmnopqrstuvwx", "ftp://u:p@host", "paſſword=x", "to\u212aen=abc", "small.txt", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Redact(s), redactAll(s); got != want {
			t.Errorf("Redact(%q) = %q, patterns alone give %q", s, got, want)
		}
	})
}
