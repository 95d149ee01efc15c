package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"golang.org/x/tools/txtar"

	"hostcore/handlers"
	"hostcore/handlers/plugin"
	"hostcore/handlers/tools"
	"hostcore/schema"
	"hostcore/store"
)

// goTypes names the Go type behind each main type of the contract, so that
// a member added, renamed or retyped on one side and not the other fails
// TestSchemaMatchesGoTypes. The types belong to other packages: a rename
// there is fixed here, in this table only.
var goTypes = []struct {
	def  string       // JSON pointer into protocol.schema.json
	typ  reflect.Type // the Go type encoded (or decoded) as that JSON
	sent bool         // hostcore writes it: members without omitempty are always present
	// null lists members the wire form sends as null when empty, though
	// the Go field is a plain string (the audit row's wire form).
	null []string
}{
	{"/$defs/ExecuteParams", reflect.TypeFor[handlers.ExecuteParams](), false, nil},
	{"/$defs/ToolResult", reflect.TypeFor[handlers.ToolResult](), true, nil},
	{"/$defs/Timing", reflect.TypeFor[handlers.Timing](), true, nil},
	{"/$defs/Content", reflect.TypeFor[tools.Content](), true, nil},
	{"/$defs/Session", reflect.TypeFor[handlers.Session](), true, nil},
	{"/$defs/Subagent", reflect.TypeFor[tools.Subagent](), true, nil},
	{"/$defs/Settings", reflect.TypeFor[handlers.Settings](), true, nil},
	{"/$defs/ReviewChange", reflect.TypeFor[tools.ReviewChange](), true, nil},
	{"/$defs/DiffHunk", reflect.TypeFor[tools.DiffHunk](), true, nil},
	{"/$defs/ToolInfo", reflect.TypeFor[tools.ToolInfo](), true, nil},
	{"/$defs/ReadDetails/anyOf/0", reflect.TypeFor[tools.ReadDetails](), true, nil},
	{"/$defs/PluginCheckDetails", reflect.TypeFor[tools.PluginCheckDetails](), true, nil},
	{"/$defs/PluginPackDetails", reflect.TypeFor[tools.PluginPackDetails](), true, nil},
	{"/$defs/PluginScaffoldDetails", reflect.TypeFor[tools.PluginScaffoldDetails](), true, nil},
	{"/$defs/PluginProblem", reflect.TypeFor[plugin.Problem](), true, nil},
	{"/$defs/ScaffoldFile", reflect.TypeFor[tools.ScaffoldFile](), true, nil},
	{"/$defs/SkillDetails", reflect.TypeFor[tools.SkillDetails](), true, nil},
	{"/$defs/AuditRow", reflect.TypeFor[store.AuditRow](), true, []string{"externalPath", "errorCode", "delegate", "ruleId"}},
}

// transcripts are the whole-protocol scripts every message of which must
// match the contract.
const transcripts = "../testdata/transcripts/*.txtar"

// contract is protocol.schema.json and tools.json, compiled on demand.
type contract struct {
	doc   map[string]any
	tools map[string]string // tool name → argument schema, relative to this directory
	mu    sync.Mutex
	c     *jsonschema.Compiler
	cache map[string]*jsonschema.Schema
}

const protocolURL = "protocol.schema.json"

