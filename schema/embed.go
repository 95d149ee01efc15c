// Package schema holds hostcore's wire contract as JSON Schema (draft
// 2020-12): protocol.schema.json describes every method's params and
// result, every notification, every host→client request and its answer,
// the error object and every built-in tool's details; tools.json maps each
// built-in tool to its argument schema. Clients generate their types from
// these files (clients/node does), and the package's tests hold them to
// the Go types and to every transcript in testdata, so the files cannot
// drift from what hostcore sends.
//
// plugin.schema.json is no message: it is a plugin's manifest, which
// PluginCheck validates against it (docs/plugins.md).
package schema

import "embed"

// FS holds protocol.schema.json, tools.json and plugin.schema.json, for
// Go code that validates messages and manifests against them.
//
//go:embed protocol.schema.json tools.json plugin.schema.json
var FS embed.FS
