#include "textflag.h"

// func escapeRunAVX2(dst, src []byte) (nd, ns int)
//
// Copies src into dst 32 bytes at a time, writing each '\n' as the two
// bytes \n, while the bytes met are plain JSON string bytes (0x20-0x7f but
// '"' and '\\') or '\n'. It stops before any other byte that needs a look,
// when fewer than 32 bytes of src are left, or when dst has fewer than 34
// bytes of room; nd and ns say how far it got in each.
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

loop:
	MOVQ CX, R10
	SUBQ R9, R10
	CMPQ R10, $32
	JLT  done
	MOVQ DX, R11
	SUBQ R8, R11
	CMPQ R11, $34
	JLT  done

	VMOVDQU (SI)(R9*1), Y0
	VMOVDQU Y0, (DI)(R8*1) // stored whole; only the plain prefix counts
	VPCMPGTB Y1, Y0, Y4    // 0xff where 0x20-0x7f
	VPCMPEQB Y2, Y0, Y5
	VPCMPEQB Y3, Y0, Y6
	VPOR     Y5, Y6, Y5     // 0xff where '"' or '\\'
	VPMOVMSKB Y4, R12
	NOTL     R12
	VPMOVMSKB Y5, R13
	ORL      R13, R12       // a bit for each byte that needs a look
	TESTL    R12, R12
	JNZ      special
	ADDQ     $32, R8
	ADDQ     $32, R9
	JMP      loop

special:
	BSFL    R12, BX          // its index in the block
	LEAQ    (R9)(BX*1), R10  // its index in src
	MOVBLZX (SI)(R10*1), AX
	LEAQ    (R8)(BX*1), R11  // where it goes in dst
	CMPB    AL, $0x0a
	JNE     stop
	MOVB    $0x5c, (DI)(R11*1)
	MOVB    $0x6e, 1(DI)(R11*1)
	LEAQ    2(R11), R8
	LEAQ    1(R10), R9
	JMP     loop

stop:
	MOVQ R11, R8
	MOVQ R10, R9

done:
	VZEROUPPER
	MOVQ R8, nd+48(FP)
	MOVQ R9, ns+56(FP)
	RET
