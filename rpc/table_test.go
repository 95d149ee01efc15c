package rpc

import (
	"context"
	"encoding/json"
)

// router is a test's dispatcher: a route function, run in arrival order
// as Method.Prepare, and the kind of each method.
type router interface {
	Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool)
	Inline(method string) bool
}

// table builds the method table a test's dispatcher stands for, for the
// names it serves: Inline ones are Configuring, those it Relieves Cancel;
// every method runs while stopping unless RunsWhileStopping says no.
func table(d router, names ...string) Methods {
	t := Methods{}
	for _, name := range names {
		kind := Ordinary
		if d.Inline(name) {
			kind = Configuring
		}
		if r, ok := d.(interface{ Relieves(string) bool }); ok && r.Relieves(name) {
			kind = Cancel
		}
		stop := true
		if f, ok := d.(interface{ RunsWhileStopping(string) bool }); ok {
			stop = f.RunsWhileStopping(name)
		}
		t[name] = Method{Kind: kind, WhileStopping: stop, Prepare: func(params json.RawMessage) (Run, bool) {
			run, inline := d.Route(name, params)
			if run == nil {
				return nil, false
			}
			return run, inline
		}}
	}
	return t
}
