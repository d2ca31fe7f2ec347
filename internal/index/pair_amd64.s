#include "textflag.h"

// func indexPairAVX2(p *byte, blocks int, c1, c2 byte, d int) int
//
// The first i < blocks*32 with p[i] == c1 and p[i+d] == c2, or -1; the
// caller guarantees p[blocks*32-1+d] is readable. Per 32 positions: two
// unaligned loads, two byte compares against the broadcast bytes, their
// AND and one mask test.
TEXT ·indexPairAVX2(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    blocks+8(FP), CX
	MOVBLZX c1+16(FP), AX
	MOVBLZX c2+17(FP), BX
	MOVQ    d+24(FP), DX
	MOVQ    AX, X0
	VPBROADCASTB X0, Y0
	MOVQ    BX, X1
	VPBROADCASTB X1, Y1
	LEAQ    (SI)(DX*1), R9 // p+d
	XORQ    DI, DI         // i
	SHLQ    $5, CX         // blocks*32
	TESTQ   CX, CX
	JZ      notfound

loop:
	VMOVDQU (SI)(DI*1), Y2
	VMOVDQU (R9)(DI*1), Y3
	VPCMPEQB Y0, Y2, Y2
	VPCMPEQB Y1, Y3, Y3
	VPAND   Y2, Y3, Y3
	VPMOVMSKB Y3, R10
	TESTL   R10, R10
	JNZ     found
	ADDQ    $32, DI
	CMPQ    DI, CX
	JB      loop

notfound:
	VZEROUPPER
	MOVQ    $-1, ret+32(FP)
	RET

found:
	VZEROUPPER
	BSFL    R10, R10
	ADDQ    R10, DI
	MOVQ    DI, ret+32(FP)
	RET
