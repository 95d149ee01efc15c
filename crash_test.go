//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hostcore/store"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// TestSIGKILLMidStreamLosesNothingAcknowledged kills hostcore with SIGKILL
// while four auto-mode sessions stream Writes (distinct files, and runs of
// writes to the same few files), then checks what a restart finds:
//   - every acknowledged call has its audit row (audit.query by toolCallId);
//   - every file holds whole content of one call sent for it, never older
//     than the last acknowledged one (a session's writes apply in arrival
//     order) and never a mix: no half-written file at a target path;
//   - the database passes PRAGMA integrity_check before hostcore touches it
//     again, and opens and answers queries after;
//   - every snapshot row's .before file exists under the session's
//     snapshot directory and holds content a call wrote there earlier (or
//     the seed content); its after_hash is one a call sent.
func TestSIGKILLMidStreamLosesNothingAcknowledged(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	const (
		sessions   = 4
		perSession = 150
		hotFiles   = 3 // per session, written again and again
	)
	// Seed some files so that snapshots have previous content.
	seed := map[string]string{}
	for s := range sessions {
		for k := range hotFiles {
			p := fmt.Sprintf("s%d/hot%d.txt", s, k)
			seed[p] = "seed " + p + "\n"
			os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
			os.WriteFile(filepath.Join(ws, p), []byte(seed[p]), 0o644)
		}
	}

	h := startWireHost(t, bin, nil, nil, "--data-dir", data)
	for s := range sessions {
		h.call(t, 10*time.Second, "session.create", map[string]any{"sessionId": fmt.Sprint("s", s), "workspaceRoot": ws, "permissionMode": "auto"})
	}

	type sent struct {
		session, callID, path, content string
		seq                            int // order within its session
	}
	var (
		mu       sync.Mutex
		all      []sent
		acked    = map[string]toolResult{} // by toolCallId
		failures []string
	)
	ackedN := make(chan struct{}, sessions*perSession)
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprint("s", s)
			for i := range perSession {
				var p string
				if i%3 == 0 {
					p = fmt.Sprintf("s%d/hot%d.txt", s, (i/3)%hotFiles)
				} else {
					p = fmt.Sprintf("s%d/d%d/f%03d.txt", s, i%7, i)
				}
				// Some contents are large, to widen the window in which a
				// kill lands inside a write.
				body := fmt.Sprintf("%s call %d\n", sid, i)
				if i%5 == 0 {
					body += strings.Repeat(fmt.Sprintf("%s/%d padding line\n", sid, i), 8000)
				}
				x := sent{session: sid, callID: fmt.Sprintf("%s-w%03d", sid, i), path: p, content: body, seq: i}
				mu.Lock()
				all = append(all, x)
				mu.Unlock()
				_, ch, err := h.start("tools.execute", map[string]any{"sessionId": sid, "turnId": "t", "toolCallId": x.callID,
					"toolName": "Write", "args": map[string]any{"path": p, "content": body}})
				if err != nil {
					return // the process is gone
				}
				go func() {
					select {
					case line := <-ch:
						var m struct {
							Result *toolResult     `json:"result"`
							Error  json.RawMessage `json:"error"`
						}
						json.Unmarshal(line, &m)
						mu.Lock()
						if m.Result == nil || !m.Result.OK {
							failures = append(failures, string(line))
						} else {
							acked[x.callID] = *m.Result
						}
						mu.Unlock()
						ackedN <- struct{}{}
					case <-h.closed:
					}
				}()
			}
		}()
	}
	// Kill once about a third of the calls are acknowledged.
	for range sessions * perSession / 3 {
		select {
		case <-ackedN:
		case <-time.After(60 * time.Second):
			t.Fatal("writes are not being acknowledged")
		}
	}
	// Land the kill a little after an acknowledgement, not right on it.
	time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	h.cmd.Process.Signal(syscall.SIGKILL)
	h.waitExit(t, 10*time.Second)
	<-h.closed
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d writes failed before the kill, e.g. %s", len(failures), failures[0])
	}
	t.Logf("calls sent (at least started): %d, acknowledged before SIGKILL: %d", len(all), len(acked))
	if len(acked) == 0 || len(acked) == len(all) {
		t.Fatalf("the kill did not land mid-stream: %d of %d acknowledged", len(acked), len(all))
	}

	// The database as the kill left it: integrity_check, before hostcore
	// (or anything that could repair it) opens it.
	dbPath := filepath.Join(data, "hostcore.db")
	checkIntegrity(t, dbPath)

	// Files: whole content, not older than the last acknowledged write.
	byPath := map[string][]sent{}
	for _, x := range all {
		byPath[x.path] = append(byPath[x.path], x)
	}
	for p, calls := range byPath {
		lastAcked := -1
		for _, x := range calls {
			if _, ok := acked[x.callID]; ok && x.seq > lastAcked {
				lastAcked = x.seq
			}
		}
		got, err := os.ReadFile(filepath.Join(ws, p))
		if err != nil {
			if lastAcked >= 0 || seed[p] != "" {
				t.Errorf("%s: %v (last acknowledged write seq %d)", p, err, lastAcked)
			}
			continue
		}
		match := -1
		for _, x := range calls {
			if x.content == string(got) {
				match = x.seq
			}
		}
		switch {
		case match < 0 && string(got) == seed[p] && lastAcked < 0:
		case match < 0:
			t.Errorf("%s holds %d bytes that no call sent whole (a half-written file?): %.60q", p, len(got), got)
		case match < lastAcked:
			t.Errorf("%s holds the content of write seq %d, older than the acknowledged seq %d", p, match, lastAcked)
		}
	}
	var temps []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".hostcore-") && strings.HasSuffix(d.Name(), ".tmp") {
			rel, _ := filepath.Rel(ws, p)
			temps = append(temps, rel)
		}
		return nil
	})
	t.Logf("temp files the kill left beside their targets (never at a target path): %d %v", len(temps), temps)

	// Restart on the same data dir: the audit has a row for every
	// acknowledged call.
	h2 := startWireHost(t, bin, nil, nil, "--data-dir", data)
	rowsPresent := 0
	for id := range acked {
		var r struct {
			Rows []struct {
				ToolCallID string `json:"toolCallId"`
				OK         bool   `json:"ok"`
			} `json:"rows"`
		}
		json.Unmarshal(h2.call(t, 10*time.Second, "audit.query", map[string]any{"toolCallId": id}), &r)
		if len(r.Rows) != 1 || r.Rows[0].ToolCallID != id || !r.Rows[0].OK {
			t.Errorf("acknowledged call %s: audit rows %+v, want one ok row", id, r.Rows)
			continue
		}
		rowsPresent++
	}
	var total struct {
		Rows []json.RawMessage `json:"rows"`
	}
	totalRows := 0
	for s := range sessions {
		total.Rows = nil
		json.Unmarshal(h2.call(t, 10*time.Second, "audit.query", map[string]any{"sessionId": fmt.Sprint("s", s), "limit": 10000}), &total)
		totalRows += len(total.Rows)
	}
	t.Logf("audit rows for acknowledged calls: %d of %d; audit rows in all: %d (calls that ran but whose answer the kill swallowed: %d)",
		rowsPresent, len(acked), totalRows, totalRows-rowsPresent)

	h2.stdin.Close()
	if code := h2.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("restarted hostcore exited %d", code)
	}

	// Snapshots: every row's previous content is kept and is content
	// that was at that path before.
	contents := map[string]map[string]bool{} // path -> content hashes that could have been there
	for p, calls := range byPath {
		contents[p] = map[string]bool{}
		for _, x := range calls {
			contents[p][sha(x.content)] = true
		}
		if seed[p] != "" {
			contents[p][sha(seed[p])] = true
		}
	}
	var ids [][2]string // session, snapshot
	conn, err := sqlite.OpenConn(dbPath, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	err = sqlitex.Execute(conn, `SELECT session_id, id FROM snapshots`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			ids = append(ids, [2]string{st.ColumnText(0), st.ColumnText(1)})
			return nil
		},
	})
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []store.Snapshot
	for _, id := range ids {
		sn, err := st.GetSnapshot(t.Context(), id[0], id[1])
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, sn)
	}
	for _, sn := range rows {
		if !contents[sn.Path][sn.AfterHash] {
			t.Errorf("snapshot %s: after_hash of %s matches no content sent", sn.ID, sn.Path)
		}
		if !sn.Existed {
			continue
		}
		b, err := st.SnapshotBefore(t.Context(), sn)
		if err != nil {
			t.Errorf("snapshot %s: %v", sn.ID, err)
		} else if !contents[sn.Path][sha(string(b))] {
			t.Errorf("snapshot %s: holds content never at %s", sn.ID, sn.Path)
		}
	}
	t.Logf("snapshot rows: %d, consistent with their previous content", len(rows))
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// checkIntegrity runs PRAGMA integrity_check on a database file.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatalf("opening the database after the kill: %v", err)
	}
	defer conn.Close()
	var res []string
	err = sqlitex.ExecuteTransient(conn, `PRAGMA integrity_check`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { res = append(res, st.ColumnText(0)); return nil },
	})
	if err != nil || len(res) != 1 || res[0] != "ok" {
		t.Fatalf("integrity_check after the kill: %v %v", res, err)
	}
}

