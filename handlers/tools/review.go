package tools

import (
	"bytes"
	"errors"
	"hostcore/sandbox"
	"hostcore/store"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Review bounds (design section 4c: bounded review evidence).
const (
	ReviewMaxSnapshot = 16 << 20 // previous bytes kept for rollback
	reviewMaxDiff     = 2 << 20  // files larger than this get no hunks
	reviewMaxLines    = 2000     // hunk lines kept in a result
	reviewContext     = 3
)

// ReviewChange is design section 4c's record.
type ReviewChange struct {
	Version    int        `json:"version"`
	SnapshotID string     `json:"snapshotId"`
	MessageID  string     `json:"messageId"`
	Path       string     `json:"path"`
	Operation  string     `json:"operation"`
	Status     string     `json:"status"`
	State      string     `json:"state"`
	Additions  int        `json:"additions"`
	Deletions  int        `json:"deletions"`
	Hunks      []DiffHunk `json:"hunks"`
	Binary     bool       `json:"binary,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	Reversible bool       `json:"reversible"`
}

// DiffHunk is one unified-diff hunk; lines start with ' ', '+' or '-'.
type DiffHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// Before is a file's state captured before a workspace mutation, and
// the file: its path as its snapshot names it (WorkspacePath) and its
// canonical path.
type Before struct {
	Path, Abs  string
	Existed    bool
	Data       []byte
	Reversible bool
}

// captureBefore reads the target's current bytes for a workspace mutation;
// nil for scratch and external targets, which get no review record.
func captureBefore(c *Call) (*Before, error) {
	if !c.InWorkspace() {
		return nil, nil
	}
	data, _, err := sandbox.ReadFileLimit(c.Target, ReviewMaxSnapshot)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Before{Path: c.WorkspacePath(), Abs: c.Target.Abs, Existed: false, Reversible: true}, nil
	case errors.Is(err, sandbox.ErrTooLarge):
		return &Before{Path: c.WorkspacePath(), Abs: c.Target.Abs, Existed: true, Reversible: false}, nil
	case err != nil:
		return nil, err
	}
	return &Before{Path: c.WorkspacePath(), Abs: c.Target.Abs, Existed: true, Data: data, Reversible: true}, nil
}

// beforeOf is the state of a file whose bytes the tool already read (Edit).
func beforeOf(c *Call, data []byte) *Before {
	if len(data) > ReviewMaxSnapshot {
		return &Before{Path: c.WorkspacePath(), Abs: c.Target.Abs, Existed: true, Reversible: false}
	}
	return &Before{Path: c.WorkspacePath(), Abs: c.Target.Abs, Existed: true, Data: data, Reversible: true}
}

// reviewOf builds the review record of a mutation that ran.
func reviewOf(sn *store.Snapshot, b *Before, after []byte, op string) *ReviewChange {
	rc := &ReviewChange{
		Version: 1, SnapshotID: sn.ID, MessageID: sn.MessageID, Path: sn.Path, Operation: op,
		Status: "modified", State: "active", Reversible: sn.Reversible, Hunks: []DiffHunk{},
	}
	if !b.Existed {
		rc.Status = "added"
	}
	switch {
	case b.Existed && !b.Reversible:
		rc.Truncated = true
	case isBinary(b.Data) || isBinary(after):
		rc.Binary = true
	case len(b.Data) > reviewMaxDiff || len(after) > reviewMaxDiff:
		// No hunks, but the counts are still true: the panel shows them.
		rc.Truncated = true
		rc.Additions, rc.Deletions = diffCounts(string(bytes.TrimPrefix(b.Data, utf8BOM)), string(bytes.TrimPrefix(after, utf8BOM)))
	default:
		rc.Hunks, rc.Additions, rc.Deletions, rc.Truncated = diffHunks(string(bytes.TrimPrefix(b.Data, utf8BOM)), string(bytes.TrimPrefix(after, utf8BOM)))
	}
	return rc
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}

// diffHunks computes line hunks, bounded to reviewMaxLines kept lines; the
// counts cover the whole diff.
func diffHunks(old, new string) ([]DiffHunk, int, int, bool) {
	return diffHunksMax(old, new, reviewMaxLines)
}

// diffHunksMax is diffHunks keeping at most maxLines lines.
func diffHunksMax(old, new string, maxLines int) ([]DiffHunk, int, int, bool) {
	edits := udiff.Lines(old, new)
	u, err := udiff.ToUnifiedDiff("a", "b", old, edits, reviewContext)
	if err != nil {
		return []DiffHunk{}, 0, 0, true
	}
	hunks := []DiffHunk{}
	adds, dels, kept := 0, 0, 0
	truncated := false
	for _, h := range u.Hunks {
		dh := DiffHunk{OldStart: h.FromLine, NewStart: h.ToLine, Lines: []string{}}
		for _, l := range h.Lines {
			prefix := " "
			switch l.Kind {
			case udiff.Insert:
				prefix = "+"
				adds++
				dh.NewLines++
			case udiff.Delete:
				prefix = "-"
				dels++
				dh.OldLines++
			default:
				dh.OldLines++
				dh.NewLines++
			}
			if kept < maxLines {
				dh.Lines = append(dh.Lines, prefix+trimNL(l.Content))
				kept++
			} else {
				truncated = true
			}
		}
		if len(dh.Lines) > 0 {
			hunks = append(hunks, dh)
		}
	}
	return hunks, adds, dels, truncated
}

// diffCounts counts the lines a diff of old and new adds and deletes,
// without hunks. The lines the two share at the start and at the end are
// dropped first (a minimal diff keeps them all), so an edit to one place
// in a file of megabytes diffs only the lines around it.
func diffCounts(old, new string) (adds, dels int) {
	n := min(len(old), len(new))
	p := 0
	for p < n && old[p] == new[p] {
		p++
	}
	p = strings.LastIndexByte(old[:p], '\n') + 1
	s := 0
	for s < n-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	// The common tail may start mid-line: keep it from the line after its
	// first newline, which starts a line in both.
	if k := strings.IndexByte(old[len(old)-s:], '\n'); k >= 0 {
		s -= k + 1
	} else {
		s = 0
	}
	_, adds, dels, _ = diffHunksMax(old[p:len(old)-s], new[p:len(new)-s], 0)
	return adds, dels
}

// trimNL drops a line's ending, "\n" or "\r\n", as Read does.
func trimNL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return strings.TrimSuffix(s[:n-1], "\r")
	}
	return s
}

// InWorkspace reports whether a mutation changes a workspace file: one
// addressed in the workspace, or one reached from elsewhere (a link in the
// scratch dir) whose canonical path lies in it. Design section 4c: every
// successful workspace mutation carries a review snapshot. A Write through
// a scratch link to a workspace file changed it with no way back.
func (c *Call) InWorkspace() bool {
	return c.HasTarget && (c.Target.Root == sandbox.RootWorkspace ||
		c.Workspace != "" && sandbox.Within(c.Workspace, c.Target.Abs))
}

// WorkspacePath is the target as its snapshot names it: relative to the
// workspace, as review.rollback resolves it.
func (c *Call) WorkspacePath() string {
	if c.Target.Root == sandbox.RootWorkspace {
		return c.Target.Display
	}
	rel, _ := filepath.Rel(c.Workspace, c.Target.Abs)
	return filepath.ToSlash(rel)
}
