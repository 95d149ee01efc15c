package main

import (
	"fmt"
	"testing"
	"time"
)

// benchBashSandbox: Bash `true` run in the command sandbox (the policy
// built from the disk and enforced before the fork, at every command)
// against the same with the sandbox turned off in the settings. Target:
// the sandbox adds at most 5 ms a command. Calls are 300 ms apart, as a
// model's turns are at the least (benchBashShort): back to back, a call
// found its host's warm reaper ready or still starting by chance (each
// command 15 to 45 ms), and the row measured that race, not the sandbox.
func benchBashSandbox(b testing.TB, bin string, reps int) benchRow {
	row := benchRow{name: "Bash `true` sandboxed vs unsandboxed", reference: "the same, commandSandbox off", target: "sandbox adds ≤ 5 ms a command"}
	hosts := map[string]*benchHost{}
	for _, mode := range []string{"on", "off"} {
		h := startBench(b, bin, b.TempDir())
		if mode == "off" {
			h.call(b, "settings.update", map[string]any{"commandSandbox": "off"})
		}
		h.call(b, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": b.TempDir(), "permissionMode": "auto"})
		h.exec(b, "b", "Bash", map[string]any{"command": "true"}) // the login PATH probe, once
		hosts[mode] = h
	}
	for range reps {
		for range 3 {
			time.Sleep(300 * time.Millisecond)
			row.ours = append(row.ours, timed(func() { hosts["on"].exec(b, "b", "Bash", map[string]any{"command": "true"}) }))
			time.Sleep(300 * time.Millisecond)
			row.ref = append(row.ref, timed(func() { hosts["off"].exec(b, "b", "Bash", map[string]any{"command": "true"}) }))
		}
	}
	row.check = func(o, r time.Duration) bool { return o-r <= 5*time.Millisecond }
	row.extra = fmt.Sprintf("%d commands each, interleaved", len(row.ours))
	return row
}
