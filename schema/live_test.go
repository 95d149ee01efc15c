package schema_test

import (
	"encoding/json"
	"fmt"
	"hostcore/rpc/rpctest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSchemaLive drives the built binary through every method, every
// built-in tool, every notification and every host→client request, and
// validates each whole line, both directions, against the contract. The
// transcripts check what they pin; this checks that nothing the contract
// requires is missing and nothing it does not name is sent.
func TestSchemaLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hostcore")
	}
	k := loadContract(t)
	bin := filepath.Join(t.TempDir(), "hostcore")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "page.html"), []byte("<p>hi</p>\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)

	d := startLive(t, k, bin, "--data-dir", t.TempDir(), "--permission-timeout", "1s")

	d.call("initialize", `{"clientInfo":{"name":"schema-test"},"protocolVersion":"1"}`)
	d.call("settings.get", `{}`)
	d.call("settings.update", `{"defaultPermissionMode":"ask","bashDenylist":["~/secret"]}`)
	d.call("shells.list", `{}`)
	d.call("session.create", fmt.Sprintf(`{"sessionId":"s1","workspaceRoot":%q,"permissionMode":"ask"}`, ws))
	d.call("session.create", `{"sessionId":"tmp","workspaceRoot":null}`)
	d.call("session.create", `{}`)
	d.call("session.configure", `{"sessionId":"s1","subagents":[{"name":"helper","tools":["Read","Nope"]}]}`)
	d.call("session.get", `{"sessionId":"s1"}`)
	d.call("session.list", `{}`)
	lists := []map[string]any{d.call("tools.list", `{"sessionId":"s1"}`)}
	d.call("tools.list", `{"sessionId":"s1","delegate":"helper"}`)
	d.call("plugins.register", `{"pluginId":"acme","grants":["x"],"tools":[{"name":"echo"}]}`)
	d.call("plugins.register", `{"pluginId":"acme","grants":["agent.tool.register"],"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"},"risk":"low"}],"skills":[{"name":"echoing","description":"How to echo.","instructions":"Call plugin_acme_echo.","baseDir":"/opt/acme/skills/echoing"}]}`)
	lists = append(lists, d.call("tools.list", `{"sessionId":"s1"}`))

	// run runs a tool in s1 and checks how it ended: want is its
	// errorCode, "" for success.
	run := func(id, tool, args, want string) map[string]any {
		t.Helper()
		r := d.call("tools.execute", fmt.Sprintf(`{"sessionId":"s1","turnId":"t1","toolCallId":%q,"toolName":%q,"args":%s}`, id, tool, args))
		if got, _ := r["errorCode"].(string); got != want {
			t.Errorf("%s %s ended %q, want %q: %s", tool, id, got, want, mustJSON(r))
		}
		return r
	}
	run("r1", "Read", `{"path":"a.txt"}`, "")
	run("r2", "Read", `{"path":"dir"}`, "INVALID_ARGUMENT")
	run("g1", "Glob", `{"pattern":"*.txt"}`, "")
	run("g2", "Grep", `{"pattern":"alpha"}`, "")
	run("w1", "Write", `{"path":"b.txt","content":"one\n"}`, "")
	edit := run("e1", "Edit", `{"path":"b.txt","old_string":"one","new_string":"two"}`, "")
	run("e2", "Edit", `{"path":"b.txt","old_string":"absent","new_string":"x"}`, "TOOL_FAILED")
	run("b1", "Bash", `{"command":"echo out; echo err >&2"}`, "")
	run("b2", "Bash", `{"command":"kill -9 $$"}`, "TOOL_FAILED") // a signal: exitCode null
	run("b3", "Bash", `{"command":"echo remembered -n"}`, "")    // answered allow-always-command
	rules := d.call("permissions.list", `{"sessionId":"s1"}`)
	d.call("permissions.list", `{}`)
	if list, _ := rules["rules"].([]any); len(list) != 1 {
		t.Errorf("permissions.list after an allow-always-command answer: %s", mustJSON(rules))
	} else {
		d.call("permissions.remove", fmt.Sprintf(`{"ruleId":%q}`, list[0].(map[string]any)["ruleId"]))
	}
	// A background command: started (on a card), read, killed, read
	// again (exited); shell.exited follows the kill.
	bg, _ := run("bg", "Bash", `{"command":"echo started; sleep 30","runInBackground":true}`, "")["details"].(map[string]any)
	shell := fmt.Sprintf(`{"shellId":%q}`, bg["shellId"])
	run("bo1", "BashOutput", shell, "")
	run("ks", "KillShell", shell, "")
	run("bo2", "BashOutput", shell, "")
	run("bo3", "BashOutput", `{"shellId":"bash_none"}`, "INVALID_ARGUMENT")
	run("bp", "BrowserPreview", `{"path":"page.html"}`, "")
	run("q1", "asktool", `{"questions":[{"id":"go","question":"Go on?"},{"id":"pick","question":"Which?","multiSelect":true,"options":[{"label":"a","description":"A"}]}]}`, "")
	run("nc", "new_context", `{}`, "")
	run("ts", "ToolSearch", `{"query":"browser"}`, "")
	run("tk", "Task", `{"subagent":"helper","prompt":"look"}`, "")
	run("pl", "plugin_acme_echo", `{"n":1}`, "")
	run("sk", "Skill", `{"name":"echoing"}`, "")
	run("ps", "PluginScaffold", `{"path":"plug","pluginId":"demo"}`, "")
	run("pc", "PluginCheck", `{"path":"plug"}`, "")
	run("pp", "PluginPack", `{"path":"plug"}`, "")
	run("slow", "Write", `{"path":"slow.txt","content":"x"}`, "TOOL_DENIED") // card left unanswered: permission.cancelled
	run("w1", "Read", `{"path":"a.txt"}`, "DUPLICATE_TOOL_CALL")             // a reused id
	d.call("tools.execute", `{"sessionId":"s1","turnId":"t1","toolCallId":"rd","toolName":"Read","args":{"path":"a.txt"},"promptId":"p1","messageId":"m1","batchSize":1,"delegate":"helper"}`)
	d.call("tools.execute", `{"sessionId":"tmp","turnId":"t1","toolCallId":"nw","toolName":"Write","args":{"path":"x","content":"x"}}`)

	// A question cancelled while it waits: ask.cancelled.
	q := d.send("tools.execute", `{"sessionId":"s1","turnId":"t9","toolCallId":"qx","toolName":"asktool","args":{"questions":[{"id":"never","question":"?"}]}}`)
	d.waitFor("ask.request")
	d.call("turn.cancel", `{"sessionId":"s1","turnId":"t9"}`)
	d.wait(q)
	d.call("tools.cancel", `{"sessionId":"s1","toolCallId":"none"}`)

	review, _ := edit["review"].(map[string]any)
	if d.call("review.rollback", fmt.Sprintf(`{"sessionId":"s1","snapshotId":%q}`, review["snapshotId"])) == nil {
		t.Error("review.rollback of the last edit failed")
	}

	run("ep", "EnterPlanMode", `{}`, "")
	lists = append(lists, d.call("tools.list", `{"sessionId":"s1"}`))
	plan := run("sp", "SubmitPlan", `{"markdown":"# plan\n"}`, "")
	details, _ := plan["details"].(map[string]any)
	if d.call("approval.resolve", fmt.Sprintf(`{"sessionId":"s1","approvalId":%q,"decision":"approve"}`, details["approvalId"])) == nil {
		t.Error("approving the plan failed")
	}
	run("eg", "EnterGoalMode", `{}`, "")
	lists = append(lists, d.call("tools.list", `{"sessionId":"s1"}`))
	goal := run("sg", "SubmitGoal", `{"markdown":"# goal\n"}`, "")
	details, _ = goal["details"].(map[string]any)
	if d.call("approval.resolve", fmt.Sprintf(`{"sessionId":"s1","approvalId":%q,"decision":"reject"}`, details["approvalId"])) == nil {
		t.Error("rejecting the goal failed")
	}

	d.call("audit.query", `{"sessionId":"s1","limit":50}`)
	d.call("session.delete", `{"sessionId":"tmp"}`)
	if d.call("session.get", `{"sessionId":"nope"}`) != nil || d.call("no.such.method", `{}`) != nil {
		t.Error("an unknown session and an unknown method must be errors")
	}
	d.call("shutdown", `{}`)
	d.exit()
	checkToolSchemas(t, k, lists...)
	for _, m := range []string{"tool.output", "permission.request", "permission.cancelled", "ask.request", "ask.cancelled", "plugin.invoke", "browser.preview", "approval.requested", "shell.exited"} {
		if d.seen[m] == 0 {
			t.Errorf("hostcore never sent %s: the drive no longer reaches it", m)
		}
	}
}

