#include "textflag.h"

// func escapeRunAVX2(dst, src []byte) (nd, ns int)
//
// Copies src into dst 32 bytes at a time, writing each '\n' as the two
// bytes \n, while the bytes met are plain JSON string bytes (0x20-0x7f but
// '"' and '\\') or '\n'. It stops before any other byte that needs a look,
// when fewer than 64 bytes of src are left, or when dst has fewer than 96
// bytes of room; nd and ns say how far it got in each.
//
// A block's newlines are all written from the one load of it: each piece
// between two of them is copied by a 32-byte load and store (src has 64
// bytes left, so a piece's load stays inside it; dst has 96, which a
// block's at most 64 bytes of output and one store past them fit in),
// then the two bytes \n are stored after it. Text with a newline every
// few dozen bytes takes no branch that depends on where they are.
TEXT ·escapeRunAVX2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dst_cap+16(FP), DX
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ R8, R8 // nd
	XORQ R9, R9 // ns

	// VEX moves only: a legacy SSE move after a 256-bit one pays the
	// AVX-SSE transition (230 ns a call on the benchmark VM).
	MOVL $0x1f, AX
	VMOVQ AX, X1
	VPBROADCASTB X1, Y1 // 0x1f: a signed byte above it is 0x20-0x7f
	MOVL $0x22, AX
	VMOVQ AX, X2
	VPBROADCASTB X2, Y2 // '"'
	MOVL $0x5c, AX
	VMOVQ AX, X3
	VPBROADCASTB X3, Y3 // '\\'
	MOVL $0x0a, AX
	VMOVQ AX, X8
	VPBROADCASTB X8, Y8 // '\n'

loop:
	MOVQ CX, R10
	SUBQ R9, R10
	CMPQ R10, $64
	JLT  done
	MOVQ DX, R11
	SUBQ R8, R11
	CMPQ R11, $96
	JLT  done

	VMOVDQU (SI)(R9*1), Y0
	VPCMPGTB Y1, Y0, Y4 // 0xff where 0x20-0x7f
	VPCMPEQB Y2, Y0, Y5
	VPCMPEQB Y3, Y0, Y6
	VPOR     Y5, Y6, Y5 // 0xff where '"' or '\\'
	VPMOVMSKB Y4, R12
	NOTL     R12
	VPMOVMSKB Y5, R13
	ORL      R13, R12   // a bit for each byte that needs a look
	TESTL    R12, R12
	JNZ      special
	VMOVDQU  Y0, (DI)(R8*1)
	ADDQ     $32, R8
	ADDQ     $32, R9
	JMP      loop

special:
	VPCMPEQB  Y8, Y0, Y7
	VPMOVMSKB Y7, R13 // newlines
	MOVL      R13, R10
	NOTL      R10
	ANDL      R10, R12 // bytes that need a look and are not newlines
	MOVQ      $32, R11 // where this block's pieces end
	TESTL     R12, R12
	JZ        pieces
	BSFL      R12, R11 // the first such byte: the run ends before it
	LEAL      -1(R12), R10
	XORL      R12, R10
	ANDL      R10, R13 // only the newlines before it

pieces:
	XORQ BX, BX // where the next piece starts in the block

newline:
	TESTL   R13, R13
	JZ      last
	BSFL    R13, AX
	LEAQ    (R9)(BX*1), R10
	VMOVDQU (SI)(R10*1), Y7
	VMOVDQU Y7, (DI)(R8*1)
	ADDQ    AX, R8
	SUBQ    BX, R8
	MOVW    $0x6e5c, (DI)(R8*1) // the bytes '\\' 'n'
	ADDQ    $2, R8
	LEAQ    1(AX), BX
	LEAL    -1(R13), R10
	ANDL    R10, R13
	JMP     newline

last:
	LEAQ    (R9)(BX*1), R10
	VMOVDQU (SI)(R10*1), Y7
	VMOVDQU Y7, (DI)(R8*1)
	ADDQ    R11, R8
	SUBQ    BX, R8
	ADDQ    R11, R9
	CMPQ    R11, $32
	JEQ     loop

done:
	VZEROUPPER
	MOVQ R8, nd+48(FP)
	MOVQ R9, ns+56(FP)
	RET
