//go:build unix

package rpc

import (
	"errors"
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

// blockingPipe is a pipe as stdin comes to hostcore: blocking, and an
// *os.File Go does not poll, so its reads are plain read(2) (os.Pipe's
// are non-blocking, through Go's poller, which would wait out an EAGAIN
// itself); with the read end's descriptor.
func blockingPipe(t *testing.T) (r, w *os.File, rfd int) {
	t.Helper()
	var fds [2]int
	syscall.ForkLock.RLock() // as os.Pipe: no child started meanwhile inherits them
	err := syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w, fds[0]
}

// spinningPipe is a blocking pipe whose read end is wrapped by Input, and
// its write end; the test is skipped where Input would not spin.
func spinningPipe(t *testing.T) (*inputReader, *os.File) {
	t.Helper()
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("Input does not spin with one CPU")
	}
	r, w, _ := blockingPipe(t)
	return Input(r, InputSpin).(*inputReader), w
}

// A read of the spinning input returns what was written, whether it came
// during the spin or long after (the spin is bounded: a read that waits
// 300 ms sleeps through nearly all of it), and returns EOF at the end.
func TestInputReadsAndSleeps(t *testing.T) {
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
func TestInputSpinsOnlyWhileRequestsComeBackToBack(t *testing.T) {
	in, w := spinningPipe(t)
	defer w.Close()
	buf := make([]byte, 64)
	if !in.spins() {
		t.Fatal("the first read does not spin")
	}
	// The same for a read that waits: a busy machine may hold this
	// goroutine up past the late write, so that the read finds the line
	// at once (a loaded run could see that); then it is tried again.
	for try := 0; in.spins(); try++ {
		if try == 10 {
			t.Fatalf("still spinning after a read that waited %v", in.lastWait)
		}
		go func() {
			time.Sleep(50 * time.Millisecond)
			w.Write([]byte("late\n"))
		}()
		in.Read(buf)
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
func TestInputNotWithOneCPU(t *testing.T) {
	r, _, _ := blockingPipe(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if in := Input(r, InputSpin).(*inputReader); in.spins() {
		t.Fatal("spins with GOMAXPROCS=1")
	}
	runtime.GOMAXPROCS(2)
	if in := Input(r, 0).(*inputReader); in.spins() {
		t.Fatal("spins with --input-spin 0")
	}
}

// A blocking stdin made non-blocking by another holder of its open file
// description (a parent that kept its copy) makes a read fail with EAGAIN
// while no line waits: the read waits for one instead, spinning or not,
// asleep in poll (a read that waits 200 ms uses next to no CPU).
func TestInputWaitsOutEAGAIN(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread CPU time is read the Linux way")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, spin := range []time.Duration{InputSpin, 0} {
		r, w, rfd := blockingPipe(t)
		in := Input(r, spin).(*inputReader)
		syscall.SetNonblock(rfd, true)
		if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("the pipe's own read: %d, %v; want EAGAIN", n, err)
		}
		wrote := make(chan time.Time, 1)
		go func() {
			time.Sleep(200 * time.Millisecond)
			wrote <- time.Now()
			w.Write([]byte("line\n"))
		}()
		buf := make([]byte, 64)
		cpu := threadCPU(t)
		n, err := in.Read(buf)
		returned := time.Now()
		used := threadCPU(t) - cpu
		if err != nil || string(buf[:n]) != "line\n" {
			t.Errorf("spin %v: read %q, %v", spin, buf[:n], err)
		}
		// Against the write's own time, not a fixed 150 ms: a loaded
		// machine may hold this goroutine up past part of the writer's
		// sleep before the read begins.
		if at := <-wrote; returned.Before(at) {
			t.Errorf("spin %v: the read returned %v before the line was written", spin, at.Sub(returned))
		}
		if used > 50*time.Millisecond {
			t.Errorf("spin %v: a read that waited %v used %v of CPU: not asleep", spin, in.lastWait, used)
		}
		w.Close()
		if n, err := in.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("spin %v: at the end: %d, %v", spin, n, err)
		}
	}
}
