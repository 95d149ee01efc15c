package tools

import (
	"context"
	"fmt"
	"hostcore/perms"
	"strings"
)

// Task is the Task tool: the delegate's model loop is the client's; the
// delegate's calls come back through tools.execute with delegate set.
var Task = Tool[TaskArgs, TaskDetails]{
	Spec: Spec{Name: "Task", Class: perms.ClassControl, Risk: perms.RiskLow, Description: taskDescription, Modes: []string{perms.OpAgent}},
	Run:  runTask,
	Precheck: func(ctx context.Context, c *Call, a TaskArgs) error {
		_, err := taskSubagent(c, a)
		return err
	},
}

const taskDescription = "Delegate a bounded piece of work to one of this session's subagents. The subagent runs with only the tools its definition grants."

// TaskArgs are Task's arguments.
type TaskArgs struct {
	Subagent string `json:"subagent"`
	Prompt   string `json:"prompt"`
}

// TaskDetails are Task's details: the delegate's tool set.
type TaskDetails struct {
	Subagent string   `json:"subagent"`
	Prompt   string   `json:"prompt"`
	Tools    []string `json:"tools"`
}

// runTask validates a delegation and hands the delegate's tool set back to
// the client, which runs the delegate's model loop; the delegate's calls
// come back through tools.execute with delegate set (design section 10.2).
func runTask(ctx context.Context, c *Call, a TaskArgs) (Out[TaskDetails], error) {
	d, err := taskSubagent(c, a)
	if err != nil {
		return Out[TaskDetails]{}, err
	}
	return Out[TaskDetails]{
		Text:    fmt.Sprintf("Delegated to subagent %q with tools %s.", d.Name, strings.Join(d.Tools, ", ")),
		Details: TaskDetails{Subagent: d.Name, Prompt: a.Prompt, Tools: d.Tools},
	}, nil
}

// taskSubagent finds the definition a Task names, or says why it cannot.
func taskSubagent(c *Call, a TaskArgs) (Subagent, error) {
	defs := c.Subagents
	if len(defs) == 0 {
		return Subagent{}, Fail(CodeToolDenied, "Task is not available: this session has no subagent definitions")
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		if d.Name == a.Subagent {
			return d, nil
		}
		names[i] = d.Name
	}
	return Subagent{}, Fail(CodeInvalidArgument, "invalid arguments: args.subagent: unknown subagent %q; this session defines %s", a.Subagent, strings.Join(names, ", "))
}
