package handlers

import (
	"context"
	"encoding/json"

	"hostcore/handlers/shells"
)

func shellAvailable(id string) bool { return shells.Available(id) }

// effectiveShell is the shell in effect by the persisted settings
// (shells.Effective).
func (s *Server) effectiveShell(ctx context.Context) (string, error) {
	set, err := s.settings(ctx)
	if err != nil {
		return "", err
	}
	return shells.Effective(set.DefaultCommandShell), nil
}

func (s *Server) shellsList(ctx context.Context, raw json.RawMessage) (any, error) {
	set, err := s.settings(ctx)
	if err != nil {
		return nil, err
	}
	return shells.ListOf(set.DefaultCommandShell), nil
}
