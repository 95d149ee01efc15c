package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// benchAged gives the rows of a long session (row keys agedwrite,
// agedstartup, snapdisk). One data dir is aged once per run, through the
// binary: agedCalls calls in one session, every other one a Write over an
// existing file (so about 15,000 snapshots, all kept: it is aged under a
// retention rule of 20,000 a session), the rest Reads, Greps and Globs.
// Each row then compares it with a fresh data dir in the same run.
func benchAged(b testing.TB, bin string, reps int, on func(string) bool) []benchRow {
	if !on("agedwrite") && !on("agedstartup") && !on("snapdisk") {
		return nil
	}
	aged := buildAgedDir(b, bin)
	var rows []benchRow
	// The disk and start-up rows read the data dir as aging left it; the
	// Write/Edit row then runs under the default rule, which evicts
	// snapshots and so changes it.
	if on("snapdisk") {
		rows = append(rows, benchSnapDisk(b, aged))
	}
	if on("agedstartup") {
		rows = append(rows, benchAgedStartup(b, bin, aged, reps*3))
	}
	if on("agedwrite") {
		rows = append(rows, benchAgedWrite(b, bin, aged, reps))
	}
	return rows
}

const (
	agedCalls = 30000
	agedFiles = 400
	// agedRetention keeps every snapshot aging makes.
	agedRetention = "HOSTCORE_SNAPSHOT_RETENTION=20000,1073741824"
)

// agedContent is what the i-th Write of aging writes: distinct for each
// i (no two snapshots share content), of 17 or 52 bytes, so that both
// ways the store keeps small content (in the snapshot's row, and in the
// blob table) are taken.
func agedContent(i int) string {
	if i%2 == 0 {
		return fmt.Sprintf("content %08d\n", i)
	}
	return fmt.Sprintf("content %08d of a file the benchmark rewrites\n", i)
}

