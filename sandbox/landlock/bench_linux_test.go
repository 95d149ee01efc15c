package landlock

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkTrue measures what the sandbox adds to a command: /bin/true
// started and waited for bare, and sandboxed with the default policy for
// this user's home (the built-in denied paths carved out of / and the
// home). "fork" is the reaper's way (Prepare, then Fork, per command).
func BenchmarkTrue(b *testing.B) {
	requireLandlock(b)
	wd, _ := os.Getwd()
	p := DefaultPolicy(WorkspaceWrite, wd, "", os.Environ())
	argv := []string{"/bin/true"}
	attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}}
	wait := func(b *testing.B, pid int, err error) {
		if err != nil {
			b.Fatal(err)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
			b.Fatalf("wait: %v %v", err, ws)
		}
	}
	b.Run("plain", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			pid, err := syscall.ForkExec(argv[0], argv, attr)
			wait(b, pid, err)
		}
	})
	b.Run("plan", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			pl, err := makePlan(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(pl.Rules)), "rules")
		}
	})
	b.Run("prepare", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			rs, err := Prepare(p)
			if err != nil {
				b.Fatal(err)
			}
			rs.Close()
		}
	})
	b.Run("fork", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			rs, err := Prepare(p)
			if err != nil {
				b.Fatal(err)
			}
			pid, err := rs.Fork(func() (int, error) { return syscall.ForkExec(argv[0], argv, attr) })
			rs.Close()
			wait(b, pid, err)
		}
	})
	b.Run("plain-exec-cmd", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			if err := exec.Command(argv[0]).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuPerOp reports the CPU time (user and system, this process and its
// children) per operation: on a busy machine it is steadier than the
// wall time, which counts the waits for a CPU.
func cpuPerOp(b *testing.B) func() {
	before := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() int64 {
	var total int64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		total += ru.Utime.Nano() + ru.Stime.Nano()
	}
	return total
}
