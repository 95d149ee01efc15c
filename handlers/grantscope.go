package handlers

import (
	"path/filepath"

	"hostcore/perms"
)

// grantScope is the directory an allow-session answer to an outside-path
// card covers (the card says it in grantScope): the directory a Glob or
// Grep searches, otherwise the target's parent directory. A user who let
// Read open one outside file has not let it open every other one.
func (c *call) grantScope() string {
	if c.target.IsDir {
		return c.target.Abs
	}
	return filepath.Dir(c.target.Abs)
}

// granted reports whether an allow-session answer of this session covers
// the call: for an outside path, one given for a directory that holds it.
func (c *call) granted(g *perms.Grants, reason string) bool {
	key := perms.GrantKey(grantName(c.tool), reason)
	if reason == perms.ReasonOutsidePath {
		return c.hasTarget && g.HasIn(c.sess.ID, key, c.target.Abs)
	}
	return g.Has(c.sess.ID, key)
}

// grant remembers an allow-session answer, an outside-path one for the
// directory its card named.
func (c *call) grant(g *perms.Grants, reason string) {
	key := perms.GrantKey(grantName(c.tool), reason)
	if reason == perms.ReasonOutsidePath && c.hasTarget {
		g.AddIn(c.sess.ID, key, c.grantScope())
		return
	}
	g.Add(c.sess.ID, key)
}
