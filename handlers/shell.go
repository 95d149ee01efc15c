package handlers

import (
	"context"
	"encoding/json"

	"hostcore/sandbox/process"
)

// shellAvailable reports whether id names a shell of the catalog that is
// available on this platform.
func shellAvailable(id string) bool {
	for _, sh := range process.Catalog() {
		if sh.ID == id {
			return sh.Available
		}
	}
	return false
}

// effectiveShell is the persisted default when still available, else the
// first available shell of the catalog (design section 5), "" if none.
func (s *Server) effectiveShell(ctx context.Context) (string, error) {
	set, err := s.settings(ctx)
	if err != nil {
		return "", err
	}
	if set.DefaultCommandShell != nil && shellAvailable(*set.DefaultCommandShell) {
		return *set.DefaultCommandShell, nil
	}
	for _, sh := range process.Catalog() {
		if sh.Available {
			return sh.ID, nil
		}
	}
	return "", nil
}

func (s *Server) shellsList(ctx context.Context, raw json.RawMessage) (any, error) {
	set, err := s.settings(ctx)
	if err != nil {
		return nil, err
	}
	eff, err := s.effectiveShell(ctx)
	if err != nil {
		return nil, err
	}
	type shell struct {
		ID        string `json:"id"`
		Dialect   string `json:"dialect"`
		Path      string `json:"path"`
		Available bool   `json:"available"`
	}
	out := []shell{}
	for _, sh := range process.Catalog() {
		out = append(out, shell{sh.ID, sh.Dialect, sh.Path, sh.Available})
	}
	var effective any
	if eff != "" {
		effective = eff
	}
	return map[string]any{"shells": out, "defaultCommandShell": set.DefaultCommandShell, "effectiveShell": effective}, nil
}
