package rpc

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the CPU time the calling thread has used.
func threadCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Skipf("no per-thread usage here: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spinningPipe is a pipe whose read end is wrapped by SpinningInput, and
// its write end; the test is skipped where SpinningInput would not spin.
func spinningPipe(t *testing.T) (*spinningInput, *os.File) {
	t.Helper()
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("SpinningInput does not spin with one CPU")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	// Blocking, read with read(2), as stdin comes to hostcore (os.Pipe's
	// own read end is non-blocking, read through Go's poller).
	r.Fd()
	in, ok := SpinningInput(r, InputSpin).(*spinningInput)
	if !ok {
		t.Fatal("a pipe was not wrapped")
	}
	return in, w
}

// A read of the spinning input returns what was written, whether it came
// during the spin or long after (the spin is bounded: a read that waits
// 300 ms sleeps through nearly all of it), and returns EOF at the end.
func TestSpinningInputReadsAndSleeps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread CPU time is read the Linux way")
	}
	in, w := spinningPipe(t)
	buf := make([]byte, 64)

	w.Write([]byte("ready\n"))
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "ready\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	go func() {
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte("late\n"))
		w.Close()
	}()
	cpu := threadCPU(t)
	n, err := in.Read(buf)
	used := threadCPU(t) - cpu
	if err != nil || string(buf[:n]) != "late\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if used > 100*time.Millisecond {
		t.Fatalf("a read that waited 300 ms used %v of CPU: the spin is not bounded", used)
	}
	if n, err := in.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("at the end: %d, %v", n, err)
	}
}

// The spin adapts: after a read whose data came long after it began (a
// client that paused), the next read does not spin; after one whose data
// came at once, it does again.
func TestSpinningInputSpinsOnlyWhileRequestsComeBackToBack(t *testing.T) {
	in, w := spinningPipe(t)
	defer w.Close()
	buf := make([]byte, 64)
	if !in.spins() {
		t.Fatal("the first read does not spin")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.Write([]byte("late\n"))
	}()
	in.Read(buf)
	if in.spins() {
		t.Fatalf("still spinning after a read that waited %v", in.lastWait)
	}
	// A busy machine may hold up even a read whose data waits: a few
	// tries, of which one must find it at once.
	for try := 0; !in.spins(); try++ {
		if try == 10 {
			t.Fatalf("not spinning after a read that waited %v", in.lastWait)
		}
		w.Write([]byte("at once\n"))
		in.Read(buf)
	}
}

// With one CPU the poll would take it from the client that is to write,
// and --input-spin 0 turns it off: reads never spin.
func TestSpinningInputNotWithOneCPU(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if in := SpinningInput(r, InputSpin).(*spinningInput); in.spins() {
		t.Fatal("spins with GOMAXPROCS=1")
	}
	runtime.GOMAXPROCS(2)
	if in := SpinningInput(r, 0).(*spinningInput); in.spins() {
		t.Fatal("spins with --input-spin 0")
	}
}
