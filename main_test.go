package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestMain doubles as the benchmark's reference server: with
// HOSTCORE_BENCH_ECHO=1 the test binary is a minimal JSON-RPC echo server
// (decode each request line, answer it) over stdin/stdout.
func TestMain(m *testing.M) {
	if os.Getenv("HOSTCORE_BENCH_ECHO") == "1" {
		echoServer(os.Stdin, os.Stdout)
		return
	}
	// Under -race the binary sleeps 1 s at exit (the race runtime's
	// atexit_sleep_ms), and so does each Bash command's reaper (the
	// binary re-executed): 2 s of the 3 s a shutdown may take went to
	// the race runtime, not to hostcore, and a loaded machine ran out of
	// the rest. The other packages' tests run their reapers so too.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

func echoServer(in io.Reader, out io.Writer) {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(line, &req)
		resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"echo": req.Params}})
		w.Write(append(resp, '\n'))
		w.Flush()
	}
}

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