// A database hostcore may read but not write was opened read-only without
// a word: hostcore said it was ready and then failed every call (a
// durability review). It now refuses to start, saying why. As root the
// binary runs as nobody, for whom the file is read-only.
func TestUnwritableDatabaseRefusesToStart(t *testing.T) {
	bin := buildBinary(t)
	base := t.TempDir()
	data := filepath.Join(base, "data")
	init := exec.Command(bin, "--data-dir", data)
	init.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("first start: %v %s", err, out)
	}
	cmd := exec.Command(bin, "--data-dir", data)
	if os.Geteuid() == 0 {
		// nobody must reach the binary too.
		b, _ := os.ReadFile(bin)
		os.WriteFile(filepath.Join(base, "hostcore"), b, 0o755)
		cmd = exec.Command(filepath.Join(base, "hostcore"), "--data-dir", data)
		for _, d := range []string{filepath.Dir(base), base, data} {
			os.Chmod(d, 0o777)
		}
		os.Chmod(filepath.Join(data, "hostcore.db"), 0o644)
		os.Chmod(filepath.Join(data, "hostcore.lock"), 0o666)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		os.Chmod(filepath.Join(data, "hostcore.db"), 0o444)
	}
	cmd.Env = append(os.Environ(), "HOME="+base)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "cannot be written") || strings.Contains(string(out), `"protocolVersion"`) {
		t.Fatalf("a read-only database: %v %s", err, out)
	}
	if os.Geteuid() != 0 {
		return
	}
	// A WAL and shared-memory file another user left (0600, as hostcore
	// makes them): SQLite says only "unable to open database file".
	for _, p := range []string{"hostcore.db-wal", "hostcore.db-shm"} {
		os.WriteFile(filepath.Join(data, p), nil, 0o600)
	}
	again := exec.Command(cmd.Path, cmd.Args[1:]...)
	again.Env, again.SysProcAttr = cmd.Env, cmd.SysProcAttr
	again.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	out, err = again.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "cannot be written") {
		t.Fatalf("a database whose WAL another user holds: %v %s", err, out)
	}
}

// A second hostcore on a data dir in use waited SQLite's 10 s busy timeout
// and then said "database is locked" (a durability review). It now stops
// at once, naming the process that holds it; the first keeps working.
func TestSecondHostcoreOnADataDirStopsAtOnce(t *testing.T) {
	_, h, c, _, data := hostWithSession(t, "auto")
	second := exec.Command(buildBinary(t), "--data-dir", data)
	second.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	out, err := second.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), fmt.Sprintf("in use by another hostcore (pid %d)", h.cmd.Process.Pid)) {
		t.Fatalf("second hostcore: %v %s", err, out)
	}
	if r := c.call(2, "session.get", map[string]any{"sessionId": "s"}); r["sessionId"] != "s" {
		t.Fatalf("the first hostcore after the second tried: %v", r)
	}
}
