// Package rpcerr is the error a method answers with when its request is
// broken or hostcore cannot serve it: a JSON-RPC code with a hostcore
// errorCode. A failure the model should see is a tool result instead
// (ok:false), built by the envelope.
//
// It is cut out of handlers so that the method families in packages of
// their own (review, modes, frontend) answer with the same errors as
// the envelope, without importing it.
package rpcerr
