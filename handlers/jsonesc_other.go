//go:build !amd64

package handlers

var haveEscapeRun = false

func escapeRun(dst, src []byte) (nd, ns int) { return 0, 0 }
