//go:build amd64 && !purego

#include "textflag.h"

// func dotsAVX2(q *int16, data *int8, dims int, n int, out *int32)
//
// For each of n vectors of dims int8 values stored back to back at data,
// out[i] = sum_j q[j] * data[i*dims+j], q being the query widened to int16.
// Each 16 bytes are sign-extended to 16 int16 (VPMOVSXBW), multiplied with the
// query and summed pairwise into 8 int32 (VPMADDWD), and accumulated in four
// independent registers; a scalar loop handles a tail of dims % 16 values.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ data+8(FP), DI
	MOVQ dims+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R8

vector:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	MOVQ  SI, R9
	MOVQ  DX, R10

block64:
	CMPQ       R10, $64
	JLT        block16
	VPMOVSXBW  (DI), Y4
	VPMOVSXBW  16(DI), Y5
	VPMOVSXBW  32(DI), Y6
	VPMOVSXBW  48(DI), Y7
	VPMADDWD   (R9), Y4, Y4
	VPMADDWD   32(R9), Y5, Y5
	VPMADDWD   64(R9), Y6, Y6
	VPMADDWD   96(R9), Y7, Y7
	VPADDD     Y4, Y0, Y0
	VPADDD     Y5, Y1, Y1
	VPADDD     Y6, Y2, Y2
	VPADDD     Y7, Y3, Y3
	ADDQ       $64, DI
	ADDQ       $128, R9
	SUBQ       $64, R10
	JMP        block64

block16:
	CMPQ      R10, $16
	JLT       reduce
	VPMOVSXBW (DI), Y4
	VPMADDWD  (R9), Y4, Y4
	VPADDD    Y4, Y0, Y0
	ADDQ      $16, DI
	ADDQ      $32, R9
	SUBQ      $16, R10
	JMP       block16

reduce:
	VPADDD       Y1, Y0, Y0
	VPADDD       Y3, Y2, Y2
	VPADDD       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX

tail:
	TESTQ   R10, R10
	JZ      store
	MOVBQSX (DI), BX
	MOVWQSX (R9), R11
	IMULQ   R11, BX
	ADDL    BX, AX
	INCQ    DI
	ADDQ    $2, R9
	DECQ    R10
	JMP     tail

store:
	MOVL AX, (R8)
	ADDQ $4, R8
	DECQ CX
	JNZ  vector
	VZEROUPPER
	RET
