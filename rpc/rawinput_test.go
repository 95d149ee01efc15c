package rpc

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Only a pipe or socket in non-blocking mode is read raw: a raw read of
// anything that can block would hold its processor (and every garbage
// collection) for as long.
func TestRawInputOnlyForNonBlockingPipes(t *testing.T) {
	r, w, err := os.Pipe() // Go makes both ends non-blocking
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, ok := newRawInput(r); !ok {
		t.Error("a non-blocking pipe is not read raw")
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(p[0]), "blocking")
	defer blocking.Close()
	defer unix.Close(p[1])
	if _, ok := newRawInput(blocking); ok {
		t.Error("a blocking pipe would be read raw")
	}
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("{}\n"), 0o600)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := newRawInput(f); ok {
		t.Error("a regular file would be read raw")
	}
	if _, ok := newRawInput(bytes.NewReader(nil)); ok {
		t.Error("a reader that is not a file would be read raw")
	}
}

// A raw read parks when the pipe is empty and wakes when data comes, reads
// what there is, says io.EOF when the writer is gone, and returns when its
// file is closed under it.
func TestRawInputReads(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in, ok := newRawInput(r)
	if !ok {
		t.Fatal("not a raw input")
	}
	go func() {
		w.Write([]byte(`{"jsonrpc":`))
		time.Sleep(50 * time.Millisecond)
		w.Write([]byte("\"2.0\"}\n"))
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "{\"jsonrpc\":\"2.0\"}\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	if n, err := in.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end: %d %v", n, err)
	}
	if n, err := in.Read(nil); n != 0 || err != nil {
		t.Fatalf("read of nothing: %d %v", n, err)
	}
	r.Close()

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	in2, _ := newRawInput(r2)
	done := make(chan error, 1)
	go func() {
		_, err := in2.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	r2.Close()
	select {
	case err := <-done:
		if err == nil || err == io.EOF {
			t.Fatalf("read of a closed input: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read parked on a closed input never returned")
	}
}
