package denylist

import (
	"strings"
	"testing"
)

// benchCommands are a typical command an agent runs and the worst the
// bounds allow (128 KiB of brace groups and substitutions).
var benchCommands = map[string]string{
	"typical": `cd src && go test ./... -run 'Test(Read|Write)' -count=1 2>&1 | tail -20; git diff --stat HEAD~1 > /tmp/x.txt && echo "${VERSION#v}" {a,b}`,
	"heredoc": "cat > main.go <<'EOF'\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n\tm := map[string]int{\"a\": 1, \"b\": 2}\n\tfmt.Println(m)\n}\nEOF\ngo run main.go",
	"worst":   strings.Repeat("echo "+strings.Repeat("{a,b}", 700)+"\n", 36) + "\\\nextglob",
}

func BenchmarkCheckCommand(b *testing.B) {
	ws := b.TempDir()
	for _, name := range []string{"typical", "heredoc", "worst"} {
		cmd := benchCommands[name][:min(len(benchCommands[name]), MaxCommandBytes)]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				CheckCommand(cmd, ws, "/home/me", nil)
			}
		})
	}
}
