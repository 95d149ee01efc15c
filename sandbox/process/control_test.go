//go:build linux || darwin

package process

import (
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"hostcore/sandbox/landlock"
)

// TestRulesetOverTheControlSocket: the reaper gets the ruleset's
// descriptor (or that there is none) before the spec; a message that is
// neither is refused, and a closed socket reads as EOF.
func TestRulesetOverTheControlSocket(t *testing.T) {
	pair := func() (host *os.File, reaperFD int) {
		h, r, err := controlPair()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(); r.Close() })
		h.SetWriteDeadline(time.Now().Add(5 * time.Second))
		return h, int(r.Fd())
	}
	h, r := pair()
	if err := sendRuleset(h, nil); err != nil {
		t.Fatal(err)
	}
	if fd, err := receiveRuleset(r); fd != -1 || err != nil {
		t.Errorf("unconfined: fd %d, err %v", fd, err)
	}
	h.Write([]byte{'X'})
	if _, err := receiveRuleset(r); err == nil {
		t.Error("a message that is neither marker was accepted")
	}
	h.Close()
	if _, err := receiveRuleset(r); err != io.EOF {
		t.Errorf("closed socket: err %v, want EOF", err)
	}
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip(reason)
	}
	rs, err := landlock.Prepare(landlock.Policy{Mode: landlock.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	h, r = pair()
	if err := sendRuleset(h, rs); err != nil {
		t.Fatal(err)
	}
	fd, err := receiveRuleset(r)
	if err != nil || fd < 0 {
		t.Fatalf("ruleset: fd %d, err %v", fd, err)
	}
	_, flags := rs.Handoff()
	got, err := landlock.Adopt(fd, flags)
	if err != nil {
		t.Fatalf("the descriptor received is no ruleset: %v", err)
	}
	got.Close()
	// A descriptor that is no ruleset is refused by Adopt.
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	unix.Close(p[1])
	if _, err := landlock.Adopt(p[0], 0); err == nil {
		t.Error("Adopt took a pipe for a ruleset")
	}
}
