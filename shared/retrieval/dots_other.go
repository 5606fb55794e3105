//go:build !amd64

package retrieval

// useAVX2 is false off amd64; the portable kernel serves every vector scan.
var useAVX2 = false

// dots computes out[i] = q · data[i*dims:(i+1)*dims] for each of the len(out)
// vectors.
func dots(q []int16, data []int8, dims int, out []int32) {
	dotsGeneric(q, data, dims, out)
}