func loadContract(t *testing.T) *contract {
	t.Helper()
	raw, err := schema.FS.ReadFile(protocolURL)
	if err != nil {
		t.Fatal(err)
	}
	k := &contract{c: jsonschema.NewCompiler(), cache: map[string]*jsonschema.Schema{}}
	k.c.Draft = jsonschema.Draft2020
	if err := json.Unmarshal(raw, &k.doc); err != nil {
		t.Fatalf("protocol.schema.json: %v", err)
	}
	if err := k.c.AddResource(protocolURL, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	tools, err := schema.FS.ReadFile("tools.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(tools, &k.tools); err != nil {
		t.Fatalf("tools.json: %v", err)
	}
	return k
}

// schema compiles the schema at url (protocolURL#pointer, or a file path)
// once.
func (k *contract) schema(t *testing.T, url string) *jsonschema.Schema {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.cache[url]; ok {
		return s
	}
	s, err := k.c.Compile(url)
	if err != nil {
		t.Fatalf("compiling %s: %v", url, err)
	}
	k.cache[url] = s
	return s
}

// def compiles the schema at a JSON pointer into protocol.schema.json.
func (k *contract) def(t *testing.T, ptr string) *jsonschema.Schema {
	return k.schema(t, protocolURL+"#"+ptr)
}

// node is the schema object at ptr.
func (k *contract) node(ptr string) map[string]any {
	m, _ := at(k.doc, ptr).(map[string]any)
	return m
}

// method is the params and result pointers of a method in one of the
// maps (ClientRequests, HostRequests, HostNotifications); ok false when
// the map has no such method.
func (k *contract) method(table, name string) (params, result string, ok bool) {
	props, _ := k.node("/$defs/" + table + "/properties")[name].(map[string]any)
	if props == nil {
		return "", "", false
	}
	ref := func(member string) string {
		m := k.node("/$defs/" + table + "/properties/" + strings.ReplaceAll(name, "/", "~1") + "/properties/" + member)
		r, _ := m["$ref"].(string)
		return strings.TrimPrefix(r, "#")
	}
	return ref("params"), ref("result"), true
}

func TestSchemaCompiles(t *testing.T) {
	k := loadContract(t)
	for name := range k.node("/$defs") {
		k.def(t, "/$defs/"+name)
	}
	k.def(t, "")
	if k.node("/$defs/ClientRequests") == nil {
		t.Fatal("no $defs/ClientRequests")
	}
	for tool, path := range k.tools {
		k.schema(t, path)
		if k.node("/$defs/ToolDetails/properties/"+tool) == nil {
			t.Errorf("tools.json lists %s, ToolDetails does not", tool)
		}
	}
	for tool := range k.node("/$defs/ToolDetails/properties") {
		if _, ok := k.tools[tool]; !ok {
			t.Errorf("ToolDetails lists %s, tools.json does not", tool)
		}
	}
	// TestSchemaLive checks that these are the tools hostcore lists, with
	// these schemas.
}

// TestSchemaMatchesGoTypes holds the schema's main types to the Go
// structs' JSON tags: the same members, of the same JSON types, required
// where Go always writes them.
func TestSchemaMatchesGoTypes(t *testing.T) {
	k := loadContract(t)
	for _, g := range goTypes {
		t.Run(strings.TrimPrefix(g.def, "/$defs/"), func(t *testing.T) {
			node := k.node(g.def)
			if node == nil {
				t.Fatalf("no schema at %s", g.def)
			}
			props, _ := node["properties"].(map[string]any)
			required := map[string]bool{}
			for _, r := range asSlice(node["required"]) {
				required[r.(string)] = true
			}
			seen := map[string]bool{}
			for i := range g.typ.NumField() {
				f := g.typ.Field(i)
				name, omit, ok := jsonName(f)
				if !ok {
					continue
				}
				seen[name] = true
				p, _ := props[name].(map[string]any)
				if p == nil {
					t.Errorf("%s.%s (json %q) is not in the schema", g.typ.Name(), f.Name, name)
					continue
				}
				if g.sent && !omit && !required[name] {
					t.Errorf("%q is always sent (no omitempty) but the schema does not require it", name)
				}
				if g.sent && omit && required[name] {
					t.Errorf("%q is omitted when empty but the schema requires it", name)
				}
				want, known := goJSONTypes(f.Type, omit)
				if !known {
					continue
				}
				if slices.Contains(g.null, name) {
					want = append(want, "null")
				}
				got := k.types(p)
				sort.Strings(want)
				if !slices.Equal(dedup(want), got) {
					t.Errorf("%q: Go writes %v, the schema allows %v", name, dedup(want), got)
				}
			}
			for name := range props {
				if !seen[name] {
					t.Errorf("schema member %q has no field in %s", name, g.typ)
				}
			}
		})
	}
}

// jsonName is a struct field's JSON member name, and whether it has
// omitempty; ok false for fields encoding/json skips.
func jsonName(f reflect.StructField) (name string, omit, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, strings.Contains(","+opts+",", ",omitempty,"), true
}

// goJSONTypes is the JSON types a Go value of type t encodes as; known is
// false for raw JSON and interfaces, which can be anything.
func goJSONTypes(t reflect.Type, omitempty bool) (types []string, known bool) {
	if t == reflect.TypeFor[json.RawMessage]() {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		in, ok := goJSONTypes(t.Elem(), false)
		if !omitempty {
			in = append(in, "null")
		}
		return in, ok
	case reflect.String:
		return []string{"string"}, true
	case reflect.Bool:
		return []string{"boolean"}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{"integer"}, true
	case reflect.Float32, reflect.Float64:
		return []string{"number"}, true
	case reflect.Slice, reflect.Array:
		return []string{"array"}, true
	case reflect.Map, reflect.Struct:
		return []string{"object"}, true
	}
	return nil, false
}

// types is the JSON types a schema node admits, sorted.
func (k *contract) types(n map[string]any) []string {
	var out []string
	if r, ok := n["$ref"].(string); ok {
		out = append(out, k.types(k.node(strings.TrimPrefix(r, "#")))...)
	}
	switch ty := n["type"].(type) {
	case string:
		out = append(out, ty)
	case []any:
		for _, x := range ty {
			out = append(out, x.(string))
		}
	}
	if c, ok := n["const"]; ok {
		out = append(out, valueType(c))
	}
	for _, e := range asSlice(n["enum"]) {
		out = append(out, valueType(e))
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		for _, b := range asSlice(n[key]) {
			out = append(out, k.types(b.(map[string]any))...)
		}
	}
	sort.Strings(out)
	return dedup(out)
}

func valueType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func dedup(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// --- transcripts ---

// msg is one JSON message of a transcript.
type msg struct {
	file string
	line int
	verb string // send, raw, reply or expect
	v    map[string]any
	// partial: an expect line, which names a subset of the members
	// ("required" cannot be checked) and may hold placeholders.
	partial bool
	// hostMethod is, for a reply, the method of the host request it answers.
	hostMethod string
	// hostRequest: an expect line of a host→client request.
	hostRequest bool
	answer      *msg // a request's response, once matched by id
	request     *msg // a response's request
}

// placeholders stand for the values a transcript does not pin
// (transcript_test.go): "*" any value, "$name" a captured one.
func isPlaceholder(v any) bool {
	s, ok := v.(string)
	return ok && (s == "*" || strings.HasPrefix(s, "$") && len(s) > 1)
}

// dropAbsent removes the members a transcript says must not be there
// ("<absent>"): they are a statement about the message, not part of it.
func dropAbsent(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == "<absent>" {
				delete(x, k)
				continue
			}
			dropAbsent(val)
		}
	case []any:
		for _, e := range x {
			dropAbsent(e)
		}
	}
}

