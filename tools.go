//go:build tools

// Package main pins dependencies used across hostcore while packages are built.
package main

import (
	_ "github.com/sourcegraph/jsonrpc2"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "github.com/creack/pty"
	_ "zombiezen.com/go/sqlite"
	_ "zombiezen.com/go/sqlite/sqlitex"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/sabhiram/go-gitignore"
	_ "github.com/aymanbagabas/go-udiff"
	_ "go.uber.org/goleak"
	_ "github.com/google/go-cmp/cmp"
	_ "golang.org/x/tools/txtar"
	_ "golang.org/x/sys/unix"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
)

