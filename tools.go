//go:build tools

// Package main pins dependencies used across hostcore while packages are built.
package main

import (
	_ "github.com/aymanbagabas/go-udiff"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/creack/pty"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/sabhiram/go-gitignore"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/tools/txtar"
	_ "zombiezen.com/go/sqlite"
	_ "zombiezen.com/go/sqlite/sqlitex"
)