// live is a running hostcore whose every line is validated.
type live struct {
	t      *testing.T
	k      *contract
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan string
	nextID int
	// methods of the requests in flight, by id; tools of the calls.
	methods map[int]string
	tools   map[int]string
	answers map[int]map[string]any
	seen    map[string]int
}

func startLive(t *testing.T, k *contract, bin string, args ...string) *live {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stderr = &strings.Builder{} // read only once the child has exited
	d := &live{t: t, k: k, cmd: cmd,
		methods: map[int]string{}, tools: map[int]string{}, answers: map[int]map[string]any{}, seen: map[string]int{}}
	d.stdin, d.lines = rpctest.Start(t, cmd)
	return d
}

// strict validates a whole message (or params, or a result) and reports
// what failed.
func (d *live) strict(what, ptr string, v any) {
	d.t.Helper()
	if err := d.k.def(d.t, ptr).Validate(v); err != nil {
		d.t.Errorf("%s does not match %s: %#v\n%s", what, ptr, err, mustJSON(v))
	}
}

func (d *live) write(v map[string]any) {
	d.t.Helper()
	d.strict("client line", "/$defs/Message", v)
	b, _ := json.Marshal(v)
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		d.t.Fatalf("writing to hostcore: %v", err)
	}
}

// send writes a request, validating its params (and a tool call's args),
// and returns its id.
func (d *live) send(method, params string) int {
	d.t.Helper()
	d.nextID++
	id := d.nextID
	p, ok := decodeJSON(params)
	if !ok {
		d.t.Fatalf("bad params %s", params)
	}
	if ptr, _, ok := d.k.method("ClientRequests", method); ok {
		d.strict(method+" params", ptr, p)
	}
	if tool, _ := p["toolName"].(string); method == "tools.execute" {
		d.tools[id] = tool
		if path, ok := d.k.tools[tool]; ok {
			if err := d.k.schema(d.t, path).Validate(p["args"]); err != nil {
				d.t.Errorf("%s args do not match %s: %v", tool, path, err)
			}
		}
	}
	d.methods[id] = method
	d.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	return id
}

