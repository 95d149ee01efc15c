package store

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// TestCacheFollowsEveryWrite: the session and settings cache must never
// serve a value a write has replaced.
func TestCacheFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess := Session{ID: "a", WorkspaceRoot: "/w", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, sess); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	get := func() Session {
		t.Helper()
		got, err := s.GetSession(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	get() // fill the cache
	sess.PermissionMode = "auto"
	s.UpdateSession(ctx, sess)
	if get().PermissionMode != "auto" {
		t.Fatal("UpdateSession left a stale cache")
	}
	if err := s.SwapMode(ctx, "a", "agent", "plan"); err != nil {
		t.Fatal(err)
	}
	if get().Mode != "plan" {
		t.Fatal("SwapMode left a stale cache")
	}
	s.InsertApproval(ctx, Approval{ID: "p", SessionID: "a", Kind: "plan", ArtifactPath: ".pi/plan/x.md", State: "pending", CreatedAt: Now()})
	if err := s.SettleApproval(ctx, "a", "p", "approved", "plan", "agent"); err != nil {
		t.Fatal(err)
	}
	if get().Mode != "agent" {
		t.Fatal("SettleApproval left a stale cache")
	}
	s.DeleteSession(ctx, "a")
	if _, err := s.GetSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted session still served: %v", err)
	}

	if _, ok, _ := s.GetSetting(ctx, "k"); ok {
		t.Fatal("unset setting found")
	}
	s.SetSetting(ctx, "k", "v1")
	if v, ok, _ := s.GetSetting(ctx, "k"); !ok || v != "v1" {
		t.Fatalf("setting after set: %q %v", v, ok)
	}
	s.SetSetting(ctx, "k", "v2")
	if v, _, _ := s.GetSetting(ctx, "k"); v != "v2" {
		t.Fatalf("setting after second set: %q", v)
	}
	s.SetSettings(ctx, map[string]*string{"k": nil})
	if _, ok, _ := s.GetSetting(ctx, "k"); ok {
		t.Fatal("deleted setting still served")
	}

	// Durable across a reopen, including the schema version.
	s.SetSetting(ctx, "k", "kept")
	s.Close()
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, _, _ := s2.GetSetting(ctx, "k"); v != "kept" {
		t.Fatalf("after reopen: %q", v)
	}
}

