package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchBigFiles gives the rows of big files and big answers (row keys
// farread, editrss, auditrss): what hostcore costs when the file or the
// answer is large, in time against sed and in memory against the file.
func benchBigFiles(b testing.TB, bin string, reps int, on func(string) bool) []benchRow {
	var rows []benchRow
	if on("farread") {
		rows = append(rows, benchFarRead(b, bin, max(3, reps/2)))
	}
	if on("editrss") {
		rows = append(rows, benchEditRSS(b, bin, 3))
	}
	if on("auditrss") {
		rows = append(rows, benchAuditRSS(b, bin))
	}
	return rows
}

// writeLines fills path with numbered lines of about 70 bytes up to size
// bytes and returns how many lines it wrote.
func writeLines(b testing.TB, path string, size int) int {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, lines := 0, 0
	for n < size {
		k, _ := fmt.Fprintf(w, "line %d of the benchmark file, with some words to make it longer\n", lines+1)
		n += k
		lines++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return lines
}

// benchFarRead: a Read of the last 100 lines of a 200 MB file against
// `sed -n 'N,+99p'` of the same lines (both read the whole file: sed
// goes on to the end, Read needs the lines before its offset counted).
func benchFarRead(b testing.TB, bin string, reps int) benchRow {
	row := benchRow{name: "Read at the last lines of a 200 MB file", reference: "`sed -n 'N,+99p'`", target: "≤2x", ratioLimit: 2}
	ws := b.TempDir()
	path := filepath.Join(ws, "big.txt")
	lines := writeLines(b, path, 200<<20)
	offset := lines - 99
	h := startBench(b, bin, b.TempDir())
	h.call(b, "session.create", map[string]any{"sessionId": "f", "workspaceRoot": ws, "permissionMode": "auto"})
	var ours, theirs string
	for range reps {
		row.ours = append(row.ours, timed(func() {
			r := h.exec(b, "f", "Read", map[string]any{"path": "big.txt", "offset": offset, "limit": 100})
			ours = toolText(r)
		}))
		row.ref = append(row.ref, timed(func() {
			out, _ := exec.Command("sed", "-n", fmt.Sprintf("%d,+99p", offset), path).Output()
			theirs = string(out)
		}))
	}
	// The same lines: Read's numbered lines without their numbers.
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(ours, "\n"), "\n") {
		if _, text, ok := strings.Cut(l, "\t"); ok {
			got = append(got, text)
		}
	}
	if slices.Equal(got, strings.Split(strings.TrimSuffix(theirs, "\n"), "\n")) {
		row.extra = fmt.Sprintf("same %d lines at offset %d", len(got), offset)
	} else {
		row.extra = fmt.Sprintf("LINES DIFFER: %d vs %d", len(got), strings.Count(theirs, "\n"))
		row.check = func(time.Duration, time.Duration) bool { return false }
	}
	return row
}

// benchEditRSS: how far one Edit of a line of a 30 MB file raises
// hostcore's peak RSS (VmHWM after the Edit less VmHWM before it, in a
// binary spawned fresh for each run), against the file's size.
func benchEditRSS(b testing.TB, bin string, reps int) benchRow {
	const size = 30_000_000
	row := benchRow{name: "Edit peak RSS on a 30 MB file", reference: "the file's size", target: "≤2x over idle", ratioLimit: 2, bytes: true}
	ws := b.TempDir()
	path := filepath.Join(ws, "big.txt")
	writeLines(b, path, size)
	fi, _ := os.Stat(path)
	var took []time.Duration
	for i := range reps {
		h := startBench(b, bin, b.TempDir())
		h.call(b, "session.create", map[string]any{"sessionId": "e", "workspaceRoot": ws, "permissionMode": "auto"})
		before, err := procStatus(h.cmd.Process.Pid, "VmHWM")
		if err != nil {
			row.skip = err.Error()
			return row
		}
		old, new := fmt.Sprintf("line %d of", 200000+2*i), fmt.Sprintf("line %d of", 200001+2*i)
		took = append(took, timed(func() {
			h.exec(b, "e", "Edit", map[string]any{"path": "big.txt", "old_string": old, "new_string": new})
		}))
		after, _ := procStatus(h.cmd.Process.Pid, "VmHWM")
		h.close()
		row.ours = append(row.ours, time.Duration(after-before))
		row.ref = append(row.ref, time.Duration(fi.Size()))
	}
	row.extra = fmt.Sprintf("Edit took %v (median)", round(median(took)))
	return row
}

// benchAuditRSS: hostcore's RSS a second after an audit.query of 10,000
// rows, against its RSS just before it.
func benchAuditRSS(b testing.TB, bin string) benchRow {
	row := benchRow{name: "audit.query 10,000 rows, RSS after", reference: "RSS before the query", target: "≤1.5x", ratioLimit: 1.5, bytes: true}
	ws := b.TempDir()
	os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hello\n"), 0o644)
	// The rows are made by one host, and queried by a fresh one on the
	// same data dir: its RSS before the query is that of an idle host.
	data := b.TempDir()
	h := startBench(b, bin, data)
	h.call(b, "session.create", map[string]any{"sessionId": "a", "workspaceRoot": ws, "permissionMode": "auto"})
	const n = 10000
	for range n {
		h.exec(b, "a", "Read", map[string]any{"path": "small.txt"})
	}
	h.close()
	h = startBench(b, bin, data)
	h.call(b, "initialize", map[string]any{})
	h.call(b, "audit.query", map[string]any{"sessionId": "a", "limit": 1}) // anything left in the journal moved into SQLite
	time.Sleep(time.Second)
	pid := h.cmd.Process.Pid
	before, err := procStatus(pid, "VmRSS")
	if err != nil {
		row.skip = err.Error()
		return row
	}
	hwm0, _ := procStatus(pid, "VmHWM")
	anon0, _ := procStatus(pid, "RssAnon")
	var got int
	took := timed(func() {
		r := h.call(b, "audit.query", map[string]any{"sessionId": "a", "limit": n})
		got = len(r["rows"].([]any))
	})
	time.Sleep(time.Second)
	after, _ := procStatus(pid, "VmRSS")
	hwm, _ := procStatus(pid, "VmHWM")
	anon, _ := procStatus(pid, "RssAnon")
	row.ours, row.ref = []time.Duration{time.Duration(after)}, []time.Duration{time.Duration(before)}
	row.extra = fmt.Sprintf("%d rows in %v, peak RSS %s (%s before), anonymous RSS %s after (%s before)", got, round(took),
		megabytes(time.Duration(hwm)), megabytes(time.Duration(hwm0)), megabytes(time.Duration(anon)), megabytes(time.Duration(anon0)))
	return row
}

// megabytes shows a byte count held in a Duration.
func megabytes(d time.Duration) string { return fmt.Sprintf("%.1f MB", float64(d)/1e6) }

func spreadBytes(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s–%s", megabytes(slices.Min(d)), megabytes(slices.Max(d)))
}
