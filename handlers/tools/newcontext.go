package tools

import (
	"context"
	"hostcore/perms"
)

// NewContext is the new_context tool. It changes nothing: compaction is
// the client runtime's job, at its next turn boundary (design section
// 10.1).
var NewContext = Tool[struct{}, NewContextDetails]{
	Spec: Spec{Name: "new_context", Class: perms.ClassControl, Risk: perms.RiskLow, Description: newContextDescription},
	Run: func(ctx context.Context, c *Call, _ struct{}) (Out[NewContextDetails], error) {
		return Out[NewContextDetails]{Text: "A new context window will start at the next turn boundary.", Details: NewContextDetails{Compact: "next-turn-boundary"}}, nil
	},
}

const newContextDescription = "Start a new context window at the next turn boundary. Takes no parameters and changes nothing in the workspace; " +
	"use it when the conversation has grown long and earlier detail is no longer needed."

// NewContextDetails are new_context's details.
type NewContextDetails struct {
	Compact string `json:"compact"`
}
