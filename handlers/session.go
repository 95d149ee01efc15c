package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/scratch"
	"hostcore/store"
)

// Session is the wire form (PROTOCOL section 3).
type Session struct {
	SessionID               string           `json:"sessionId"`
	WorkspaceRoot           *string          `json:"workspaceRoot"`
	PermissionMode          string           `json:"permissionMode"`
	EffectivePermissionMode string           `json:"effectivePermissionMode"`
	Mode                    string           `json:"mode"`
	ScratchDir              string           `json:"scratchDir"`
	Subagents               []tools.Subagent `json:"subagents"`
	CreatedAt               string           `json:"createdAt"`
	Warnings                *[]string        `json:"warnings,omitempty"`
}

// sessionIDPattern keeps ids usable as a directory name: an id names the
// scratch and snapshot directories, so "../x" must never be one.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)

func (s *Server) wireSession(ctx context.Context, row store.Session) (Session, error) {
	global, err := s.globalMode(ctx)
	if err != nil {
		return Session{}, storageError("reading settings", err)
	}
	out := Session{
		SessionID:               row.ID,
		PermissionMode:          row.PermissionMode,
		EffectivePermissionMode: perms.Effective(row.PermissionMode, global),
		Mode:                    row.Mode,
		ScratchDir:              scratch.Dir(s.cfg.DataDir, row.ID),
		Subagents:               []tools.Subagent{},
		CreatedAt:               row.CreatedAt,
	}
	if row.WorkspaceRoot != "" {
		ws := row.WorkspaceRoot
		out.WorkspaceRoot = &ws
	}
	if row.Subagents != "" {
		json.Unmarshal([]byte(row.Subagents), &out.Subagents)
	}
	return out, nil
}

// loadSession reads a session, telling "no such session" apart from a
// storage failure (design section 4b: a lookup error is never a missing
// session).
func (s *Server) loadSession(ctx context.Context, id string) (store.Session, error) {
	if id == "" {
		return store.Session{}, invalidParams("invalid params: sessionId is required")
	}
	row, err := s.store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return row, appError(tools.CodeSessionNotFound, "session %q not found", id)
	}
	if err != nil {
		return row, storageError("looking up session", err)
	}
	return row, nil
}

func validMode(m string) bool { return m == perms.OpAgent || m == perms.OpPlan || m == perms.OpGoal }

