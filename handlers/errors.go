package handlers

import "hostcore/handlers/rpcerr"

// Error is the JSON-RPC error of a broken envelope (package rpcerr).
type Error = rpcerr.Error

const rpcInternal = rpcerr.CodeInternal

var (
	invalidParams = rpcerr.InvalidParams
	appError      = rpcerr.App
	storageError  = rpcerr.Storage
)
