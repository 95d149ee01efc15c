package handlers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/sandbox/process"
)

// The names the precheck (bash_denylist.go) reads of the Bash tool.
type bashArgs = tools.BashArgs

const maxCommandBytes = tools.MaxCommandBytes

// shellPinsKept bounds the per-session memory of pinned turn shells.
const shellPinsKept = 64

// rawNotifier is implemented by rpc.Server: notifications whose params
// are encoded straight into the lines that are written, several with one
// write.
type rawNotifier interface {
	NotifyBuildN(method string, n int, build func(i int, dst []byte) []byte) error
}

// outputChunk is one tool.output notification's params (PROTOCOL
// section 5).
type outputChunk struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	Stream     string `json:"stream"`
	Seq        int    `json:"seq"`
	Data       string `json:"data"`
}

// outputNotifier sends the command's output as tool.output notifications
// (PROTOCOL section 5). Each call has written its lines before it returns,
// and every call returns before process.Run does: all chunks precede the
// response. The chunks of one call go out with one write.
func (c *call) outputNotifier() func(stream string, seq int, chunks [][]byte) {
	chunk := func(stream string, seq int, data []byte) outputChunk {
		return outputChunk{SessionID: c.sess.ID, ToolCallID: c.p.ToolCallID, Stream: stream, Seq: seq, Data: string(data)}
	}
	raw, ok := c.s.client.(rawNotifier)
	if !ok {
		return func(stream string, seq int, chunks [][]byte) {
			for i, data := range chunks {
				c.s.client.Notify(context.Background(), "tool.output", chunk(stream, seq+i, data))
			}
		}
	}
	return func(stream string, seq int, chunks [][]byte) {
		// The data, all but a few bytes of a flood, is quoted straight
		// from the bytes read (jsontext.AppendQuote: invalid UTF-8 becomes
		// U+FFFD, as encoding/json makes it): no string copy per chunk,
		// no reflection, no garbage. The fields before it are encoded
		// once per batch.
		head, err := json.Marshal(outputChunk{SessionID: c.sess.ID, ToolCallID: c.p.ToolCallID, Stream: stream})
		if err != nil {
			return // strings always encode
		}
		head = head[:bytes.LastIndex(head, []byte(`,"seq":`))]
		raw.NotifyBuildN("tool.output", len(chunks), func(i int, b []byte) []byte {
			b = append(b, head...)
			b = append(b, `,"seq":`...)
			b = strconv.AppendInt(b, int64(seq+i), 10)
			b = append(b, `,"data":`...)
			b, _ = jsontext.AppendQuote(b, chunks[i])
			return append(b, '}')
		})
	}
}

// bashEnvFile writes tools.BashEnvScript into the data dir, anew for every
// command (a command may have put anything there since: a FIFO would hold
// every later command until its timeout), and returns its path. "" when it
// cannot be written; when the shell is named sh (bash then reads no
// BASH_ENV, and ours would reach the bash scripts the command runs); and
// when the data dir's path holds '$', '`' or '\': bash expands BASH_ENV's
// value as in double quotes, and a data dir's name must neither run as a
// command nor name another file. The command then runs with the PATH its
// profile files leave.
func (s *Server) bashEnvFile(shell string) string {
	if s.cfg.DataDir == "" || strings.ContainsAny(s.cfg.DataDir, "$`\\") || filepath.Base(shell) == "sh" {
		return ""
	}
	p := filepath.Join(s.cfg.DataDir, "bash_env.sh")
	tmp, err := os.CreateTemp(s.cfg.DataDir, ".bash_env-*")
	if err == nil {
		_, err = tmp.WriteString(tools.BashEnvScript)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), p) // replaces whatever is there, a link included
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		s.log.Warn("cannot write the BASH_ENV script; the command gets the PATH its profile files leave", "err", err)
		return ""
	}
	return p
}

// --- shell pinning (design section 5, D190) ---

// shellPins remembers, per session, the shell each recent turn pinned with
// its first Bash call. Guarded by runtime.mu.
type shellPins struct {
	byTurn map[string]string
	order  []string
}

// pin returns the turn's pinned shell, pinning id if the turn has none.
func (p *shellPins) pin(turn, id string) string {
	if got, ok := p.byTurn[turn]; ok {
		return got
	}
	if p.byTurn == nil {
		p.byTurn = map[string]string{}
	}
	if len(p.order) >= shellPinsKept {
		delete(p.byTurn, p.order[0])
		p.order = p.order[1:]
	}
	p.byTurn[turn] = id
	p.order = append(p.order, turn)
	return id
}

// checkShell resolves the effective shell, pins it for the turn on its
// first Bash call (or pins the id the client sent in ExecuteParams.shell),
// and refuses the call when the pinned and the effective shell differ.
// Catalog ids map one-to-one to dialects, so comparing ids compares both.
func (c *call) checkShell(ctx context.Context) (string, *ToolResult) {
	eff, err := c.s.effectiveShell(ctx)
	if err != nil {
		return "", failResult(tools.CodeToolFailed, "reading the command shell setting: %v", err)
	}
	if eff == "" {
		_, err := process.ResolveBash()
		if err == nil {
			err = process.ErrShellNotFound
		}
		return "", failResult(tools.CodeShellNotFound, "%v", err)
	}
	want := c.p.Shell
	if want != "" && !inCatalog(want) {
		return "", failResult(tools.CodeShellInvalid, "shell %q is not a command shell id (want one of windows-powershell, cmd, git-bash, bash)", redact.EscapeText(want))
	}
	c.rt.mu.Lock()
	pinned := c.rt.shells.pin(c.p.TurnID, cmp.Or(want, eff))
	c.rt.mu.Unlock()
	switch {
	case want != "" && want != pinned:
		return "", failResult(tools.CodeShellChanged, "this call names shell %q but turn %s pinned %q; start a new turn to use another shell", want, redact.EscapeText(c.p.TurnID), pinned)
	case pinned != eff:
		return "", failResult(tools.CodeShellChanged, "turn %s pinned shell %q but the effective shell is now %q; the command was not run. Start a new turn to use %q",
			redact.EscapeText(c.p.TurnID), pinned, eff, eff)
	case eff != "bash":
		return "", failResult(tools.CodeShellNotFound, "shell %q cannot run commands on this platform; only bash is supported", eff)
	}
	return eff, nil
}

func inCatalog(id string) bool {
	for _, sh := range process.Catalog() {
		if sh.ID == id {
			return true
		}
	}
	return false
}
