package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"hostcore/schema"
)

// ManifestFile is the manifest every plugin directory holds at its top.
const ManifestFile = "plugin.json"

// Bounds of a plugin directory: what PluginCheck reads and PluginPack
// holds in memory.
const (
	ManifestMax  = 1 << 20
	SkillFileMax = InstructionsMax + 8<<10
	FilesMax     = 4096
	PackMax      = 64 << 20
	problemsMax  = 200
)

// Problem is one thing wrong with a plugin: the file it is in, relative to
// the plugin's directory, and what is wrong.
type Problem struct {
	File    string `json:"file"`
	Message string `json:"message"`
}

// Report is what Check found: the plugin as its manifest declares it,
// the files a pack holds, and every problem.
type Report struct {
	PluginID string
	Version  string
	// Tools are the exposed names, Skills the skill names.
	Tools  []string
	Skills []string
	// Files are the regular files a pack holds, sorted, as slash paths;
	// Size their total size.
	Files    []string
	Size     int64
	Problems []Problem
	// More counts the problems past the bound of those listed.
	More int
}

func (r *Report) add(file, format string, a ...any) {
	if len(r.Problems) >= problemsMax {
		r.More++
		return
	}
	r.Problems = append(r.Problems, Problem{File: file, Message: fmt.Sprintf(format, a...)})
}

// manifestSchema is schema/plugin.schema.json, compiled once.
var manifestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := schema.FS.ReadFile("plugin.schema.json")
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("hostcore:///plugin.schema.json", bytes.NewReader(doc)); err != nil {
		return nil, err
	}
	return c.Compile("hostcore:///plugin.schema.json")
})

// manifestTool is a tool as a manifest declares it; every member may be
// of the wrong type, which the schema has reported.
type manifestTool struct {
	Name        string
	InputSchema json.RawMessage
}

// Check checks the plugin directory root is opened at: plugin.json against
// schema/plugin.schema.json, each tool's input schema as plugins.register
// compiles it, the names, the skill folders, and what the directory holds.
// It reads only.
func Check(root *os.Root) (*Report, error) {
	sc, err := manifestSchema()
	if err != nil {
		return nil, fmt.Errorf("compiling the manifest schema: %w", err)
	}
	r := &Report{Tools: []string{}, Skills: []string{}, Files: []string{}, Problems: []Problem{}}
	if m := r.manifest(root, sc); m != nil {
		r.declared(root, m)
	}
	r.walk(root)
	return r, nil
}

// manifest reads and validates plugin.json, and returns its members, nil
// when it cannot be read as a JSON object.
func (r *Report) manifest(root *os.Root, sc *jsonschema.Schema) map[string]json.RawMessage {
	data, err := readFile(root, ManifestFile, ManifestMax)
	if err != nil {
		r.add(ManifestFile, "%v", err)
		return nil
	}
	return r.parse(data, sc)
}

