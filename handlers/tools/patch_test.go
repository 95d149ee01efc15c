package tools

import (
	"testing"

	"hostcore/sandbox/process"
)

func TestFailedPatch(t *testing.T) {
	failed := func(stderr string) process.Result {
		return process.Result{ExitCode: 1, Stderr: process.Stream{Head: stderr, Total: int64(len(stderr))}}
	}
	silent := failed("")
	for _, tc := range []struct {
		command string
		res     process.Result
		want    string
	}{
		// A lone patch program that exits non-zero: its flags, the
		// assignments before it and its redirections (a heredoc) allowed.
		{"git apply x.patch", silent, "git apply"},
		{"git -C ../wt apply --check x.patch", silent, "git apply"},
		{"git -c core.whitespace=fix apply x.patch", silent, "git apply"},
		{"apply_patch <<'EOF'\n*** x\nEOF", silent, "apply_patch"},
		{"/usr/bin/patch -p0 < d", silent, "patch"},
		{"LC_ALL=C patch -p1 < d 2>/dev/null", silent, "patch"},
		{"patch -p1 -i x.diff", silent, "patch"},
		// Not a patch program.
		{"git applypatch", silent, ""},
		{"go test ./... | grep patch", silent, ""},
		{"cat patch.txt", silent, ""},
		{"git log -p", silent, ""},
		{"echo env patch", silent, ""},
		{"false", silent, ""},
		{"$P -p1 < d", silent, ""},
		{"if (", silent, ""},
		// A patch program among other commands, silent: the failure may
		// be any of them's (the patch applied, the tests failed).
		{"git apply fix.patch && false", silent, ""},
		{"git apply fix.patch && npm test", failed("1 failing test\n"), ""},
		{"cd sub && patch -p1 < x.diff", silent, ""},
		{"echo done; git apply x", silent, ""},
		{"env patch -p1 < d", silent, ""},
		{"ls *.diff | xargs -n1 patch -p1 -i", silent, ""},
		{"if git apply --check x; then :; fi", silent, ""},
		{"echo $(git apply x)", silent, ""},
		// ... unless the output carries that program's failure text.
		{"git apply fix.patch && npm test", failed("error: patch failed: a.go:3\nerror: a.go: patch does not apply\n"), "git apply"},
		{"cd sub && patch -p1 < x.diff", failed("patching file a\nHunk #1 FAILED at 3.\n1 out of 1 hunk FAILED -- saving rejects to file a.rej\n"), "patch"},
		{"cd sub && patch -p1 < x.diff", failed("Reversed (or previously applied) patch detected!  Assume -R? [n]\n"), "patch"},
		{"cd sub && patch -p1 < x.diff", failed("2 out of 3 hunks FAILED -- saving rejects\n"), "patch"},
		{"cd . && apply_patch < p", failed("Failed to find expected lines in a.go:\nfoo\n"), "apply_patch"},
		{"cd . && apply_patch < p", failed("Invalid patch: The first line of the patch must be '*** Begin Patch'\n"), "apply_patch"},
		// Another program's failure text does not count for it.
		{"cd . && apply_patch < p", failed("Hunk #1 FAILED at 3.\n"), ""},
		{"grep -r 'patch does not apply' . && false", failed("patch does not apply\n"), ""},
		// A lone patch program killed by a signal did not report a
		// mismatch.
		{"git apply x.patch", process.Result{Signal: "SIGKILL"}, ""},
	} {
		if got := failedPatch(tc.command, tc.res); got != tc.want {
			t.Errorf("failedPatch(%q, stderr %q) = %q, want %q", tc.command, tc.res.Stderr.Head, got, tc.want)
		}
	}
}
