package handlers

import "golang.org/x/sys/cpu"

// escapeRunAVX2 is in jsonesc_amd64.s.
//
//go:noescape
func escapeRunAVX2(dst, src []byte) (nd, ns int)

// haveEscapeRun says escapeRun may be called.
var haveEscapeRun = cpu.X86.HasAVX2

// escapeRun copies the longest run of src that holds only plain bytes
// and newlines into dst (whose length is 0; it writes up to its
// capacity), newlines escaped, 32 bytes a step; see the assembly. It
// stops 64 bytes before the end of src and 96 bytes before the end of
// dst's capacity.
func escapeRun(dst, src []byte) (nd, ns int) { return escapeRunAVX2(dst, src) }
