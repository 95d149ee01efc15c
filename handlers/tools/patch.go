package tools

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"hostcore/perms/denylist"
	"hostcore/sandbox/process"
)

// --- patch commands (design section 4d) ---

// A failed Bash call counts as a failed patch only when the patch step
// itself failed: `git apply fix.patch && npm test` whose tests fail has
// applied its patch, and counting it would stop the agent (the second
// failed patch of a prompt terminates) for a reason that is not one.

// patchFailures is each patch program's own failure text: what it prints
// when a patch does not apply, whatever else the command line runs.
var patchFailures = sync.OnceValue(func() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		"git apply": regexp.MustCompile(`patch does not apply|error: patch failed|error: corrupt patch|error: No valid patches in input|error: [^\n]*: does not exist in index|error: [^\n]*: already exists in (?:index|working directory)`),
		"patch":     regexp.MustCompile(`Hunk #\d+ FAILED|\d+ out of \d+ hunks? FAILED|Reversed \(or previously applied\) patch detected|Only garbage was found in the patch input|can't find file to patch|malformed patch at line`),
		// Codex's apply_patch: its parse errors and its failures to
		// find the lines an update names.
		"apply_patch": regexp.MustCompile(`(?i:invalid patch)|invalid hunk at line|Failed to find expected lines|Failed to find context|Failed to read file to update|Failed to read file to delete`),
	}
})

// failedPatch names the patch program whose step failed in a command that
// did not succeed, "" when the failure is not a patch's: the command is a
// lone git apply / patch / apply_patch invocation (its flags, assignments
// and redirections, a heredoc included) that exited non-zero, or the
// output carries the failure text of a patch program the command runs.
// The command is read with the shell parser the denylist uses; one that
// does not parse ran nothing that could be told apart, and is not counted.
func failedPatch(command string, res process.Result) string {
	cmds, err := denylist.Commands(command)
	if err != nil {
		return ""
	}
	if len(cmds) == 1 && !cmds[0].Nested && res.Signal == "" && res.ExitCode != 0 {
		if kind := patchProgram(cmds[0]); kind != "" {
			return kind
		}
	}
	out := res.Stdout.Text() + "\n" + res.Stderr.Text()
	for _, c := range cmds {
		if kind := patchProgram(c); kind != "" && patchFailures()[kind].MatchString(out) {
			return kind
		}
	}
	return ""
}

// patchProgram names the patch program a simple command runs: git apply
// (git's global options -C dir and -c name=value before it allowed),
// patch or apply_patch, by any path; "" otherwise, and when the program's
// name is known only at run time.
func patchProgram(c denylist.Command) string {
	if len(c.Args) == 0 || strings.ContainsAny(c.Args[0], "$`*?[{~") {
		return ""
	}
	switch prog := filepath.Base(c.Args[0]); prog {
	case "patch", "apply_patch":
		return prog
	case "git":
		args := c.Args[1:]
		for len(args) >= 2 && (args[0] == "-C" || args[0] == "-c") {
			args = args[2:]
		}
		if len(args) > 0 && args[0] == "apply" {
			return "git apply"
		}
	}
	return ""
}

// patchFailed counts a failed shell patch command within the prompt; the
// second one terminates the agent's repair loop, like a second failed Edit.
func patchFailed(c *Call, kind string, f *Failure) {
	attempt := c.Host.CountFailure("patch", "")
	d := f.Details.(BashDetails)
	d.MutationFailure = MutationFailure{Kind: "patch_failed", Attempt: attempt}
	d.PatchCommand = kind
	f.Details = d
	if attempt >= 2 {
		f.Terminate = true
		note := "This is the second failed patch command in this prompt: stop and report the exact mismatch instead of retrying."
		f.Message += " " + note
		f.Text += "\n\n" + note
	}
}