// call sends a request and returns its result (nil for an error answer).
func (d *live) call(method, params string) map[string]any {
	d.t.Helper()
	return d.wait(d.send(method, params))
}

// wait handles host lines until the answer to id has come.
func (d *live) wait(id int) map[string]any {
	d.t.Helper()
	for {
		if a, ok := d.answers[id]; ok {
			return a
		}
		d.handle(d.next())
	}
}

// waitFor handles host lines until one of method has come.
func (d *live) waitFor(method string) {
	d.t.Helper()
	for n := d.seen[method]; d.seen[method] == n; {
		d.handle(d.next())
	}
}

func (d *live) next() string {
	d.t.Helper()
	select {
	case l, ok := <-d.lines:
		if !ok {
			d.t.Fatal("hostcore closed its stdout")
		}
		return l
	case <-time.After(20 * time.Second):
		d.t.Fatal("no line from hostcore within 20 s")
	}
	return ""
}

// handle validates one host line and answers host requests: cards are
// allowed once (the "slow" call's is never answered), questions and
// plugin calls answered.
func (d *live) handle(line string) {
	d.t.Helper()
	v, ok := decodeJSON(line)
	if !ok {
		d.t.Fatalf("host line is not a JSON object: %s", line)
	}
	d.strict("host line", "/$defs/Message", v)
	method, _ := v["method"].(string)
	params, _ := v["params"].(map[string]any)
	if method != "" {
		d.seen[method]++
		if _, isRequest := v["id"]; !isRequest {
			ptr, _, ok := d.k.method("HostNotifications", method)
			if !ok {
				d.t.Errorf("notification %q is not in the contract", method)
				return
			}
			d.strict(method+" params", ptr, params)
			return
		}
		ptr, result, ok := d.k.method("HostRequests", method)
		if !ok {
			d.t.Errorf("host request %q is not in the contract", method)
			return
		}
		d.strict(method+" params", ptr, params)
		var reply map[string]any
		switch method {
		case "permission.request":
			if params["toolCallId"] == "slow" {
				return
			}
			reply = map[string]any{"decision": "allow-once"}
			if params["toolCallId"] == "b3" {
				reply = map[string]any{"decision": "allow-always-command", "prefix": "echo"}
			}
		case "ask.request":
			if params["toolCallId"] == "qx" {
				return
			}
			reply = map[string]any{"answers": map[string]any{"go": "yes", "pick": []any{"a"}}}
		case "plugin.invoke":
			reply = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echoed"}}, "details": map[string]any{"n": 1}}
		}
		d.strict(method+" reply", result, reply)
		d.write(map[string]any{"jsonrpc": "2.0", "id": v["id"], "result": reply})
		return
	}
	n, err := v["id"].(json.Number).Int64()
	if err != nil {
		d.t.Fatalf("answer with id %v", v["id"])
	}
	id := int(n)
	req := d.methods[id]
	if e, ok := v["error"]; ok {
		d.strict(req+" error", "/$defs/RpcError", e)
		d.answers[id] = nil
		return
	}
	res, _ := v["result"].(map[string]any)
	_, ptr, ok := d.k.method("ClientRequests", req)
	if !ok {
		d.t.Errorf("a result to %q", req)
	} else {
		d.strict(req+" result", ptr, res)
	}
	if details, ok := res["details"].(map[string]any); ok {
		if tool := d.tools[id]; d.k.tools[tool] != "" {
			d.strict(tool+" details", "/$defs/ToolDetails/properties/"+tool, details)
		}
	}
	d.answers[id] = res
}

