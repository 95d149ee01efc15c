package handlers

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hostcore/perms"
	"hostcore/store"
)

// A read whose audit row cannot be committed (the data dir's disk full,
// which a command can arrange on purpose: the scratch dir is on it) is
// not answered with what it read: a read is answered only once it is
// audited. Its id stays free and it may be sent again once there is room.
func TestUnauditedReadIsWithheld(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(data, syscall.MNT_DETACH) })
	st, err := store.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{DataDir: data, PermissionTimeout: time.Second}, st, &fakeClient{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); st.Close() })
	ws := newSession(t, s, "s1", perms.OpAgent, perms.ModeAuto)
	os.WriteFile(filepath.Join(ws, "secret.txt"), []byte("the secret\n"), 0o644)

	fill := filepath.Join(data, "fill")
	f, _ := os.Create(fill)
	for {
		if _, err := f.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	f.Close()
	raw, _ := json.Marshal(ExecuteParams{SessionID: "s1", TurnID: "t1", ToolCallID: "r", ToolName: "Read", Args: json.RawMessage(`{"path":"secret.txt"}`)})
	out, err := s.execute(t.Context(), raw, nil)
	if err == nil || !strings.Contains(err.Error(), "withheld") {
		t.Fatalf("an unaudited Read was answered: %v %+v", err, out)
	}
	// A Write that could not record its id is not run; the error that its
	// audit row failed too still says so.
	w, _ := json.Marshal(ExecuteParams{SessionID: "s1", TurnID: "t1", ToolCallID: "w", ToolName: "Write", Args: json.RawMessage(`{"path":"x.txt","content":"x"}`)})
	if out, err := s.execute(t.Context(), w, nil); err == nil || !strings.Contains(err.Error(), "was not run") {
		t.Fatalf("a Write on a full data dir: %v %+v", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Fatal("the Write ran")
	}

	os.Remove(fill)
	out, err = s.execute(t.Context(), raw, nil)
	if err != nil {
		t.Fatalf("the Read sent again once there was room: %v", err)
	}
	if r := out.(*ToolResult); !r.OK || r.AuditError != "" || !strings.Contains(r.Content[0].Text, "the secret") {
		t.Fatalf("the Read sent again: %+v", r)
	}
}