// parse validates a manifest's text against the schema and returns its
// members, nil when it is no JSON object.
func (r *Report) parse(data []byte, sc *jsonschema.Schema) map[string]json.RawMessage {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		r.add(ManifestFile, "not valid JSON: %v%s", err, lineOf(data, err))
		return nil
	}
	if err := sc.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			r.add(ManifestFile, "%v", err)
			return nil
		}
		for _, leaf := range leaves(ve, nil) {
			at := leaf.InstanceLocation
			if at == "" {
				at = "/"
			}
			r.add(ManifestFile, "at %s: %s", at, leaf.Message)
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// leaves are a validation error's innermost causes: each one thing wrong.
func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

// lineOf says on which line a JSON syntax error is.
func lineOf(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return ""
	}
	return fmt.Sprintf(" (line %d)", 1+bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n")))
}

// declared checks what the schema cannot: the tools' input schemas, the
// names as models and registration see them, the grant, and the skills.
func (r *Report) declared(root *os.Root, m map[string]json.RawMessage) {
	json.Unmarshal(m["id"], &r.PluginID)
	json.Unmarshal(m["version"], &r.Version)
	var grants []string
	json.Unmarshal(m["grants"], &grants)
	var tools []json.RawMessage
	json.Unmarshal(m["tools"], &tools)
	seen := map[string]bool{}
	total := 0
	for i, raw := range tools {
		var t manifestTool
		json.Unmarshal(raw, &t)
		if !ValidToolName(t.Name) {
			continue // the schema said so
		}
		exposed := Exposed(r.PluginID, t.Name)
		switch {
		case seen[t.Name]:
			r.add(ManifestFile, "tools[%d]: tool %q is declared twice", i, t.Name)
			continue
		case len(exposed) > ExposedMax:
			r.add(ManifestFile, "tools[%d]: the exposed name %s is longer than the %d characters models accept; shorten the id or the name", i, exposed, ExposedMax)
		}
		seen[t.Name] = true
		r.Tools = append(r.Tools, exposed)
		if t.InputSchema == nil {
			continue
		}
		compact, err := CompactSchema(t.InputSchema)
		if err != nil {
			continue // not an object: the schema said so
		}
		if total += len(compact); total > SchemasMax {
			r.add(ManifestFile, "tools[%d].inputSchema: the tools' schemas hold more than %d KiB together", i, SchemasMax>>10)
		}
		if _, err := Compile(exposed, compact); err != nil {
			r.add(ManifestFile, "tools[%d].inputSchema: %v", i, err)
		}
	}
	if len(tools) > 0 && !slices.Contains(grants, Grant) {
		r.add(ManifestFile, "tools are declared but grants lacks %s: plugins.register would register none of them", Grant)
	}
	var dirs []json.RawMessage
	json.Unmarshal(m["skills"], &dirs)
	names := map[string]bool{}
	for i, raw := range dirs {
		var dir string
		if json.Unmarshal(raw, &dir) != nil {
			continue // the schema said so
		}
		if !cleanRelative(dir) {
			r.add(ManifestFile, "skills[%d]: %q must be a relative path inside the plugin, with no . or .. parts and no part starting with a dot", i, dir)
			continue
		}
		if name := r.skill(root, dir); name != "" {
			if names[name] {
				r.add(path.Join(dir, SkillFile), "skill %q is declared twice", name)
				continue
			}
			names[name] = true
			r.Skills = append(r.Skills, name)
		}
	}
}

// skill checks one skill folder and returns the skill's name, "" when
// its SKILL.md cannot say one.
func (r *Report) skill(root *os.Root, dir string) string {
	file := path.Join(dir, SkillFile)
	data, err := readFile(root, file, SkillFileMax)
	if err != nil {
		r.add(file, "%v", err)
		return ""
	}
	fm, err := ParseSkillFile(data)
	if err != nil {
		r.add(file, "%v", err)
		return ""
	}
	ok := true
	switch {
	case fm.Name == "":
		r.add(file, "the front matter has no name")
		ok = false
	case !ValidSkillName(fm.Name):
		r.add(file, "name %q must be 1-%d characters of a-z 0-9 and single inner hyphens", fm.Name, SkillNameMax)
		ok = false
	case fm.Name != path.Base(dir):
		r.add(file, "name %q is not its folder's name %q", fm.Name, path.Base(dir))
	}
	switch {
	case strings.TrimSpace(fm.Description) == "":
		r.add(file, "the front matter has no description: the catalog lists a skill by it")
	case len(fm.Description) > DescriptionMax:
		r.add(file, "the description is longer than %d bytes", DescriptionMax)
	}
	if len(fm.Body) > InstructionsMax {
		r.add(file, "the instructions hold more than %d KiB", InstructionsMax>>10)
	}
	if !ok {
		return ""
	}
	return fm.Name
}

// cleanRelative reports a slash path that stays inside the directory it
// is relative to, with no part a pack would leave out.
func cleanRelative(p string) bool {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.Contains(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// walk lists the files a pack holds and reports what a plugin must not
// hold: links (they would lead out of it once unpacked) and special
// files. Names starting with a dot (.git, .DS_Store) are left out.
func (r *Report) walk(root *os.Root) {
	fsys := root.FS()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			r.add(p, "cannot be read: %v", err)
			return nil
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case d.IsDir():
		case t&fs.ModeSymlink != 0:
			r.add(p, "is a symbolic link; a plugin holds regular files and directories only")
		case !t.IsRegular():
			r.add(p, "is not a regular file (%s); a plugin holds regular files and directories only", t)
		case len(r.Files) == FilesMax:
			r.add(p, "the plugin holds more than %d files", FilesMax)
			return fs.SkipAll
		default:
			fi, err := d.Info()
			if err != nil {
				r.add(p, "cannot be read: %v", err)
				return nil
			}
			if r.Size += fi.Size(); r.Size > PackMax {
				r.add(p, "the plugin's files hold more than %d MiB", PackMax>>20)
				return fs.SkipAll
			}
			r.Files = append(r.Files, p)
		}
		return nil
	})
	if err != nil {
		r.add(".", "cannot be listed: %v", err)
	}
	slices.Sort(r.Files)
}

// readFile reads a regular file of at most max bytes through root. The
// open does not block on a FIFO put in a file's place.
func readFile(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("missing")
	case err != nil:
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot be read: %w", err)
	case !fi.Mode().IsRegular():
		return nil, errors.New("is not a regular file")
	case fi.Size() > max:
		return nil, fmt.Errorf("is larger than %d KiB", max>>10)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("is larger than %d KiB", max>>10)
	}
	return data, nil
}
