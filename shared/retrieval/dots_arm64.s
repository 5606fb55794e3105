//go:build arm64 && !purego

#include "textflag.h"

// Go's arm64 assembler lacks the signed widening instructions, so they are
// encoded by hand (Arm ARM, "SSHLL, SSHLL2" and "SMLAL, SMLAL2 (vector)"):
// SXTL   Vd.8H, Vn.8B          = 0x0F08A400 | n<<5 | d
// SXTL2  Vd.8H, Vn.16B         = 0x4F08A400 | n<<5 | d
// SMLAL  Vd.4S, Vn.4H, Vm.4H   = 0x0E608000 | m<<16 | n<<5 | d
// SMLAL2 Vd.4S, Vn.8H, Vm.8H   = 0x4E608000 | m<<16 | n<<5 | d

// func dotsNEON(q *int16, data *int8, dims int, n int, out *int32)
//
// For each of n vectors of dims int8 values stored back to back at data,
// out[i] = sum_j q[j] * data[i*dims+j], q being the query widened to int16.
// Each 16 bytes are sign-extended to int16 (SXTL, SXTL2) and multiplied with
// the query into four int32x4 accumulators (SMLAL, SMLAL2); a scalar loop
// handles a tail of dims % 16 values.
TEXT ·dotsNEON(SB), NOSPLIT, $0-40
	MOVD q+0(FP), R0
	MOVD data+8(FP), R1
	MOVD dims+16(FP), R2
	MOVD n+24(FP), R3
	MOVD out+32(FP), R4

vector:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R0, R5
	MOVD R2, R6

block16:
	CMP    $16, R6
	BLT    reduce
	VLD1.P 16(R1), [V0.B16]
	VLD1.P 32(R5), [V2.H8, V3.H8]
	WORD   $0x0F08A404 // SXTL   V4.8H, V0.8B
	WORD   $0x4F08A405 // SXTL2  V5.8H, V0.16B
	WORD   $0x0E628090 // SMLAL  V16.4S, V4.4H, V2.4H
	WORD   $0x4E628091 // SMLAL2 V17.4S, V4.8H, V2.8H
	WORD   $0x0E6380B2 // SMLAL  V18.4S, V5.4H, V3.4H
	WORD   $0x4E6380B3 // SMLAL2 V19.4S, V5.8H, V3.8H
	SUB    $16, R6
	B      block16

reduce:
	VADD  V17.S4, V16.S4, V16.S4
	VADD  V19.S4, V18.S4, V18.S4
	VADD  V18.S4, V16.S4, V16.S4
	VADDV V16.S4, V16
	VMOV  V16.S[0], R7

tail:
	CBZ    R6, store
	MOVB.P 1(R1), R8
	MOVH.P 2(R5), R9
	MULW   R8, R9, R9
	ADDW   R9, R7, R7
	SUB    $1, R6
	B      tail

store:
	MOVW.P R7, 4(R4)
	SUBS   $1, R3
	BNE    vector
	RET
