package handlers

import (
	"context"
	"encoding/json"
	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/sandbox/process"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// bashPrecheck runs before the permission card: a command the denylist
// refuses, or one whose turn's shell has changed, never shows a card.
func bashPrecheck(ctx context.Context, c *call) *ToolResult {
	var a bashArgs
	decodeInto(c.args, &a)
	if strings.IndexByte(a.Command, 0) >= 0 {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args.command contains a NUL byte, which no shell command can hold")
	}
	if len(a.Command) > maxCommandBytes {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args.command is %d bytes; the kernel passes at most %d bytes to bash -lc: write the script to a file in $PI_SCRATCH_DIR and run that", len(a.Command), maxCommandBytes)
	}
	list, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(tools.CodeToolFailed, "reading the Bash denylist: %v", err)
	}
	switch d := checkDenylist(a.Command, c.sess.WorkspaceRoot, userHome(), list); {
	case d.tooComplex:
		return policyDenied("%s is too complex for hostcore's denylist check to read, and the check fails closed: spell the paths out", redact.Bound(redact.EscapeText(d.word), 200))
	case d.word != "":
		return policyDenied("the command touches %s, a sensitive path outside the workspace; hostcore's policy denies it in every permission mode", redact.EscapeText(d.word))
	}
	if _, r := c.checkShell(ctx); r != nil {
		return r
	}
	// Probe the login shell's PATH (cached, up to 5 s) while the card is
	// open, so the first command does not wait for it.
	go process.LoginPath()
	return nil
}

// --- denylist (design section 5) ---

// builtinDenylist are sensitive paths a Bash command may not name, in
// every permission mode, unless they lie inside the workspace. "~/" means
// any user's home. It is a tripwire against an agent wandering into
// credentials, not a sandbox: a command can always build a path the text
// does not show.
var builtinDenylist = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube/config",
	"~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.password-store",
	"~/.local/share/keyrings", "~/Library/Keychains", "/Library/Keychains",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware", "~/.config/microsoft-edge",
	"~/snap/firefox", "~/Library/Application Support/Google/Chrome", "~/Library/Application Support/Firefox",
	"~/Library/Application Support/BraveSoftware", "~/Library/Application Support/Microsoft Edge",
	"~/Library/Safari", "~/Library/Cookies",
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd",
	// The previous shadow files hold the same hashes; the host's private
	// keys sign as the machine.
	"/etc/shadow-", "/etc/gshadow-", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
}

const keyBashDenylist = "bashDenylist"

// globDescends reports whether a Glob pattern reaches below the directory
// it starts from: its part from the first component holding a wildcard
// on has a '/' or a '**'. /etc/*.conf lists one directory; .ss?/* and
// **/id_* walk into others.
func globDescends(pattern string) bool {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, "*?[{") {
			return i < len(parts)-1 || strings.Contains(p, "**")
		}
	}
	return false
}

// globLiteralDirs returns a Glob pattern's components before its first
// wildcard (all of them for a pattern without one), "" for none: .ssh/*
// gives .ssh, .ssh/id_rsa gives .ssh/id_rsa, *.txt gives "". (A pattern
// that climbs with ".." or is absolute has them moved into its path by
// splitGlob already; they are kept here as well, which only adds a path
// to check.)
func globLiteralDirs(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, globMeta) {
			return strings.Join(parts[:i], "/")
		}
	}
	return pattern
}

// sensitiveTarget refuses a file tool's outside path that names an entry
// of the denylist (built-in and the user's), as written or as resolved
// (a link to ~/.ssh is ~/.ssh; a home that is itself a link counts by
// both its names). Grep walks whole trees, and so does a Glob whose
// pattern descends (a Glob of ~ with pattern .ss?/* listed the names in
// ~/.ssh): a directory above an entry (the home directory) is refused for
// them too; Read, Write and Edit name one file, a Glob like *.txt one
// directory. Names compare without case where the file system
// does (macOS), as for Bash.
func (c *call) sensitiveTarget(ctx context.Context) *ToolResult {
	extra, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(tools.CodeToolFailed, "reading the denylist: %v", err)
	}
	homes := []string{userHome()}
	if real, err := filepath.EvalSymlinks(homes[0]); err == nil && real != homes[0] {
		homes = append(homes, real)
	}
	var entries [][]string
	for _, home := range homes {
		entries = append(entries, builtinEntries(home)...)
		for _, e := range extra {
			entries = append(entries, entryPaths(e, home)...)
			entries = append(entries, linkedEntry(e, home)...)
		}
	}
	var glob struct {
		Pattern string `json:"pattern"`
	}
	if c.tool.Name == "Glob" {
		decodeInto(c.args, &glob)
	}
	descends := globDescends(glob.Pattern)
	opts := globOpts{recursive: c.tool.Name == "Grep" || descends, nocase: caseInsensitiveFS}
	globs := globCache{}
	paths := []string{c.target.Abs, filepath.Clean(c.rawPath())}
	if lit := globLiteralDirs(glob.Pattern); lit != "" {
		// The directories a pattern names before its first wildcard are
		// listed as surely as its path: .ssh/* from the home directory
		// lists ~/.ssh (an adversarial review), and .ssh/id_rsa names
		// the key. They count as part of the path, as written and as
		// resolved.
		for _, p := range paths[:2] {
			if filepath.IsAbs(p) {
				q := filepath.Join(p, lit)
				paths = append(paths, q)
				if r := resolvedPath(q); r != q {
					paths = append(paths, r)
				}
			}
		}
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		pc := components(p)
		for _, ec := range entries {
			if globs.namesEntry(pc, ec, opts) {
				return policyDenied("%s is a sensitive path outside the workspace; hostcore's policy denies it to %s in every permission mode", redact.EscapeText(p), c.tool.Name)
			}
		}
	}
	return nil
}

// Bounds of the user's extension of the denylist.
const (
	denylistMaxEntries = 256
	denylistMaxEntry   = 4096
)

// bashDenylist is the user's extension of the built-in list (settings).
func (s *Server) bashDenylist(ctx context.Context) ([]string, error) {
	v, ok, err := s.store.GetSetting(ctx, keyBashDenylist)
	if err != nil || !ok {
		return []string{}, err
	}
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return []string{}, nil
	}
	return list, nil
}

// parseBashDenylist checks settings.update's bashDenylist (an array of
// paths, each absolute or starting with "~/", replacing the previous
// extension) and returns the value to store: nil (JSON null) clears it.
func parseBashDenylist(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalidParams("invalid params: bashDenylist must be an array of paths or null")
	}
	if len(list) > denylistMaxEntries {
		return nil, invalidParams("invalid params: bashDenylist has %d entries; at most %d", len(list), denylistMaxEntries)
	}
	for i, e := range list {
		clean := path.Clean(e)
		if len(e) > denylistMaxEntry || !(strings.HasPrefix(e, "/") || strings.HasPrefix(e, "~/")) || clean == "/" || strings.HasPrefix(e, "~/") && !strings.HasPrefix(clean, "~/") {
			return nil, invalidParams("invalid params: bashDenylist[%d] must be an absolute path or start with ~/ (and name more than the root or the home directory)", i)
		}
		// Entries are paths, matched as written: a glob would be
		// accepted and protect nothing.
		if strings.ContainsAny(e, "*?[") {
			return nil, invalidParams("invalid params: bashDenylist[%d] holds a glob character; entries are plain paths (a directory covers everything under it)", i)
		}
	}
	b, _ := json.Marshal(list)
	v := string(b)
	return &v, nil
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}
