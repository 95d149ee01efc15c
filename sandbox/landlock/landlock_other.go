//go:build !linux

package landlock

import (
	"fmt"
	"runtime"
)

// errUnsupported: Landlock is a Linux security module.
var errUnsupported = fmt.Errorf("no Landlock on %s (it is a Linux security module): commands run unsandboxed", runtime.GOOS)

// Available reports 0 and the reason: there is no Landlock here.
func Available() (abi int, reason string) { return 0, errUnsupported.Error() }

// Ruleset has no kernel counterpart here; Prepare never returns one.
type Ruleset struct{}

// Prepare fails: there is no Landlock here.
func Prepare(p Policy) (*Ruleset, error) { return nil, errUnsupported }

// Cache keeps nothing here: Prepare fails.
type Cache struct{}

// Prepare fails: there is no Landlock here.
func (c *Cache) Prepare(p Policy) (*Ruleset, error) { return nil, errUnsupported }

// Close does nothing.
func (c *Cache) Close() {}

// Handoff has no descriptor to give.
func (rs *Ruleset) Handoff() (fd int, flags uint32) { return -1, 0 }

// Adopt fails: there is no Landlock here.
func Adopt(fd int, flags uint32) (*Ruleset, error) { return nil, errUnsupported }

// Notes is nil.
func (rs *Ruleset) Notes() []string { return nil }

// Close does nothing.
func (rs *Ruleset) Close() error { return nil }

// Fork fails without calling fork: nothing runs unsandboxed by mistake.
func (rs *Ruleset) Fork(fork func() (int, error)) (int, error) { return 0, errUnsupported }