func (s *Server) sessionCreate(ctx context.Context, raw json.RawMessage) (any, error) {
	s.settleLookups() // calls read before this line are judged as things stood then (ticket.go)
	var p struct {
		SessionID      string  `json:"sessionId"`
		WorkspaceRoot  *string `json:"workspaceRoot"`
		PermissionMode string  `json:"permissionMode"`
		Mode           string  `json:"mode"`
	}
	var given struct {
		SessionID *string `json:"sessionId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	// An id defaults to a new one only when none is given (or null): ""
	// (a client's unset variable) is refused like any id outside the
	// pattern, not answered with a session the client did not name. The
	// id is the one the pointer got: of a repeated member both take the
	// last, but a null leaves the string as it was ({"sessionId":"abc",
	// "sessionId":null} is a JavaScript client's null, not "abc").
	decodeLenient(raw, &given)
	if given.SessionID == nil {
		p.SessionID = newID("s_")
	} else {
		p.SessionID = *given.SessionID
	}
	if !sessionIDPattern.MatchString(p.SessionID) {
		return nil, invalidParams("invalid params: sessionId must be 1-128 characters of A-Z a-z 0-9 . _ - and not start with '.'")
	}
	if p.PermissionMode == "" {
		p.PermissionMode = perms.ModeInherit
	}
	if !perms.ValidMode(p.PermissionMode) {
		return nil, invalidParams("invalid params: permissionMode must be inherit, ask, accept-edits or auto")
	}
	if p.Mode == "" {
		p.Mode = perms.OpAgent
	}
	if !validMode(p.Mode) {
		return nil, invalidParams("invalid params: mode must be agent, plan or goal")
	}
	if p.WorkspaceRoot == nil && p.Mode != perms.OpAgent {
		// It could never submit (that needs a workspace), so never leave.
		return nil, invalidParams("invalid params: a Temporary session (no workspaceRoot) cannot start in %s mode", p.Mode)
	}
	row := store.Session{ID: p.SessionID, PermissionMode: p.PermissionMode, Mode: p.Mode, Subagents: "[]", CreatedAt: store.Now()}
	if p.WorkspaceRoot != nil {
		root, err := canonicalDir(*p.WorkspaceRoot)
		if err != nil {
			return nil, err
		}
		row.WorkspaceRoot = root
	}
	if err := s.store.CreateSession(ctx, row); errors.Is(err, store.ErrExists) {
		return nil, invalidParams("invalid params: session %q already exists", p.SessionID)
	} else if err != nil {
		return nil, storageError("creating session", err)
	}
	return s.wireSession(ctx, row)
}

// canonicalDir makes a workspace binding: absolute, symlinks resolved, an
// existing directory.
func canonicalDir(p string) (string, error) {
	if p == "" {
		return "", invalidParams("invalid params: workspaceRoot must be a directory path or null")
	}
	// Not cleaned first: "link/.." is the parent of where the link
	// leads, as the system opens it, not the directory it is written in.
	abs := p
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", invalidParams("invalid params: workspaceRoot: %v", err)
		}
		abs = wd + string(filepath.Separator) + p
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", invalidParams("invalid params: workspaceRoot %q does not exist", p)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", invalidParams("invalid params: workspaceRoot %q is not a directory", p)
	}
	return real, nil
}

func (s *Server) sessionGet(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	row, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return s.wireSession(ctx, row)
}

func (s *Server) sessionList(ctx context.Context, raw json.RawMessage) (any, error) {
	rows, err := s.store.ListSessions(ctx)
	if err != nil {
		return nil, storageError("listing sessions", err)
	}
	out := []Session{}
	for _, r := range rows {
		w, err := s.wireSession(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return map[string]any{"sessions": out}, nil
}

func (s *Server) sessionConfigure(ctx context.Context, raw json.RawMessage) (any, error) {
	s.settleLookups() // calls read before this line are judged as things stood then (ticket.go)
	var p struct {
		SessionID      string          `json:"sessionId"`
		PermissionMode *string         `json:"permissionMode"`
		Subagents      json.RawMessage `json:"subagents"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	row, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.PermissionMode != nil {
		if !perms.ValidMode(*p.PermissionMode) {
			return nil, invalidParams("invalid params: permissionMode must be inherit, ask, accept-edits or auto")
		}
		row.PermissionMode = *p.PermissionMode
	}
	warnings := []string{}
	if len(p.Subagents) > 0 && string(p.Subagents) != "null" {
		defs, warns, err := parseSubagents(p.Subagents)
		if err != nil {
			return nil, err
		}
		warnings = warns
		b, _ := json.Marshal(defs)
		row.Subagents = string(b)
	}
	if err := s.store.UpdateSession(ctx, row); err != nil {
		return nil, storageError("updating session", err)
	}
	// Answered from the row as stored: the operating mode may have changed
	// since it was read.
	if row, err = s.loadSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	out, err := s.wireSession(ctx, row)
	if err != nil {
		return nil, err
	}
	out.Warnings = &warnings
	return out, nil
}

func (s *Server) sessionDelete(ctx context.Context, raw json.RawMessage) (any, error) {
	s.settleLookups() // calls read before this line are judged as things stood then (ticket.go)
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	// Cancel the session's running tools and give them a moment to end
	// (their process trees are killed) before their directories go. The
	// runtime, marked deleted, stays registered until the store has
	// forgotten the session: a call arriving meanwhile is aborted, and its
	// id is checked against the calls still running (a read's id reaches
	// the store only with its audit row).
	rt := s.runtime(p.SessionID)
	defer s.dropRuntime(p.SessionID)
	rt.mu.Lock()
	rt.deleted = true
	var waits []chan struct{}
	for _, r := range rt.running {
		r.stop(errSessionDeleted)
		waits = append(waits, r.done)
	}
	rt.mu.Unlock()
	deadline := time.After(5 * time.Second)
	for _, w := range waits {
		select {
		case <-w:
		case <-deadline:
		}
	}
	s.bg.EndSession(p.SessionID) // its background commands, with their trees
	if err := s.store.DeleteSession(ctx, p.SessionID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, storageError("deleting session", err)
	}
	s.grants.Forget(p.SessionID)
	sandbox.ReleaseBase(sess.WorkspaceRoot)
	sandbox.ReleaseBase(scratch.Dir(s.cfg.DataDir, p.SessionID))
	if err := scratch.Remove(scratch.Dir(s.cfg.DataDir, p.SessionID)); err != nil {
		s.log.Warn("removing scratch", "session", p.SessionID, "err", err)
	}
	if err := os.RemoveAll(s.snapshotDir(p.SessionID)); err != nil {
		s.log.Warn("removing snapshots", "session", p.SessionID, "err", err)
	}
	return map[string]bool{"deleted": true}, nil
}

var errSessionDeleted = errors.New("session deleted")

// SweepOrphans removes the scratch directories of sessions that no longer
// exist or untouched for over 7 days, and what the snapshot store holds
// for no snapshot (Store.SweepSnapshots). It walks the data dir, so it runs
// in the background once hostcore serves: sessions may be created and
// deleted meanwhile, and each directory is judged against the database as
// it is reached.
//
// A database that was just created (Store.Fresh) next to scratch
// directories says nothing about them: the database file may have been
// emptied or removed, and its sessions' files are all the user has left.
// They are kept, with a warning, rather than swept as orphans.
func (s *Server) SweepOrphans(ctx context.Context) error {
	rows, err := s.store.ListSessions(ctx)
	if err != nil {
		return err
	}
	var removed []string
	if s.store.Fresh && len(rows) == 0 {
		if entries, _ := os.ReadDir(filepath.Join(s.cfg.DataDir, "scratch")); len(entries) > 0 {
			s.log.Warn("the database is new, but the data dir holds files of earlier sessions: kept, not swept (remove them by hand if they are not wanted)", "kept", fmt.Sprintf("scratch/ (%d entries)", len(entries)))
		}
	} else {
		// A storage error counts as "exists": a directory is removed only
		// when the database says its session is gone.
		exists := func(id string) bool {
			_, err := s.store.GetSession(ctx, id)
			return !errors.Is(err, store.ErrNotFound)
		}
		if removed, err = scratch.Sweep(filepath.Join(s.cfg.DataDir, "scratch"), exists, scratch.MaxAge, time.Now()); err != nil {
			return err
		}
	}
	rep, err := s.store.SweepSnapshots(ctx)
	if err != nil {
		return err
	}
	if len(rep.Kept) > 0 {
		s.log.Warn("the database is new, but the data dir holds snapshots of earlier sessions: kept, not swept (remove them by hand if they are not wanted)", "kept", rep.Kept)
	}
	if len(removed)+rep.SessionDirs+rep.StrayFiles+rep.StrayBlobs > 0 {
		s.log.Info("background sweep", "scratch", removed, "snapshotDirs", rep.SessionDirs, "strayPreviousContentFiles", rep.StrayFiles, "strayBlobs", rep.StrayBlobs)
	}
	return nil
}

func (s *Server) snapshotDir(sessionID string) string {
	return filepath.Join(s.cfg.DataDir, "snapshots", sessionID)
}
