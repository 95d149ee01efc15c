//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// startMCPClient spawns "hostcore mcp" with a client of the caller's making
// (one that offers roots, or not).
func startMCPClient(t *testing.T, client *sdk.Client, args ...string) *mcpHost {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"mcp", "--data-dir", t.TempDir()}, args...)...)
	cmd.Dir = t.TempDir()
	return connectMCP(t, client, cmd)
}

func fileURI(dir string) string { return (&url.URL{Scheme: "file", Path: dir}).String() }

// TestMCPToolsDescribeTheirResults: every tool declares an outputSchema
// that its structuredContent conforms to (checked against real results:
// a Read, a refused Write, a Bash run), every enum in an inputSchema has
// its type, and the annotations say what each tool does: Bash reaches the
// network (openWorldHint), reads and Write are idempotent, Edit and Bash
// are not.
func TestMCPToolsDescribeTheirResults(t *testing.T) {
	ws, data := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644)
	h := startMCP(t, nil, "--workspace", ws, "--data-dir", data, "--permission-mode", "accept-edits")
	ctx := t.Context()
	list, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	byName := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
		out, _ := json.Marshal(tool.OutputSchema)
		var top map[string]any
		if json.Unmarshal(out, &top) != nil || top["type"] != "object" {
			t.Fatalf("%s: outputSchema %s", tool.Name, out)
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource("out.json", bytes.NewReader(out)); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = c.Compile("out.json"); err != nil {
			t.Fatalf("%s: outputSchema does not compile: %v", tool.Name, err)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var v any
		json.Unmarshal(in, &v)
		if bad := untypedEnum(v); bad != "" {
			t.Errorf("%s: an enum without a type: %s", tool.Name, bad)
		}
	}
	hints := func(name string) (readOnly, destructive, idempotent, openWorld bool) {
		a := byName[name].Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v", name, a)
		}
		return a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint
	}
	type h4 struct{ readOnly, destructive, idempotent, openWorld bool }
	for name, want := range map[string]h4{
		"Read": {true, false, true, false}, "Glob": {true, false, true, false}, "Grep": {true, false, true, false},
		"Write": {false, true, true, false}, "Edit": {false, true, false, false}, "Bash": {false, true, false, true},
	} {
		if byName[name] == nil {
			t.Errorf("tools/list lacks %s", name)
			continue
		}
		var got h4
		got.readOnly, got.destructive, got.idempotent, got.openWorld = hints(name)
		if got != want {
			t.Errorf("%s: annotations %+v, want %+v", name, got, want)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"Read", map[string]any{"path": "a.txt"}},
		{"Grep", map[string]any{"pattern": "alpha", "outputMode": "content"}},
		{"Write", map[string]any{"path": "/etc/hostcore-never", "content": "x"}}, // outside: denied without elicitation
		{"Bash", map[string]any{"command": "echo hi"}},
	} {
		res := h.call(t, ctx, c.name, c.args)
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		json.Unmarshal(b, &v)
		if err := schemas[c.name].Validate(v); err != nil {
			t.Errorf("%s: structuredContent does not conform to its outputSchema: %v\n%s", c.name, err, b)
		}
	}
}

// untypedEnum returns an enum without a type beside it, "" when none.
func untypedEnum(v any) string {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["enum"]; ok && v["type"] == nil {
			b, _ := json.Marshal(v)
			return string(b)
		}
		for _, x := range v {
			if s := untypedEnum(x); s != "" {
				return s
			}
		}
	case []any:
		for _, x := range v {
			if s := untypedEnum(x); s != "" {
				return s
			}
		}
	}
	return ""
}

// TestMCPInvalidArgumentsAreResults: arguments hostcore refuses, whatever
// their shape, come back as an isError result the model reads and can
// correct, never as a JSON-RPC error, and in JSON terms.
func TestMCPInvalidArgumentsAreResults(t *testing.T) {
	ws, data := newWorkspace(t)
	h := startMCP(t, nil, "--workspace", ws, "--data-dir", data)
	for _, args := range []any{[]int{1}, "a string", map[string]any{"path": 7}, map[string]any{"path": "a", "unknown": 1}} {
		res, err := h.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Read", Arguments: args})
		if err != nil {
			t.Fatalf("Read %v: a protocol error: %v", args, err)
		}
		if !res.IsError || text(res) == "" {
			t.Fatalf("Read %v: isError=%v %q", args, res.IsError, text(res))
		}
		for _, leak := range []string{"Go value", "json:", "jsonrpc2", "RawMessage"} {
			if strings.Contains(text(res), leak) {
				t.Fatalf("Read %v: the text names %q: %s", args, leak, text(res))
			}
		}
	}
}

// TestMCPWorkspaceFromRoots: without --workspace, the client's first root
// is the workspace, and it follows notifications/roots/list_changed.
func TestMCPWorkspaceFromRoots(t *testing.T) {
	ws1, ws2 := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws1, "one.txt"), []byte("first root\n"), 0o644)
	os.WriteFile(filepath.Join(ws2, "two.txt"), []byte("second root\n"), 0o644)
	client := sdk.NewClient(&sdk.Implementation{Name: "hostcore-test", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: fileURI(ws1), Name: "one"})
	h := startMCPClient(t, client)
	ctx := t.Context()
	res := h.call(t, ctx, "Read", map[string]any{"path": "one.txt"})
	if res.IsError || !strings.Contains(text(res), "first root") {
		t.Fatalf("Read in the first root: isError=%v %q", res.IsError, text(res))
	}
	client.AddRoots(&sdk.Root{URI: fileURI(ws2), Name: "two"})
	client.RemoveRoots(fileURI(ws1))
	deadline := time.Now().Add(15 * time.Second)
	for {
		res = h.call(t, ctx, "Read", map[string]any{"path": "two.txt"})
		if !res.IsError && strings.Contains(text(res), "second root") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workspace did not follow roots/list_changed: %q", text(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMCPWithoutWorkspaceOrRoots: a client that offers no roots, talking
// to hostcore started without --workspace, still lists the tools, and
// each call says plainly why it cannot run.
func TestMCPWithoutWorkspaceOrRoots(t *testing.T) {
	client := sdk.NewClient(&sdk.Implementation{Name: "hostcore-test", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	h := startMCPClient(t, client)
	list, err := h.cs.ListTools(t.Context(), nil)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v", err)
	}
	res := h.call(t, t.Context(), "Read", map[string]any{"path": "a.txt"})
	if !res.IsError || !strings.Contains(text(res), "--workspace") || !strings.Contains(text(res), "roots") {
		t.Fatalf("Read without a workspace: isError=%v %q", res.IsError, text(res))
	}
}