var substitute = strings.NewReplacer("{{WS}}", "/tmp/ws", "{{DATA}}", "/tmp/data", "{{SCRATCH}}", "/tmp/data/scratch")

func decodeJSON(s string) (map[string]any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// parseTranscript reads the messages of a transcript's script, matching
// each response to its request by id.
func parseTranscript(t *testing.T, k *contract, file string) []*msg {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, f := range ar.Files {
		switch f.Name {
		case "script":
			script = string(f.Data)
		case "args":
			if fields := strings.Fields(string(f.Data)); len(fields) > 0 && fields[0] == "mcp" {
				// "hostcore mcp" speaks the Model Context Protocol,
				// not this contract.
				return nil
			}
		}
	}
	var out []*msg
	pending := map[string][]*msg{} // requests by id, oldest first
	lastHost := ""
	for i, line := range strings.Split(script, "\n") {
		verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		m := &msg{file: filepath.Base(file), line: i + 1, verb: verb}
		switch verb {
		case "send", "expect", "raw":
			if verb == "raw" && strings.HasPrefix(arg, `"`) {
				if u, err := strconv.Unquote(arg); err == nil {
					arg = strings.TrimSuffix(u, "\r")
				}
			}
			v, ok := decodeJSON(substitute.Replace(arg))
			if !ok {
				if verb != "raw" {
					t.Errorf("%s:%d: not a JSON object: %s", m.file, m.line, arg)
				}
				continue
			}
			m.v, m.partial = v, verb == "expect"
			dropAbsent(v)
		case "reply":
			v, ok := decodeJSON(substitute.Replace(arg))
			if !ok {
				// A reply that is not an object (a bare string) tests a
				// client answering with the wrong shape: it has no schema
				// to match, and the host's answer to it is checked.
				continue
			}
			m.v, m.hostMethod = map[string]any{"jsonrpc": "2.0", "id": json.Number("0"), "result": v}, lastHost
		default:
			continue
		}
		out = append(out, m)
		method, hasMethod := m.v["method"].(string)
		_, hasResult := m.v["result"]
		_, hasError := m.v["error"]
		if m.verb == "send" && !hasMethod && (hasResult || hasError) {
			// A client's answer written out whole: a reply.
			m.hostMethod = lastHost
			continue
		}
		id, hasID := m.v["id"]
		key := fmt.Sprint(id)
		switch {
		case m.verb == "expect" && hasMethod:
			// Host requests are expected by method alone (their ids are
			// hostcore's): the contract tells them from notifications.
			if _, _, ok := k.method("HostRequests", method); ok {
				lastHost, m.hostRequest = method, true
			}
		case m.verb == "expect":
			if q := pending[key]; len(q) > 0 {
				q[0].answer, m.request = m, q[0]
				pending[key] = q[1:]
			}
		case hasID && m.verb != "reply":
			pending[key] = append(pending[key], m)
		}
	}
	return out
}

// check validates v against s and returns what failed, leaving out what a
// partial message cannot show (missing members) and what placeholders
// stand for.
func check(s *jsonschema.Schema, v map[string]any, partial bool) string {
	err := s.Validate(v)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	if ignorable(ve, v, partial) {
		return ""
	}
	return fmt.Sprintf("%#v", ve)
}

// ignorable reports whether every failure under e is one check leaves
// out. Of the branches of an anyOf or a oneOf, one must be.
func ignorable(e *jsonschema.ValidationError, doc any, partial bool) bool {
	if len(e.Causes) == 0 {
		if partial && strings.HasSuffix(e.KeywordLocation, "/required") {
			return true
		}
		return isPlaceholder(at(doc, e.InstanceLocation))
	}
	either := strings.HasSuffix(e.KeywordLocation, "/anyOf") || strings.HasSuffix(e.KeywordLocation, "/oneOf") && strings.Contains(e.Message, "oneOf failed")
	for _, c := range e.Causes {
		ok := ignorable(c, doc, partial)
		if either && ok {
			return true
		}
		if !either && !ok {
			return false
		}
	}
	return !either
}

// at is the value at a JSON pointer.
func at(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	v := doc
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, _ := strconv.Atoi(part)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// refused: the host answered the request with an error, or its tool call
// with ok false: a client message that breaks the contract on purpose
// (to test how hostcore refuses it) is answered so.
func refused(m *msg) bool {
	if m == nil || m.answer == nil {
		return false
	}
	if _, ok := m.answer.v["error"]; ok {
		return true
	}
	res, _ := m.answer.v["result"].(map[string]any)
	return res["ok"] == false
}

// TestSchemaTranscripts validates every message of every transcript, both
// directions, against the contract: requests and notifications by method,
// responses by the request they answer, replies by the host request.
func TestSchemaTranscripts(t *testing.T) {
	k := loadContract(t)
	files, _ := filepath.Glob(transcripts)
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			for _, m := range parseTranscript(t, k, file) {
				checkMessage(t, k, m)
			}
		})
	}
}

