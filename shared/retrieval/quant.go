package retrieval

import "math"

// quantizeAll quantizes each dims-long vector of vecs to int8 with its own
// scale (max |v| / 127), so every vector uses the full int8 range whatever its
// norm.
func quantizeAll(vecs []float32, dims int) ([]int8, []float32) {
	n := len(vecs) / dims
	q := make([]int8, len(vecs))
	scales := make([]float32, n)
	for i := 0; i < n; i++ {
		scales[i] = quantize(q[i*dims:(i+1)*dims], vecs[i*dims:(i+1)*dims], 127)
	}
	return q, scales
}

// quantize writes round(v/scale) into dst and returns scale = max|v|/limit.
func quantize[T int8 | int16](dst []T, v []float32, limit float32) float32 {
	var max float32
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > max {
			max = a
		}
	}
	if max == 0 {
		clear(dst)
		return 0
	}
	scale := max / limit
	inv := 1 / scale
	for i, x := range v {
		r := float32(math.Round(float64(x * inv)))
		if r > limit {
			r = limit
		} else if r < -limit {
			r = -limit
		}
		dst[i] = T(r)
	}
	return scale
}

// queryLimit is the largest magnitude a query component may take, widened to
// int16, such that a dot product with dims int8 values (each at most 128 in
// magnitude) cannot overflow int32 even in partial sums. A finer query than
// the stored vectors' int8 halves the quantization error for free.
func queryLimit(dims int) float32 {
	l := math.MaxInt32 / (128 * dims)
	if l > math.MaxInt16 {
		l = math.MaxInt16
	}
	if l < 1 {
		l = 1
	}
	return float32(l)
}

// dotsGeneric computes out[i] = q · data[i*dims:(i+1)*dims] for each of the
// len(out) vectors: the portable kernel, and the reference the assembly
// kernels are tested against. It scores four vectors per pass so each query
// value is loaded once for four products.
func dotsGeneric(q []int16, data []int8, dims int, out []int32) {
	q = q[:dims]
	i := 0
	for ; i+4 <= len(out); i += 4 {
		v0 := data[i*dims : (i+1)*dims]
		v1 := data[(i+1)*dims : (i+2)*dims]
		v2 := data[(i+2)*dims : (i+3)*dims]
		v3 := data[(i+3)*dims : (i+4)*dims]
		v0, v1, v2, v3 = v0[:len(q)], v1[:len(q)], v2[:len(q)], v3[:len(q)]
		var s0, s1, s2, s3 int32
		for j, qj := range q {
			w := int32(qj)
			s0 += w * int32(v0[j])
			s1 += w * int32(v1[j])
			s2 += w * int32(v2[j])
			s3 += w * int32(v3[j])
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(out); i++ {
		v := data[i*dims : (i+1)*dims]
		v = v[:len(q)]
		var s int32
		for j, qj := range q {
			s += int32(qj) * int32(v[j])
		}
		out[i] = s
	}
}

// dotFloat returns a · b.
func dotFloat(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return s0 + s1 + s2 + s3
}
