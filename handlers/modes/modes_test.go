package modes

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"hostcore/handlers/tools"
	"hostcore/perms"
)

func unreadable(r rune) bool { return unicode.IsControl(r) }

// TestSubagentDefinitionsAreBounded: session.configure {subagents} is
// bounded: a 1 MB line of a long name and thousands of unknown tools
// would otherwise ask for gigabytes of warnings.
func TestSubagentDefinitionsAreBounded(t *testing.T) {
	long := strings.Repeat("n", 100_000)
	names := strings.Repeat(`"x",`, 3000) + `"Read"`
	for _, raw := range []string{
		`[{"name":"` + long + `","tools":["Read"]}]`,
		`[{"name":"a","tools":[` + names + `]}]`,
		`[` + strings.Repeat(`{"name":"a"},`, 64) + `{"name":"b"}]`,
	} {
		if _, _, err := ParseSubagents(json.RawMessage(raw), unreadable); err == nil {
			t.Errorf("accepted %.60s...", raw)
		}
	}
	// A name dropped many times is one warning.
	defs, warns, err := ParseSubagents(json.RawMessage(`[{"name":"a","tools":["x","x","x","Read","Read"]}]`), unreadable)
	if err != nil || len(warns) != 1 || len(defs[0].Tools) != 1 {
		t.Fatalf("defs %v warnings %v err %v", defs, warns, err)
	}
}

// TestSubagentToolDefaults: no tools, null or [] grant the three reads;
// "*" grants the seven a delegate may have; a name with a control
// character, or one defined twice, is refused.
func TestSubagentToolDefaults(t *testing.T) {
	defs, _, err := ParseSubagents(json.RawMessage(`[{"name":"a"},{"name":"b","tools":null},{"name":"c","tools":[ ]},{"name":"d","tools":"*"}]`), unreadable)
	if err != nil {
		t.Fatal(err)
	}
	reads := []string{"Read", "Glob", "Grep"}
	for i, want := range [][]string{reads, reads, reads, delegateTools} {
		if !slices.Equal(defs[i].Tools, want) {
			t.Errorf("%s: tools %v, want %v", defs[i].Name, defs[i].Tools, want)
		}
	}
	for _, raw := range []string{`[{"name":"a\u0007"}]`, `[{"name":"a"},{"name":"a"}]`, `[{"name":""}]`, `{}`, `[{"name":"a","tools":"Read"}]`} {
		if _, _, err := ParseSubagents(json.RawMessage(raw), unreadable); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
}

func def(name string, class perms.Class, modes ...string) *tools.Def {
	d := &tools.Def{}
	d.Name, d.Class, d.Risk, d.Modes = name, class, perms.RiskLow, modes
	return d
}

// TestCheckIsTheMatrix: the mode tools are refused outside their modes
// with WRONG_MODE, Write in plan mode as the matrix says, and a tool that
// must be alone in its batch is refused in a larger one.
func TestCheckIsTheMatrix(t *testing.T) {
	one, two, zero := 1, 2, 0
	enter := def("EnterPlanMode", perms.ClassControl, perms.OpAgent)
	enter.AloneInBatch = true
	submit := def("SubmitPlan", perms.ClassControl, perms.OpPlan)
	for _, c := range []struct {
		t     *tools.Def
		mode  string
		batch *int
		code  string
	}{
		{enter, perms.OpAgent, &one, ""},
		{enter, perms.OpAgent, nil, ""},
		{enter, perms.OpPlan, &one, tools.CodeWrongMode},
		{enter, perms.OpAgent, &two, tools.CodeNotAlone},
		{submit, perms.OpAgent, &one, tools.CodeWrongMode},
		{submit, perms.OpGoal, &one, tools.CodeToolDenied},
		{submit, perms.OpPlan, &one, ""},
		{def("Read", perms.ClassRead), perms.OpPlan, &zero, tools.CodeInvalidArgument},
		{def("Write", perms.ClassEdit), perms.OpPlan, nil, perms.CodeDenied},
		{def("Write", perms.ClassEdit), perms.OpAgent, nil, ""},
		{def("mcp_x", perms.ClassPlugin), perms.OpGoal, nil, perms.CodePluginInPlan},
	} {
		f := Check(c.t, c.mode, c.batch)
		switch {
		case c.code == "" && f != nil:
			t.Errorf("%s in %s mode: refused: %s", c.t.Name, c.mode, f.Message)
		case c.code != "" && (f == nil || f.Code != c.code):
			t.Errorf("%s in %s mode: got %+v, want %s", c.t.Name, c.mode, f, c.code)
		}
	}
}

// TestCheckDelegate: a delegate calls only what its definition grants,
// an unknown one nothing, and no delegate runs Bash in a contract mode.
func TestCheckDelegate(t *testing.T) {
	subagents := `[{"name":"r","tools":["Read","Bash"]}]`
	read, bash, write := def("Read", perms.ClassRead), def("Bash", perms.ClassExec), def("Write", perms.ClassEdit)
	for _, c := range []struct {
		t              *tools.Def
		mode, delegate string
		ok             bool
	}{
		{write, perms.OpAgent, "", true},
		{read, perms.OpAgent, "r", true},
		{bash, perms.OpAgent, "r", true},
		{bash, perms.OpPlan, "r", false},
		{read, perms.OpPlan, "r", true},
		{write, perms.OpAgent, "r", false},
		{read, perms.OpAgent, "nobody", false},
	} {
		if f := CheckDelegate(c.t, c.mode, c.delegate, subagents); (f == nil) != c.ok {
			t.Errorf("%s by %q in %s mode: %+v, want allowed %v", c.t.Name, c.delegate, c.mode, f, c.ok)
		}
	}
}

// TestArtifactNamesSortByTime: a submitted artifact's name starts with its
// creation time, so the files of .pi/plan list in the order they came.
func TestArtifactNamesSortByTime(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := artifactName(at), artifactName(at.Add(time.Second))
	if !regexp.MustCompile(`^20260102-030405-[0-9a-f]{8}\.md$`).MatchString(a) || !(a < b) || a == artifactName(at) {
		t.Fatalf("names %q, %q", a, b)
	}
}
