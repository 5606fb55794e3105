package retrieval

import (
	"math/rand/v2"
	"testing"
)

// dotsReference is the plainest possible kernel, in int64.
func dotsReference(q []int16, data []int8, dims int, out []int64) {
	for i := range out {
		var s int64
		for j := 0; j < dims; j++ {
			s += int64(q[j]) * int64(data[i*dims+j])
		}
		out[i] = s
	}
}

func TestDotsAgreeWithReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type input struct {
		name    string
		dims, n int
		fill    func(q []int16, data []int8)
	}
	random := func(q []int16, data []int8) {
		for i := range q {
			q[i] = int16(rng.IntN(65536) - 32768)
		}
		for i := range data {
			data[i] = int8(rng.IntN(256) - 128)
		}
	}
	extreme := func(qv int16, dv int8) func(q []int16, data []int8) {
		return func(q []int16, data []int8) {
			for i := range q {
				q[i] = qv
			}
			for i := range data {
				data[i] = dv
			}
		}
	}
	var inputs []input
	for _, dims := range []int{1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 384, 385, 1000} {
		inputs = append(inputs, input{"random", dims, 7, random})
	}
	for _, dims := range []int{5, 64, 77, 384} {
		inputs = append(inputs,
			input{"all -128 times -32768", dims, 3, extreme(-32768, -128)},
			input{"all 127 times 32767", dims, 3, extreme(32767, 127)},
			input{"-128 times 32767", dims, 3, extreme(32767, -128)},
		)
	}
	for _, in := range inputs {
		q := make([]int16, in.dims)
		data := make([]int8, in.dims*in.n)
		in.fill(q, data)
		want := make([]int64, in.n)
		dotsReference(q, data, in.dims, want)
		for _, simd := range []bool{false, true} {
			if simd && !useAsm {
				continue
			}
			old := useAsm
			useAsm = simd
			got := make([]int32, in.n)
			dots(q, data, in.dims, got)
			useAsm = old
			for i := range want {
				if int64(got[i]) != want[i] {
					t.Errorf("%s, dims %d, simd2 %v: vector %d: got %d, want %d", in.name, in.dims, simd, i, got[i], want[i])
				}
			}
		}
	}
}

func TestQueryLimitPreventsOverflow(t *testing.T) {
	for _, dims := range []int{1, 384, 1024, 3072, 100000} {
		l := int64(queryLimit(dims))
		if l*128*int64(dims) > 1<<31-1 {
			t.Errorf("dims %d: limit %d can overflow int32", dims, l)
		}
	}
}

func BenchmarkDots384(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dims, n = 384, 4096
	q := make([]int16, dims)
	data := make([]int8, dims*n)
	for i := range data {
		data[i] = int8(rng.IntN(256) - 128)
	}
	out := make([]int32, n)
	for _, simd := range []bool{false, true} {
		name := map[bool]string{false: "generic", true: "asm"}[simd]
		b.Run(name, func(b *testing.B) {
			if simd && !useAsm {
				b.Skip("no assembly kernel")
			}
			old := useAsm
			useAsm = simd
			defer func() { useAsm = old }()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				dots(q, data, dims, out)
			}
		})
	}
}
