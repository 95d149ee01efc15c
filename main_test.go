package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
)

// buildBinary builds hostcore once per test run (with -race when the tests
// run with it) and returns its path.
func buildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hostcore-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "hostcore")
		args := []string{"build", "-o", builtBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, ".")...)
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building hostcore: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

// syncWriter lets the test read stderr while the process writes it.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
