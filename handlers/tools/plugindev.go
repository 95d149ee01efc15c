package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"hostcore/handlers/plugin"
	"hostcore/perms"
	"hostcore/perms/redact"
	"hostcore/sandbox"
	"hostcore/scratch"
)

// The plugin developer tools (design section 2.1): check a plugin
// directory, write a new one, pack one. Each works inside the workspace
// and the scratch directory only: an outside path is refused before any
// card, and a plugin's files are read through the plugin's directory
// opened as a root (sandbox.OpenDir). The directory format is
// docs/plugins.md; the rules are package plugin's, shared with
// plugins.register.

// PluginCheck is the PluginCheck tool. It only reads.
var PluginCheck = Tool[PluginPathArgs, PluginCheckDetails]{
	Spec: Spec{Name: "PluginCheck", Class: perms.ClassRead, Risk: perms.RiskLow, Description: pluginCheckDescription,
		Deferred: true, DeferredInEveryMode: true, PathArg: "path"},
	Precheck: func(ctx context.Context, c *Call, a PluginPathArgs) error { return insideRoots(c) },
	Run:      runPluginCheck,
}

// PluginPack is the PluginPack tool. It reads the plugin and writes only
// its archive, into the session's scratch directory.
var PluginPack = Tool[PluginPathArgs, PluginPackDetails]{
	Spec: Spec{Name: "PluginPack", Class: perms.ClassRead, Risk: perms.RiskLow, Description: pluginPackDescription,
		Deferred: true, PathArg: "path", Modes: []string{perms.OpAgent}},
	Precheck: func(ctx context.Context, c *Call, a PluginPathArgs) error { return insideRoots(c) },
	Run:      runPluginPack,
}

// PluginScaffold is the PluginScaffold tool: each file is written by
// Write's body, so it asks, snapshots and reviews as a Write does.
var PluginScaffold = Tool[PluginScaffoldArgs, PluginScaffoldDetails]{
	Spec: Spec{Name: "PluginScaffold", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: pluginScaffoldDescription,
		Deferred: true, PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}},
	Precheck: func(ctx context.Context, c *Call, a PluginScaffoldArgs) error {
		_, _, err := scaffoldFiles(c, a)
		return err
	},
	Preview: previewScaffold,
	Run:     runPluginScaffold,
}

const (
	pluginCheckDescription = "Check a plugin directory (plugin.json and its skill folders, see docs/plugins.md) and list every problem with its file. " +
		"Reads only; the directory must be in the workspace or the scratch directory."
	pluginPackDescription = "Pack a plugin directory that passes PluginCheck into a reproducible .tgz in the session's scratch directory; " +
		"returns the archive's path, size and sha256. A plugin that fails the check is not packed."
	pluginScaffoldDescription = "Create a new plugin directory in the workspace: a plugin.json declaring one example tool and one skill, " +
		"and the skill's SKILL.md. Asks and is reviewed as a Write is; an existing plugin is never overwritten."
)

// PluginPathArgs are PluginCheck's and PluginPack's arguments.
type PluginPathArgs struct {
	Path string `json:"path"`
}

