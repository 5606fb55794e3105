//go:build !(amd64 || arm64) || purego

package retrieval

// useAsm is false off amd64 and arm64 and with the purego tag: the portable
// kernel serves every vector scan.
var useAsm = false

// dots computes out[i] = q · data[i*dims:(i+1)*dims] for each of the len(out)
// vectors.
func dots(q []int16, data []int8, dims int, out []int32) {
	dotsGeneric(q, data, dims, out)
}
