package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchBackgroundStart: Bash with runInBackground answers once the
// command's shell has begun it, which costs a reaper's start and the
// snapshot's restore, and no more: issue 30's target is 50 ms past the
// restore. The reference is a foreground `true` through the same
// hostcore, which pays the same start and restore, and the command's end
// besides; both run behind a 0.5 s login profile, which neither pays once
// the snapshot is taken. The extra column gives `bash -c true`.
func benchBackgroundStart(b testing.TB, bin string, reps int) benchRow {
	row := benchRow{name: "Bash `sleep 30` with runInBackground, answered, behind a 0.5 s login profile", reference: "foreground Bash `true`, same host",
		target: "≤ foreground `true` + 50 ms"}
	home := b.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("sleep 0.5\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	h := startBench(b, bin, b.TempDir(), "HOME="+home, "SHELL=/bin/sh")
	defer h.close()
	h.call(b, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": b.TempDir(), "permissionMode": "auto"})
	h.exec(b, "b", "Bash", map[string]any{"command": "true"}) // the snapshot is taken
	var plain []time.Duration
	for range reps {
		time.Sleep(300 * time.Millisecond)
		var r map[string]any
		row.ours = append(row.ours, timed(func() { r = h.exec(b, "b", "Bash", map[string]any{"command": "sleep 30", "runInBackground": true}) }))
		d, _ := r["details"].(map[string]any)
		if d["started"] != true {
			b.Fatalf("the background command had not started when answered: %v", r)
		}
		h.exec(b, "b", "KillShell", map[string]any{"shellId": d["shellId"]})
		time.Sleep(300 * time.Millisecond)
		row.ref = append(row.ref, timed(func() { h.exec(b, "b", "Bash", map[string]any{"command": "true"}) }))
		time.Sleep(300 * time.Millisecond)
		plain = append(plain, timed(func() { exec.Command("bash", "-c", "true").Run() }))
	}
	row.extra = fmt.Sprintf("`bash -c true`: %v", round(median(plain)))
	row.check = func(o, r time.Duration) bool { return o <= r+50*time.Millisecond }
	return row
}
