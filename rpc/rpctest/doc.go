// Package rpctest drives a built hostcore as a child over pipes, as the
// sidecar does, for the tests that run the binary: the root package's
// (host_test.go) and schema's live contract test.
//
// It is a package, not a test file, so that both drive the child the
// same way: the same line size limit, the same kill at the end, the same
// stderr in the log of a test that failed.
package rpctest
