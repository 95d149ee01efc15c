package store

import (
	"context"
	"errors"
	"testing"
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
	s.DeleteSetting(ctx, "k")
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
