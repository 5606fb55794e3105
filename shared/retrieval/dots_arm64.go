//go:build arm64 && !purego

package retrieval

// useAsm selects the NEON kernel (Advanced SIMD is part of every arm64 CPU);
// tests turn it off to compare both paths.
var useAsm = true

//go:noescape
func dotsNEON(q *int16, data *int8, dims int, n int, out *int32)

// dots computes out[i] = q · data[i*dims:(i+1)*dims] for each of the len(out)
// vectors, with NEON.
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
	dotsNEON(&q[0], &data[0], dims, len(out), &out[0])
}