// PluginScaffoldArgs are PluginScaffold's arguments.
type PluginScaffoldArgs struct {
	Path        string `json:"path"`
	PluginID    string `json:"pluginId"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
}

// PluginCheckDetails are PluginCheck's details (and a refused
// PluginPack's).
type PluginCheckDetails struct {
	Valid    bool             `json:"valid"`
	PluginID string           `json:"pluginId"`
	Version  string           `json:"version"`
	Tools    []string         `json:"tools"`
	Skills   []string         `json:"skills"`
	Files    int              `json:"files"`
	Problems []plugin.Problem `json:"problems"`
	// MoreProblems counts the problems past those listed.
	MoreProblems int `json:"moreProblems,omitempty"`
}

// PluginPackDetails are PluginPack's details.
type PluginPackDetails struct {
	Path     string `json:"path"`
	Size     int    `json:"size"`
	SHA256   string `json:"sha256"`
	PluginID string `json:"pluginId"`
	Version  string `json:"version"`
	Files    int    `json:"files"`
	Warning  string `json:"warning,omitempty"`
}

// PluginScaffoldDetails are PluginScaffold's details: each file written,
// with its own review record (the result's review is the manifest's).
type PluginScaffoldDetails struct {
	PluginID string         `json:"pluginId"`
	Files    []ScaffoldFile `json:"files"`
}

// ScaffoldFile is one file PluginScaffold wrote.
type ScaffoldFile struct {
	Path    string        `json:"path"`
	Bytes   int           `json:"bytes"`
	Created bool          `json:"created"`
	Review  *ReviewChange `json:"review,omitempty"`
}

// insideRoots refuses a plugin directory outside the workspace and the
// scratch directory, before any card.
func insideRoots(c *Call) error {
	if c.HasTarget && c.Target.Root == sandbox.RootExternal {
		return PolicyDenied("%s works inside the workspace and the scratch directory only; %s is outside them", c.Name, redact.EscapeText(c.Target.Display))
	}
	return nil
}

// checkPlugin opens the plugin directory and checks it.
func checkPlugin(c *Call) (*os.Root, *plugin.Report, error) {
	root, err := sandbox.OpenDir(c.Target)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return nil, nil, Fail(CodeInvalidArgument, "%s is not a directory: give the plugin's directory, the one holding plugin.json", c.Target.Display)
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, Fail(CodeInvalidArgument, "%s does not exist", c.Target.Display)
	case errors.Is(err, sandbox.ErrChanged):
		return nil, nil, Fail(CodeToolDenied, "%v", err)
	case err != nil:
		return nil, nil, Fail(CodeToolFailed, "cannot open %s: %v", c.Target.Display, err)
	}
	r, err := plugin.Check(root)
	if err != nil {
		root.Close()
		return nil, nil, Fail(CodeToolFailed, "%v", err)
	}
	return root, r, nil
}

// checkDetails and checkText say what a check found.
func checkDetails(r *plugin.Report) PluginCheckDetails {
	return PluginCheckDetails{Valid: len(r.Problems) == 0, PluginID: r.PluginID, Version: r.Version, Tools: r.Tools,
		Skills: r.Skills, Files: len(r.Files), Problems: r.Problems, MoreProblems: r.More}
}

func checkText(c *Call, r *plugin.Report) string {
	var b strings.Builder
	if len(r.Problems) == 0 {
		fmt.Fprintf(&b, "Plugin %s %s in %s passes the check: %d tools (%s), %d skills (%s), %d files.", r.PluginID, r.Version,
			c.Target.Display, len(r.Tools), strings.Join(r.Tools, ", "), len(r.Skills), strings.Join(r.Skills, ", "), len(r.Files))
		return b.String()
	}
	fmt.Fprintf(&b, "The plugin in %s has %d problems:\n", c.Target.Display, len(r.Problems)+r.More)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "- %s: %s\n", redact.EscapeText(p.File), redact.EscapeText(p.Message))
	}
	if r.More > 0 {
		fmt.Fprintf(&b, "(+%d more)\n", r.More)
	}
	return b.String()
}

func runPluginCheck(ctx context.Context, c *Call, a PluginPathArgs) (Out[PluginCheckDetails], error) {
	root, r, err := checkPlugin(c)
	if err != nil {
		return Out[PluginCheckDetails]{}, err
	}
	root.Close()
	return Out[PluginCheckDetails]{Text: checkText(c, r), Details: checkDetails(r)}, nil
}

func runPluginPack(ctx context.Context, c *Call, a PluginPathArgs) (Out[PluginPackDetails], error) {
	var none Out[PluginPackDetails]
	root, r, err := checkPlugin(c)
	if err != nil {
		return none, err
	}
	defer root.Close()
	if len(r.Problems) > 0 {
		return none, &Failure{Code: CodeInvalidArgument, Message: fmt.Sprintf("the plugin in %s fails its check (%d problems); nothing was packed", c.Target.Display, len(r.Problems)+r.More),
			Text: checkText(c, r) + "Nothing was packed: fix them and pack again.", Details: checkDetails(r)}
	}
	var buf bytes.Buffer
	if err := plugin.Pack(root, r.Files, &buf); err != nil {
		return none, Fail(CodeToolFailed, "cannot pack %s: %v", c.Target.Display, err)
	}
	if err := scratch.Ensure(c.Scratch); err != nil {
		return none, Fail(CodeToolFailed, "%v", err)
	}
	name := fmt.Sprintf("%s-%s.tgz", r.PluginID, r.Version)
	res, err := sandbox.Roots{Scratch: c.Scratch}.Resolve(filepath.Join(c.Scratch, "plugins", name))
	if err != nil || res.Root != sandbox.RootScratch {
		return none, Fail(CodeToolFailed, "cannot place the archive in the scratch directory: %v", err)
	}
	unlock := c.Host.LockPath(res.Abs)
	defer unlock()
	_, err = sandbox.WriteAtomic(res, buf.Bytes())
	warning, err := sandbox.Durable(err)
	if err != nil {
		return none, Fail(CodeToolFailed, "cannot write %s: %v", res.Abs, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	d := PluginPackDetails{Path: res.Abs, Size: buf.Len(), SHA256: hex.EncodeToString(sum[:]), PluginID: r.PluginID, Version: r.Version, Files: len(r.Files), Warning: warning}
	text := fmt.Sprintf("Packed plugin %s %s (%d files) into %s: %d bytes, sha256 %s", d.PluginID, d.Version, d.Files, d.Path, d.Size, d.SHA256)
	return Out[PluginPackDetails]{Text: text + NotDurable(warning), Details: d}, nil
}

// scaffoldFiles is the skeleton PluginScaffold writes, each file with the
// path it resolves to; an error if the directory is outside the roots, a
// file would land outside the directory, or a file is already there.
func scaffoldFiles(c *Call, a PluginScaffoldArgs) ([]plugin.File, []sandbox.Resolved, error) {
	if err := insideRoots(c); err != nil {
		return nil, nil, err
	}
	files, err := plugin.Skeleton(a.PluginID, a.Version, a.Description)
	if err != nil {
		return nil, nil, Fail(CodeInvalidArgument, "invalid arguments: %v", err)
	}
	if c.Target.Exists && !c.Target.IsDir {
		return nil, nil, Fail(CodeInvalidArgument, "%s is a file: give the directory the new plugin goes in", c.Target.Display)
	}
	roots := sandbox.Roots{Workspace: c.Workspace, Scratch: c.Scratch}
	targets := make([]sandbox.Resolved, len(files))
	for i, f := range files {
		res, err := roots.Resolve(filepath.Join(c.Target.Abs, filepath.FromSlash(f.Path)))
		switch {
		case err != nil:
			return nil, nil, Fail(CodeToolFailed, "cannot resolve %s: %v", f.Path, err)
		case res.Root != c.Target.Root || !sandbox.Within(c.Target.Abs, res.Abs):
			return nil, nil, PolicyDenied("%s would land outside %s (a link is on its path); nothing was written", f.Path, c.Target.Display)
		case res.Exists:
			return nil, nil, Fail(CodeInvalidArgument, "%s already exists: PluginScaffold writes a new plugin and overwrites nothing", res.Display)
		}
		targets[i] = res
	}
	return files, targets, nil
}

// previewScaffold is the card: the directory, then each file in full.
func previewScaffold(c *Call, a PluginScaffoldArgs) (string, string) {
	files, _ := plugin.Skeleton(a.PluginID, a.Version, a.Description)
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "--- %s\n%s", f.Path, f.Data)
	}
	return "PluginScaffold " + c.Target.Display, b.String()
}

// runPluginScaffold writes each file with Write's body, on a copy of the
// call aimed at the file, so that each gets Write's snapshot and review
// record. A failure leaves the files written before it, each with its
// record, and lists them.
func runPluginScaffold(ctx context.Context, c *Call, a PluginScaffoldArgs) (Out[PluginScaffoldDetails], error) {
	var none Out[PluginScaffoldDetails]
	files, targets, err := scaffoldFiles(c, a)
	if err != nil {
		return none, err
	}
	d := PluginScaffoldDetails{PluginID: a.PluginID, Files: []ScaffoldFile{}}
	lines := []string{fmt.Sprintf("Created plugin %s in %s:", a.PluginID, c.Target.Display)}
	var review *ReviewChange
	for i, f := range files {
		fc := *c
		fc.Target, fc.HasTarget = targets[i], true
		out, err := runWrite(ctx, &fc, WriteArgs{Path: targets[i].Display, Content: string(f.Data)})
		if err != nil {
			var fail *Failure
			if !errors.As(err, &fail) {
				fail = Fail(CodeToolFailed, "%v", err)
			}
			if len(d.Files) > 0 {
				fail.Message += fmt.Sprintf("; %d files were written before it and stay, each with its review record", len(d.Files))
				fail.Details = d
			}
			return none, fail
		}
		d.Files = append(d.Files, ScaffoldFile{Path: targets[i].Display, Bytes: out.Details.Bytes, Created: out.Details.Created, Review: out.Review})
		if review == nil {
			review = out.Review
		}
		lines = append(lines, out.Text)
	}
	lines = append(lines, "Next: PluginCheck it, edit it, then PluginPack it.")
	return Out[PluginScaffoldDetails]{Text: strings.Join(lines, "\n"), Details: d, Review: review}, nil
}