// exit waits for hostcore to exit 0 after shutdown, handling what it
// still writes.
func (d *live) exit() {
	d.t.Helper()
	for l := range d.lines {
		d.handle(l)
	}
	if err := d.cmd.Wait(); err != nil {
		d.t.Errorf("hostcore exit: %v", err)
	}
}

// checkToolSchemas holds tools.json to the tools hostcore lists: every
// built-in tool has its entry, and the schema it names is the one hostcore
// validates the tool's arguments with.
func checkToolSchemas(t *testing.T, k *contract, lists ...map[string]any) {
	t.Helper()
	listed := map[string]bool{}
	var tools []any
	for _, l := range lists {
		tools = append(tools, asSlice(l["tools"])...)
	}
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		name, _ := tool["name"].(string)
		if strings.HasPrefix(name, "plugin_") {
			continue
		}
		if listed[name] {
			continue
		}
		listed[name] = true
		path, ok := k.tools[name]
		if !ok {
			t.Errorf("tools.list has %s, tools.json does not", name)
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("tools.json: %s: %v", name, err)
			continue
		}
		var file any
		json.Unmarshal(raw, &file)
		if !reflect.DeepEqual(file, jsonValue(tool["inputSchema"])) {
			t.Errorf("%s: tools.list's inputSchema is not %s:\n%s\n%s", name, path, mustJSON(tool["inputSchema"]), raw)
		}
	}
	for name := range k.tools {
		if !listed[name] {
			t.Errorf("tools.json has %s, which tools.list does not", name)
		}
	}
}

// jsonValue re-decodes v without json.Number, to compare with a plain decode.
func jsonValue(v any) any {
	var out any
	json.Unmarshal([]byte(mustJSON(v)), &out)
	return out
}
