//go:build !linux && !darwin

package process

import (
	"context"
	"time"
)

// Run answers ErrNotPorted: commands run under a reaper that is a child
// subreaper and kills process groups and sessions, and none of that is
// ported here yet (Windows needs job objects). The Bash tool reports the
// error as its result.
func Run(ctx context.Context, s Spec) (Result, error) { return Result{}, ErrNotPorted }

// MaybeRunReaper does nothing here: no reaper is ever started.
func MaybeRunReaper() {}

// BecomeHostSubreaper does nothing here.
func BecomeHostSubreaper() error { return nil }

// SweepAdopted does nothing here.
func SweepAdopted() {}

// KeepInheritedFromCommands does nothing here: no command is started.
func KeepInheritedFromCommands() error { return nil }

// Warm starts nothing here.
type Warm struct{}

// NewWarm returns a Warm that keeps nothing.
func NewWarm(idle time.Duration) *Warm { return &Warm{} }

// Close does nothing.
func (w *Warm) Close() {}
