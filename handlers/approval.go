package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// approvalResolve is approval.resolve (PROTOCOL section 5): the user's
// decision on a submitted plan or goal. Approve ends the contract mode and
// returns the session to agent mode; reject keeps the session where it is,
// so the agent can revise and submit again.
//
// Approving needs the session to still be in the approval's own mode: an
// approval left pending from an earlier round must not pull a session out
// of a different mode it has entered since. Such a stale approval can
// still be rejected. The state change and the mode change are one
// transaction, so an approval is settled exactly once.
func (s *Server) approvalResolve(ctx context.Context, raw json.RawMessage) (any, error) {
	s.settleLookups() // calls read before this line are judged as things stood then (ticket.go)
	var p struct {
		SessionID  string `json:"sessionId"`
		ApprovalID string `json:"approvalId"`
		Decision   string `json:"decision"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.ApprovalID == "" {
		return nil, invalidParams("invalid params: approvalId is required")
	}
	if p.Decision != "approve" && p.Decision != "reject" {
		return nil, invalidParams(`invalid params: decision must be "approve" or "reject"`)
	}
	ap, err := s.store.GetApproval(ctx, sess.ID, p.ApprovalID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidParams("invalid params: session %q has no approval %q", sess.ID, p.ApprovalID)
	} else if err != nil {
		return nil, storageError("reading approval", err)
	}
	if ap.State != "pending" {
		return nil, appError(tools.CodeConflict, "approval %q was already %s", ap.ID, ap.State)
	}
	state, from, to := "rejected", "", ""
	if p.Decision == "approve" {
		if sess.Mode != ap.Kind {
			return nil, appError(tools.CodeWrongMode, "approving a %s returns the session from %s mode, but the session is in %s mode; the approval can only be rejected", ap.Kind, ap.Kind, sess.Mode)
		}
		state, from, to = "approved", ap.Kind, perms.OpAgent
	}
	switch err := s.store.SettleApproval(ctx, sess.ID, ap.ID, state, from, to); {
	case errors.Is(err, store.ErrStale):
		return nil, appError(tools.CodeConflict, "approval %q or its session changed while it was resolved; nothing was changed", ap.ID)
	case err != nil:
		return nil, storageError("resolving approval", err)
	}
	mode := sess.Mode
	if to != "" {
		mode = to
	}
	return map[string]any{"approvalId": ap.ID, "kind": ap.Kind, "state": state, "artifactPath": ap.ArtifactPath, "mode": mode}, nil
}
