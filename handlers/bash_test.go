//go:build unix

package handlers

import (
	"hostcore/handlers/tools"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestShellPinsAreBounded(t *testing.T) {
	var p shellPins
	if got := p.pin("t0", "bash"); got != "bash" {
		t.Fatal(got)
	}
	if got := p.pin("t0", "git-bash"); got != "bash" {
		t.Fatalf("a turn's pin changed to %q", got)
	}
	for i := range 2 * shellPinsKept {
		p.pin(strings.Repeat("x", i+1), "bash")
	}
	if len(p.byTurn) != shellPinsKept || len(p.order) != shellPinsKept {
		t.Fatalf("%d pins kept, want %d", len(p.byTurn), shellPinsKept)
	}
}

// bashEnvFile: a data dir whose name bash would expand in BASH_ENV ('$',
// '`', '\') or a shell named sh gets no script; otherwise it is written
// anew for every command, whatever was put in its place (a FIFO would
// hold every later command until its timeout).
func TestBashEnvFile(t *testing.T) {
	for _, name := range []string{"a$(touch x)", "a`id`", "a$HOME", `a\\x`} {
		dir := filepath.Join(t.TempDir(), name)
		os.MkdirAll(dir, 0o700)
		s := &Server{cfg: Config{DataDir: dir}}
		if got := s.bashEnvFile("/bin/bash"); got != "" {
			t.Errorf("data dir %q: BASH_ENV script %q", name, got)
		}
	}
	dir := t.TempDir()
	s := &Server{cfg: Config{DataDir: dir}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if got := s.bashEnvFile("/usr/local/bin/sh"); got != "" {
		t.Errorf("a shell named sh: BASH_ENV script %q", got)
	}
	p := s.bashEnvFile("/bin/bash")
	if p == "" {
		t.Fatal("no BASH_ENV script for a plain data dir")
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := s.bashEnvFile("/bin/bash"); got != p {
		t.Fatalf("script %q after a FIFO was put there", got)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != tools.BashEnvScript {
		t.Fatalf("script %q %v", b, err)
	}
}