// agedWorkspace is a workspace of agedFiles small files.
func agedWorkspace(b testing.TB) string {
	ws := b.TempDir()
	for i := range agedFiles {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte(agedContent(-1-i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// agedDir is a data dir aged by buildAgedDir.
type agedDir struct {
	data, ws  string
	snapshots int // Writes over an existing file: snapshots holding content
	took      time.Duration
}

// agedCall is the i-th call of aging: odd calls overwrite a file, even
// ones read (a Grep in ten, a Glob in forty).
func agedCall(i int) (tool string, args map[string]any) {
	file := fmt.Sprintf("f%d.txt", (i/2)%agedFiles)
	switch {
	case i%2 == 1:
		return "Write", map[string]any{"path": file, "content": agedContent(i)}
	case i%20 == 0:
		return "Grep", map[string]any{"pattern": fmt.Sprintf("content 000%d", i%10), "outputMode": "files_with_matches"}
	case i%40 == 10:
		return "Glob", map[string]any{"pattern": "**/*.txt"}
	}
	return "Read", map[string]any{"path": file}
}

// buildAgedDir ages a data dir: agedCalls calls in session "old",
// pipelined (up to 16 in flight, as a client with parallel tool calls
// sends them) so that it takes seconds, not minutes.
func buildAgedDir(b testing.TB, bin string) agedDir {
	a := agedDir{data: b.TempDir(), ws: agedWorkspace(b)}
	h := startBench(b, bin, a.data, agedRetention)
	h.call(b, "session.create", map[string]any{"sessionId": "old", "workspaceRoot": a.ws, "permissionMode": "auto"})
	a.took = timed(func() { h.pipeline(b, "old", agedCalls, 16, agedCall) })
	h.close()
	a.snapshots = agedCalls / 2 // the odd calls
	return a
}

// pipeline sends n tool calls of session, keeping up to window of them in
// flight, and fails on any answer that is not ok.
func (h *benchHost) pipeline(b testing.TB, session string, n, window int, call func(i int) (string, map[string]any)) {
	var mu sync.Mutex // h.in: requests, and answers to the host's requests
	slots := make(chan struct{}, window)
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			slots <- struct{}{}
			tool, args := call(i)
			line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("p", i), "method": "tools.execute",
				"params": map[string]any{"sessionId": session, "turnId": fmt.Sprint("t", i/20), "toolCallId": fmt.Sprint("pc", i), "toolName": tool, "args": args}})
			mu.Lock()
			_, err := h.in.Write(append(line, '\n'))
			mu.Unlock()
			if err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for done := 0; done < n; {
		line, err := h.out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("pipeline: reading after %d answers: %v", done, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result struct {
				OK      bool   `json:"ok"`
				Message string `json:"message"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatalf("pipeline: bad line: %v", err)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			mu.Lock()
			fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":%s,"result":{"decision":"allow-once"}}`+"\n", m.ID)
			mu.Unlock()
		case m.Method != "":
		case m.Error != nil || !m.Result.OK:
			b.Fatalf("pipeline: call %s failed: %s %s", m.ID, m.Error, m.Result.Message)
		default:
			done++
			<-slots
		}
	}
	if err := <-sent; err != nil {
		b.Fatalf("pipeline: writing: %v", err)
	}
}

// benchAgedWrite: the median of a Write over an existing file and an Edit
// in the aged session, against the same calls in a fresh session of a
// fresh data dir, interleaved pair by pair, both hosts under the default
// retention rule (the aged session's first save evicts all but the last
// 5,000 snapshots, untimed; its time is given beside).
func benchAgedWrite(b testing.TB, bin string, aged agedDir, reps int) benchRow {
	row := benchRow{name: fmt.Sprintf("Write/Edit in a session of %d prior calls (%d snapshots)", agedCalls, aged.snapshots),
		reference: "the same in a fresh session", target: "≤1.2x", ratioLimit: 1.2}
	old := startBench(b, bin, aged.data)
	fresh := startBench(b, bin, b.TempDir())
	fresh.call(b, "session.create", map[string]any{"sessionId": "new", "workspaceRoot": agedWorkspace(b), "permissionMode": "auto"})
	hosts := []struct {
		h       *benchHost
		session string
	}{{old, "old"}, {fresh, "new"}}
	var writes, edits [2][]time.Duration
	// pair is a Write over file k then an Edit of what it wrote.
	pair := func(host, k, v int) (w, e time.Duration) {
		h, s := hosts[host].h, hosts[host].session
		file := fmt.Sprintf("f%d.txt", k%agedFiles)
		w = timed(func() {
			h.exec(b, s, "Write", map[string]any{"path": file, "content": fmt.Sprintf("measured %d\n", v)})
		})
		e = timed(func() {
			h.exec(b, s, "Edit", map[string]any{"path": file, "old_string": fmt.Sprintf("measured %d", v), "new_string": fmt.Sprintf("edited %d", v)})
		})
		return w, e
	}
	first, _ := pair(0, 0, 0) // the eviction down to the default rule
	pair(1, 0, 0)
	const pairs = 40
	n := 1
	for range reps {
		var per [2][]time.Duration
		for range pairs {
			for host := range 2 {
				w, e := pair(host, n, n)
				writes[host], edits[host] = append(writes[host], w), append(edits[host], e)
				per[host] = append(per[host], w, e)
			}
			n++
		}
		row.ours = append(row.ours, median(per[0]))
		row.ref = append(row.ref, median(per[1]))
	}
	row.extra = fmt.Sprintf("Write %v vs %v, Edit %v vs %v (aged vs fresh, medians of %d each); aging took %v; the first save in the aged session (evicting down to the default rule) took %v",
		round(median(writes[0])), round(median(writes[1])), round(median(edits[0])), round(median(edits[1])), len(writes[0]), aged.took.Round(time.Second), round(first))
	return row
}

// startupTime spawns hostcore on data and times it to the initialize
// answer (its exit is waited for after the timing).
func startupTime(b testing.TB, bin, data string) time.Duration {
	cmd := exec.Command(bin, "--data-dir", data, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n"))
	line, err := bufio.NewReader(out).ReadSlice('\n')
	took := time.Since(start)
	in.Close()
	cmd.Wait()
	if err != nil || !strings.Contains(string(line), `"result"`) {
		b.Fatalf("initialize on %s: %v %s", data, err, line)
	}
	return took
}

// benchAgedStartup: spawn to the initialize answer on the aged data dir,
// against a data dir that was created and used once but holds nothing,
// interleaved.
func benchAgedStartup(b testing.TB, bin string, aged agedDir, reps int) benchRow {
	row := benchRow{name: fmt.Sprintf("start-up to `initialize`, data dir of %d snapshots", aged.snapshots),
		reference: "the same, empty data dir", target: "≤1.2x and <50 ms"}
	empty := b.TempDir()
	h := startBench(b, bin, empty)
	h.call(b, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": b.TempDir(), "permissionMode": "auto"})
	h.close()
	for range reps {
		row.ours = append(row.ours, startupTime(b, bin, aged.data))
		row.ref = append(row.ref, startupTime(b, bin, empty))
	}
	row.check = func(o, r time.Duration) bool { return float64(o) <= 1.2*float64(r) && o < 50*time.Millisecond }
	return row
}

// benchSnapDisk: the disk the aged data dir's snapshots take (their
// tables and indexes, by SQLite's dbstat, and any blob files), against a
// 4 KiB block for each, what one file a snapshot costs.
func benchSnapDisk(b testing.TB, aged agedDir) benchRow {
	row := benchRow{name: fmt.Sprintf("disk for %d small snapshots", aged.snapshots),
		reference: "a 4 KiB block a snapshot (a file each)", target: "≤5 MB", bytes: true}
	var blobFiles, total int64
	filepath.WalkDir(aged.data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			used := (fi.Size() + 4095) &^ 4095 // whole 4 KiB blocks
			total += used
			if strings.Contains(p, string(filepath.Separator)+"snapshot") {
				blobFiles += used
			}
		}
		return nil
	})
	tables, err := dbstatBytes(filepath.Join(aged.data, "hostcore.db"))
	if err != nil {
		row.skip = err.Error()
		return row
	}
	var snaps int64
	var parts []string
	for _, name := range []string{"snapshots", "sqlite_autoindex_snapshots_1", "snapshots_session", "snapshots_held", "snapshots_held_session", "snapshot_blobs", "snapshot_totals", "snapshot_total"} {
		snaps += tables[name]
		parts = append(parts, fmt.Sprintf("%s %s", name, megabytes(time.Duration(tables[name]))))
	}
	row.ours = []time.Duration{time.Duration(snaps + blobFiles)}
	row.ref = []time.Duration{time.Duration(int64(aged.snapshots) * 4096)}
	row.check = func(o, _ time.Duration) bool { return o <= 5e6 }
	row.extra = fmt.Sprintf("%s; blob files %s; the whole data dir after %d calls %s (audit %s, tool_calls %s)", strings.Join(parts, ", "),
		megabytes(time.Duration(blobFiles)), agedCalls, megabytes(time.Duration(total)),
		megabytes(time.Duration(tables["audit"]+tables["audit_session"]+tables["audit_call"])), megabytes(time.Duration(tables["tool_calls"])))
	return row
}

// dbstatBytes returns the bytes of pages each table and index of the
// database at path takes.
func dbstatBytes(path string) (map[string]int64, error) {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	got := map[string]int64{}
	err = sqlitex.Execute(conn, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { got[st.ColumnText(0)] = st.ColumnInt64(1); return nil },
	})
	if err != nil {
		return nil, fmt.Errorf("dbstat: %w", err)
	}
	return got, nil
}
