package rpctest

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"testing"
)

// Start starts cmd with pipes on its stdin and stdout and returns its
// stdin and the lines it writes to stdout (closed at end of output, each
// up to 64 MiB). The child is killed when the test ends; a test that
// failed logs cmd.Stderr when it can tell what it holds (a fmt.Stringer).
func Start(t testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, lines <-chan string) {
	t.Helper()
	stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if s, ok := cmd.Stderr.(fmt.Stringer); ok && t.Failed() {
			t.Logf("hostcore stderr:\n%s", s)
		}
	})
	return stdin, out
}
