//go:build amd64 && !purego

package retrieval

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2 kernel; tests turn it off to compare both paths.
var useAsm = cpu.X86.HasAVX2

//go:noescape
func dotsAVX2(q *int16, data *int8, dims int, n int, out *int32)

// dots computes out[i] = q · data[i*dims:(i+1)*dims] for each of the len(out)
// vectors, with AVX2 when the CPU has it.
func dots(q []int16, data []int8, dims int, out []int32) {
	if len(out) == 0 || dims == 0 {
		clear(out)
		return
	}
	if !useAsm {
		dotsGeneric(q, data, dims, out)
		return
	}
	_ = q[dims-1]
	_ = data[len(out)*dims-1]
	dotsAVX2(&q[0], &data[0], dims, len(out), &out[0])
}
