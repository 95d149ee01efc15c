package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchSnapshot is a snapshot as an Edit records one: ids, paths and
// hashes of realistic length.
func benchSnapshot(session string, i int) Snapshot {
	after := sha256.Sum256([]byte(fmt.Sprint("after", i)))
	return Snapshot{
		ID: fmt.Sprintf("snap_%024x", i), SessionID: session, MessageID: fmt.Sprintf("msg_%08d", i/4),
		Path: fmt.Sprintf("src/pkg%d/file%d.go", i%50, i%400), AbsPath: fmt.Sprintf("/home/user/project/src/pkg%d/file%d.go", i%50, i%400),
		Existed: true, AfterHash: hex.EncodeToString(after[:]), Reversible: true, State: "active", CreatedAt: Now(),
	}
}

// benchBefore is about 20 bytes of previous content, distinct per i (the
// worst case for deduplication).
func benchBefore(i int) []byte { return []byte(fmt.Sprintf("line %08d changed\n", i)) }

func fillSnapshots(tb testing.TB, s *Store, session string, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		if _, err := s.SaveSnapshot(ctx, benchSnapshot(session, i), benchBefore(i)); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkSnapshotSave measures what a Write or Edit over an existing
// file costs the store (the snapshot saved, then read back as a rollback
// reads it) in a session with 30,000 prior snapshots, past the default
// retention rule so that saves also evict, against a fresh session of a
// fresh data dir: saves alternate between the two, so that both see the
// machine in the same state, and it reports both medians, their ratio
// and the aged session's 99th percentile.
func BenchmarkSnapshotSave(b *testing.B) {
	stores := make([]*Store, 2) // aged, fresh
	next := []int{30000, 0}
	for i := range stores {
		s, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		createSessionB(b, s, "s")
		stores[i] = s
	}
	fillSnapshots(b, stores[0], "s", next[0])
	ctx := context.Background()
	took := [2][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for i, s := range stores {
			start := time.Now()
			sn, err := s.SaveSnapshot(ctx, benchSnapshot("s", next[i]), benchBefore(next[i]))
			if err != nil {
				b.Fatal(err)
			}
			next[i]++
			got, err := s.GetSnapshot(ctx, "s", sn.ID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.SnapshotBefore(ctx, got); err != nil {
				b.Fatal(err)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	for i := range took {
		slices.Sort(took[i])
	}
	aged, fresh := took[0][len(took[0])/2], took[1][len(took[1])/2]
	b.ReportMetric(float64(aged.Microseconds()), "aged-median-µs")
	b.ReportMetric(float64(fresh.Microseconds()), "fresh-median-µs")
	b.ReportMetric(float64(aged)/float64(fresh), "aged/fresh")
	b.ReportMetric(float64(took[0][len(took[0])*99/100].Microseconds()), "aged-p99-µs")
}

func createSessionB(tb testing.TB, s *Store, id string) {
	tb.Helper()
	if err := s.CreateSession(context.Background(), Session{ID: id, WorkspaceRoot: "/w", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkOpen measures Open and Close of a fresh data dir and of one
// holding 15,000 snapshots: start-up must not grow with the history.
func BenchmarkOpen(b *testing.B) {
	b.Run("fresh", func(b *testing.B) {
		root := b.TempDir()
		for i := range b.N {
			s, err := Open(filepath.Join(root, fmt.Sprint(i)))
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
	dir := b.TempDir()
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	createSessionB(b, s, "s")
	fillSnapshots(b, s, "s", 15000)
	s.Close()
	b.Run("snapshots=15000", func(b *testing.B) {
		for range b.N {
			s, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkSnapshotDisk reports the disk 15,000 snapshots of about 20
// bytes each take: every file in the data dir, each rounded up to whole
// 4 KiB blocks, while the store is open (database, WAL, blob files) and
// after Close (the WAL checkpointed away). Run it with -benchtime=1x.
func BenchmarkSnapshotDisk(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		s, err := OpenWith(dir, Config{Retention: Retention{SessionCount: 20000, SessionBytes: 1 << 30, DataDirCount: 20000, DataDirBytes: 4 << 30}})
		if err != nil {
			b.Fatal(err)
		}
		createSessionB(b, s, "s")
		fillSnapshots(b, s, "s", 15000)
		open, files := diskUse(dir)
		s.Close()
		closed, _ := diskUse(dir)
		b.ReportMetric(float64(open)/1e6, "MB-open")
		b.ReportMetric(float64(closed)/1e6, "MB-closed")
		b.ReportMetric(float64(files), "files")
	}
}

func diskUse(dir string) (bytes int64, files int) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			bytes += (fi.Size() + 4095) &^ 4095
			files++
		}
		return nil
	})
	return bytes, files
}