func checkMessage(t *testing.T, k *contract, m *msg) {
	t.Helper()
	fail := func(what, why string) {
		t.Errorf("%s:%d: %s does not match the schema: %s\n%s", m.file, m.line, what, why, mustJSON(m.v))
	}
	if m.verb == "raw" {
		// Raw lines are the transcripts' channel for malformed input;
		// they are registered only so that their answers find them.
		return
	}
	if m.hostMethod != "" || m.verb == "reply" {
		checkReply(t, k, m)
		return
	}
	if why := check(k.def(t, "/$defs/Message"), m.v, m.partial); why != "" {
		if !refused(m) {
			fail("the envelope", why)
		}
		return
	}
	method, _ := m.v["method"].(string)
	params, _ := m.v["params"].(map[string]any)
	switch {
	case m.verb == "expect" && method != "":
		table := "HostNotifications"
		if m.hostRequest {
			table = "HostRequests"
		}
		p, _, ok := k.method(table, method)
		if !ok {
			t.Errorf("%s:%d: %q is not in %s", m.file, m.line, method, table)
			return
		}
		if why := check(k.def(t, p), params, true); why != "" {
			fail(method+" params", why)
		}
	case m.verb == "send" && method != "":
		p, _, ok := k.method("ClientRequests", method)
		_, isRequest := m.v["id"]
		if !ok {
			if !isRequest {
				// A client notification: the contract has none, and
				// hostcore ignores them.
				return
			}
			if !refused(m) {
				t.Errorf("%s:%d: %q is not a client request, and the host did not refuse it", m.file, m.line, method)
			}
			return
		}
		if params == nil {
			params = map[string]any{}
		}
		if why := check(k.def(t, p), params, false); why != "" && !refused(m) {
			fail(method+" params", why)
		}
		if method == "tools.execute" {
			checkExecute(t, k, m, params)
		}
	case m.verb == "expect":
		checkResponse(t, k, m, fail)
	}
}

