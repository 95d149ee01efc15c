//go:build linux

package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox/background"
)

// TestBackgroundInEveryModeWithoutCards: in Plan and Goal as in Agent,
// under ask, a background start is asked on a card and then reading and
// killing it are not; the ninth is refused before any card.
func TestBackgroundInEveryModeWithoutCards(t *testing.T) {
	for _, mode := range []string{perms.OpAgent, perms.OpPlan, perms.OpGoal} {
		t.Run(mode, func(t *testing.T) {
			var cards atomic.Int32
			fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
				if method == "permission.request" {
					cards.Add(1)
					return json.RawMessage(`{"decision":"allow-once"}`), nil
				}
				return nil, fmt.Errorf("unexpected %s", method)
			}}
			s := newTestServer(t, fc)
			newSession(t, s, "s1", mode, perms.ModeAsk)
			start := func(id string) *ToolResult {
				return run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: id, ToolName: "Bash", Args: json.RawMessage(`{"command":"sleep 30","runInBackground":true}`)})
			}
			r := start("b0")
			d, ok := r.Details.(tools.BashStartDetails)
			if !r.OK || !ok || d.State != background.StateRunning || cards.Load() != 1 {
				t.Fatalf("start: %+v (cards %d)", r, cards.Load())
			}
			for i := 1; i < background.MaxRunning; i++ {
				if r := start(fmt.Sprint("b", i)); !r.OK {
					t.Fatalf("start %d: %+v", i, r)
				}
			}
			asked := cards.Load()
			if r := start("ninth"); r.OK || r.ErrorCode != tools.CodeToolDenied || r.Decision != decPolicy || cards.Load() != asked {
				t.Fatalf("the ninth: %+v, %d cards after %d", r, cards.Load(), asked)
			}
			shell := fmt.Sprintf(`{"shellId":%q}`, d.ShellID)
			o := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "o", ToolName: "BashOutput", Args: json.RawMessage(shell)})
			if od, _ := o.Details.(tools.BashOutputDetails); !o.OK || od.State != background.StateRunning || od.ExitCode != nil {
				t.Fatalf("BashOutput: %+v", o)
			}
			k := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "k", ToolName: "KillShell", Args: json.RawMessage(shell)})
			if kd, _ := k.Details.(tools.KillShellDetails); !k.OK || !kd.Killed || kd.Signal == "" || !strings.Contains(k.Content[0].Text, "Killed "+d.ShellID) {
				t.Fatalf("KillShell: %+v", k)
			}
			if cards.Load() != asked {
				t.Fatalf("reading or killing asked: %d cards, want %d", cards.Load(), asked)
			}
			// Another session sees none of them.
			newSession(t, s, "s2", mode, perms.ModeAsk)
			if r := run(t, s, ExecuteParams{SessionID: "s2", ToolCallID: "o", ToolName: "BashOutput", Args: json.RawMessage(shell)}); r.ErrorCode != tools.CodeInvalidArgument {
				t.Fatalf("another session's read: %+v", r)
			}
			if _, err := s.sessionDelete(t.Context(), json.RawMessage(`{"sessionId":"s1"}`)); err != nil {
				t.Fatal(err)
			}
			if left := s.bg.Running("s1"); len(left) != 0 {
				t.Fatalf("session.delete left %v running", left)
			}
		})
	}
}

// TestShellExitedIsNotified: an ended command is reported once, with
// the call that started it and how it ended.
func TestShellExitedIsNotified(t *testing.T) {
	fc := &fakeClient{}
	s := newTestServer(t, fc)
	newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "b", ToolName: "Bash", Args: json.RawMessage(`{"command":"exit 7","runInBackground":true}`)})
	d, _ := r.Details.(tools.BashStartDetails)
	if !r.OK {
		t.Fatalf("start: %+v", r)
	}
	sh, err := s.bg.Get("s1", d.ShellID)
	if err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	want := fmt.Sprintf(`"shellId":%q,"toolCallId":"b","exitCode":7`, d.ShellID)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		fc.mu.Lock()
		var got []string
		for _, n := range fc.notes {
			if strings.HasPrefix(n, "shell.exited ") {
				got = append(got, n)
			}
		}
		fc.mu.Unlock()
		if len(got) == 1 && strings.Contains(got[0], want) {
			return
		}
		if len(got) > 1 || (len(got) == 1 && !strings.Contains(got[0], want)) {
			t.Fatalf("shell.exited: %v, want one with %s", got, want)
		}
	}
	t.Fatal("no shell.exited")
}
