package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Read of a FIFO in the workspace opens nothing, on the quick path as
// on the ordinary one: a writer blocked in open stays blocked (a quick
// Read that opened it first released the writer, then closed on it).
func TestReadOfAFIFODoesNotReleaseItsWriter(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "ask")
	fifo := filepath.Join(ws, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			close(released)
			f.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "r", "toolName": "Read", "args": map[string]any{"path": "fifo"}})
	if r["ok"] == true || !strings.Contains(r["message"].(string), "not a regular file") {
		t.Fatalf("Read of a FIFO: %v", r)
	}
	select {
	case <-released:
		t.Fatal("the Read opened the FIFO: its writer was released")
	case <-time.After(100 * time.Millisecond):
	}
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close() // lets the writer go
	}
}
