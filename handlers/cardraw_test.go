package handlers

import (
	"strings"
	"testing"

	"hostcore/perms/redact"
)

func TestCardRawTextKeepsLinesHidesSecretsAndCuts(t *testing.T) {
	got := cardRawText("a\nkey sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nb\n")
	if !strings.HasPrefix(got, "a\nkey ") || !strings.HasSuffix(got, "\nb\n") || strings.Contains(got, "aaaaaaaaaaaaaaaaaaaa") {
		t.Fatalf("cardRawText = %q", got)
	}
	long := strings.Repeat("line of text\n", 2*redact.CardBodyMax/13)
	got = cardRawText(long)
	if len(got) > redact.CardBodyMax+64 || !strings.HasSuffix(got, " bytes more not shown]\n") || strings.Contains(got, `\n`) {
		t.Fatalf("cut cardRawText ends %q (len %d)", got[max(0, len(got)-80):], len(got))
	}
}