// checkReply validates a client's answer to a host request. One that
// breaks the contract is logged, not failed: transcripts send such answers
// (no "jsonrpc", an error that is not an object, a decision by another
// name) to pin how hostcore refuses them, and what hostcore does with it
// is the transcript's own check.
func checkReply(t *testing.T, k *contract, m *msg) {
	t.Helper()
	_, result, ok := k.method("HostRequests", m.hostMethod)
	if !ok {
		t.Errorf("%s:%d: a reply to %q, which is no host request", m.file, m.line, m.hostMethod)
		return
	}
	why := check(k.def(t, "/$defs/Message"), m.v, false)
	if res, ok := m.v["result"].(map[string]any); ok && why == "" {
		why = check(k.def(t, result), res, false)
	}
	if why != "" {
		t.Logf("%s:%d: the reply to %s breaks the contract (as a test of a bad reply): %s", m.file, m.line, m.hostMethod, why)
	}
}

// checkExecute validates a tool call's args against the tool's schema
// (tools.json), and its result's details against ToolDetails.
func checkExecute(t *testing.T, k *contract, m *msg, params map[string]any) {
	tool, _ := params["toolName"].(string)
	path, builtin := k.tools[tool]
	if !builtin {
		return
	}
	args, _ := params["args"].(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	if why := check(k.schema(t, path), args, false); why != "" && !refused(m) {
		t.Errorf("%s:%d: %s args do not match %s: %s", m.file, m.line, tool, path, why)
	}
	if m.answer == nil {
		return
	}
	res, _ := m.answer.v["result"].(map[string]any)
	if details, ok := res["details"].(map[string]any); ok {
		if why := check(k.def(t, "/$defs/ToolDetails/properties/"+tool), details, true); why != "" {
			t.Errorf("%s:%d: %s details do not match ToolDetails.%s: %s\n%s", m.answer.file, m.answer.line, tool, tool, why, mustJSON(details))
		}
	}
}

// checkResponse validates a response by the request it answers.
func checkResponse(t *testing.T, k *contract, m *msg, fail func(what, why string)) {
	if e, ok := m.v["error"].(map[string]any); ok {
		if why := check(k.def(t, "/$defs/RpcError"), e, true); why != "" {
			fail("the error", why)
		}
		return
	}
	req := m.request
	if req == nil {
		t.Errorf("%s:%d: a result that answers no request of the transcript", m.file, m.line)
		return
	}
	method, _ := req.v["method"].(string)
	_, result, ok := k.method("ClientRequests", method)
	if !ok {
		t.Errorf("%s:%d: a result to %q, which is no client request", m.file, m.line, method)
		return
	}
	res, isObj := m.v["result"].(map[string]any)
	if !isObj {
		if !isPlaceholder(m.v["result"]) {
			fail(method+" result", "not an object")
		}
		return
	}
	if why := check(k.def(t, result), res, true); why != "" {
		fail(method+" result", why)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