// TestAuditQueryUsesIndexes: a filtered audit.query reads through its index,
// not the whole table, and returns the rows it should, newest first.
func TestAuditQueryUsesIndexes(t *testing.T) {
	ctx, s := context.Background(), openTestStore(t)
	for i, r := range []struct{ sess, call string }{{"a", "x"}, {"b", "x"}, {"a", "y"}, {"a", "x"}} {
		row := AuditRow{SessionID: r.sess, TurnID: "t", ToolCallID: r.call, ToolName: "Read", ArgsHash: "h", Decision: "auto-allow", CreatedAt: Now(), DurationMs: int64(i)}
		if err := s.InsertAudit(ctx, row, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f     AuditFilter
		index string
		want  []int64 // DurationMs of the rows, newest first
	}{
		{AuditFilter{SessionID: "a", Limit: 10}, "audit_session", []int64{3, 2, 0}},
		{AuditFilter{ToolCallID: "x", Limit: 10}, "audit_call", []int64{3, 1, 0}},
		{AuditFilter{SessionID: "a", ToolCallID: "x", Limit: 10}, "audit_", []int64{3, 0}},
		{AuditFilter{Limit: 2}, "", []int64{3, 2}},
	} {
		q, args := auditQuery(c.f)
		plan := ""
		err := s.read(ctx, func(conn *sqlite.Conn) error {
			return sqlitex.Execute(conn, "EXPLAIN QUERY PLAN "+q, &sqlitex.ExecOptions{Args: args, ResultFunc: func(st *sqlite.Stmt) error {
				plan += st.ColumnText(3) + "\n"
				return nil
			}})
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.index != "" && !strings.Contains(plan, "INDEX "+c.index) {
			t.Errorf("%+v: plan %q does not use %s", c.f, plan, c.index)
		}
		rows, err := s.QueryAudit(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range rows {
			got = append(got, r.DurationMs)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: rows %v, want %v", c.f, got, c.want)
		}
	}
}

// TestToolCallIDsSeenEitherWay: an id reserved ahead (a call with effects)
// and an id recorded with its audit row (a read) are both "seen", in their
// own session only, and neither can be reserved again; deleting the
// session forgets them (its audit rows stay), so a session created again
// under the same id starts afresh.
func TestToolCallIDsSeenEitherWay(t *testing.T) {
	ctx, s := context.Background(), openTestStore(t)
	sess := Session{ID: "a", WorkspaceRoot: "/w", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := s.ReserveToolCall(ctx, "a", "write"); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertAudit(ctx, AuditRow{SessionID: "a", ToolCallID: "read", ToolName: "Read", Decision: "auto-allow", CreatedAt: Now()}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertAudit(ctx, AuditRow{SessionID: "a", ToolCallID: "dup", ToolName: "Read", Decision: "policy-deny", CreatedAt: Now()}, false); err != nil {
		t.Fatal(err)
	}
	type tc = struct {
		sess, id string
		seen     bool
	}
	check := func(when string, cases []tc) {
		t.Helper()
		for _, c := range cases {
			seen, err := s.ToolCallSeen(ctx, c.sess, c.id)
			if err != nil || seen != c.seen {
				t.Errorf("%s: ToolCallSeen(%s, %s) = %v, %v; want %v", when, c.sess, c.id, seen, err, c.seen)
			}
		}
	}
	check("before delete", []tc{{"a", "write", true}, {"a", "read", true}, {"a", "dup", false}, {"b", "write", false}, {"b", "read", false}})
	if err := s.ReserveToolCall(ctx, "a", "read"); !errors.Is(err, ErrExists) {
		t.Errorf("reserving a read's id: %v", err)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	check("after delete", []tc{{"a", "write", false}, {"a", "read", false}})
	if rows, _ := s.QueryAudit(ctx, AuditFilter{SessionID: "a"}); len(rows) != 2 {
		t.Errorf("audit rows after delete: %d, want 2", len(rows))
	}
}

// openTestStore opens a store in a fresh directory, closed when the test ends.
func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAuditLimit(t *testing.T) {
	for n, want := range map[int]int{-1: 100, 0: 100, 1: 1, 500: 500, MaxAuditRows: MaxAuditRows, MaxAuditRows + 1: MaxAuditRows, 1 << 40: MaxAuditRows} {
		if got := auditLimit(n); got != want {
			t.Errorf("auditLimit(%d) = %d, want %d", n, got, want)
		}
	}
}

// UpdateSession writes what a client configures, never the operating mode:
// a row read before a switch and written after it must not undo the
// switch (session.configure racing EnterPlanMode).
func TestUpdateSessionKeepsTheOperatingMode(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}); err != nil {
		t.Fatal(err)
	}
	read, _ := s.GetSession(ctx, "a")
	if err := s.SwapMode(ctx, "a", "agent", "plan"); err != nil {
		t.Fatal(err)
	}
	read.PermissionMode = "auto"
	if err := s.UpdateSession(ctx, read); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSession(ctx, "a"); got.Mode != "plan" || got.PermissionMode != "auto" {
		t.Fatalf("after configure: mode %q, permission mode %q; want plan, auto", got.Mode, got.PermissionMode)
	}
}

// Timestamps are written exactly as the rows already stored hold them:
// RFC 3339, UTC, milliseconds, so that they sort as text.
func TestTimestampsAsStored(t *testing.T) {
	for _, c := range []struct {
		tm   time.Time
		want string
	}{
		{time.Date(2026, 12, 4, 9, 5, 7, 123456789, time.UTC), "2026-12-04T09:05:07.123Z"},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "0001-01-01T00:00:00.000Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "9999-12-31T23:59:59.999Z"},
		{time.Date(2024, 2, 29, 12, 0, 0, 1e6, time.UTC), "2024-02-29T12:00:00.001Z"},
	} {
		if got := c.tm.Format(timeLayout); got != c.want {
			t.Errorf("%v is stored as %s, want %s", c.tm, got, c.want)
		}
	}
	if now := Now(); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(now) {
		t.Errorf("Now() = %s, not the stored form", now)
	}
}

// Between a change's commit and its return, a reader that looks once the
// commit is visible must not be served the row from the cache: a rollback
// found its snapshot gone with a deleted session, asked for the session,
// and was told it still existed (a CI run).
func TestCacheServesNoRowAChangeHasCommitted(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	if err := s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", CreatedAt: Now()}); err != nil {
		t.Fatal(err)
	}
	s.SetSetting(ctx, "k", "old")
	if _, err := s.GetSession(ctx, "a"); err != nil { // cached
		t.Fatal(err)
	}
	s.GetSetting(ctx, "k") // cached
	var seen []string
	defer func() { testAfterCommit = nil }()
	testAfterCommit = func() {
		if v, _, _ := s.GetSetting(ctx, "k"); v == "old" {
			seen = append(seen, "setting after its change committed: old")
		}
	}
	s.SetSetting(ctx, "k", "new")
	testAfterCommit = func() {
		if _, err := s.GetSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
			seen = append(seen, "session after its delete committed: err "+errString(err))
		}
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	testAfterCommit = nil
	for _, m := range seen {
		t.Error(m)
	}
	// Once the changes are done, the cache fills and serves again.
	if v, _, _ := s.GetSetting(ctx, "k"); v != "new" {
		t.Errorf("setting %q, want new", v)
	}
	if _, err := s.GetSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
