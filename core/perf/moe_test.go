package perf

import (
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
)

// subsets lists every k-subset of E experts as a bit mask.
func subsets(e, k int) []uint32 {
	var out []uint32
	for m := uint32(0); m < 1<<e; m++ {
		if bits.OnesCount32(m) == k {
			out = append(out, m)
		}
	}
	return out
}

// TestExpectedDistinctExpertsEnumeration checks D(n) = E·(1 − (1 − k/E)^n)
// against a direct enumeration: every way n tokens can each pick a k-subset
// of E experts (all C(E,k)^n equally likely), the mean size of their union.
func TestExpectedDistinctExpertsEnumeration(t *testing.T) {
	for e := 2; e <= 6; e++ {
		for k := 1; k <= e; k++ {
			subs := subsets(e, k)
			for n := 1; n <= 3; n++ {
				var total, count float64
				var walk func(depth int, union uint32)
				walk = func(depth int, union uint32) {
					if depth == n {
						total += float64(bits.OnesCount32(union))
						count++
						return
					}
					for _, s := range subs {
						walk(depth+1, union|s)
					}
				}
				walk(0, 0)
				assert.InDelta(t, total/count, ExpectedDistinctExperts(float64(n), e, k), 1e-12, "E=%d k=%d n=%d", e, k, n)
			}
		}
	}
	// Hand values: one token reaches exactly k experts; E = 128, k = 8,
	// n = 8: 128·(1 − (120/128)^8) = 128·(1 − 0.59676…) = 51.61.
	assert.InDelta(t, 8, ExpectedDistinctExperts(1, 128, 8), 1e-12)
	assert.InDelta(t, 128*(1-math.Pow(120.0/128, 8)), ExpectedDistinctExperts(8, 128, 8), 1e-12)
	assert.InDelta(t, 51.61, ExpectedDistinctExperts(8, 128, 8), 0.01)
	assert.Equal(t, 0.0, ExpectedDistinctExperts(0, 128, 8))
	// never more than E, and non-decreasing in n
	prev := 0.0
	for n := 1.0; n < 2000; n *= 1.5 {
		d := ExpectedDistinctExperts(n, 256, 8)
		assert.LessOrEqual(t, d, 256.0)
		assert.GreaterOrEqual(t, d, prev)
		prev = d
	}
}

// TestWindowPairs checks the closed form of Σ_{i=p+1..S} min(i, w) against
// the sum itself.
func TestWindowPairs(t *testing.T) {
	for _, w := range []int{0, 1, 5, 16} {
		for p := 0; p < 40; p += 3 {
			for sNew := 1; sNew < 40; sNew += 4 {
				var want float64
				for i := p + 1; i <= p+sNew; i++ {
					if w > 0 && i > w {
						want += float64(w)
					} else {
						want += float64(i)
					}
				}
				assert.Equal(t, want, WindowPairs(float64(sNew), float64(p), float64(w)), "w=%d p=%d sNew=%d", w, p, sNew)
			}
		}
	}
}

// TestCUDAGraphTokens: vLLM's default capture sizes are 1, 2, 4, the
// multiples of 8 below 256 and of 16 from 256, up to min(2 × max_num_seqs,
// 512, max_num_batched_tokens), which is itself a size.
func TestCUDAGraphTokens(t *testing.T) {
	assert.Equal(t, 512, CUDAGraphMaxTokens(256, 8192))  // 2·256 = 512
	assert.Equal(t, 32, CUDAGraphMaxTokens(16, 8192))    // 2·16
	assert.Equal(t, 20, CUDAGraphMaxTokens(16, 20))      // the token budget
	assert.Equal(t, 512, CUDAGraphMaxTokens(1024, 8192)) // at most 512
	assert.Equal(t, 0, CUDAGraphMaxTokens(0, 8192))
	// vLLM 0.28.0 on compute capability 10.x: a ceiling of 1024
	assert.Equal(t, 1024, CUDAGraphMaxTokensUpTo(1024, 16384, 1024)) // min(2048, 1024, 16384)
	assert.Equal(t, 600, CUDAGraphMaxTokensUpTo(300, 16384, 1024))   // 2·300
	assert.Equal(t, 512, CUDAGraphMaxTokensUpTo(1024, 8192, 512))
	for _, c := range []struct{ x, top, want int }{
		{1, 512, 1}, {2, 512, 2}, {3, 512, 4}, {4, 512, 4}, {5, 512, 8}, {9, 512, 16}, {17, 512, 24},
		{249, 512, 256}, {256, 512, 256}, {257, 512, 272}, {500, 512, 512}, {512, 512, 512},
		{513, 512, 513},            // above the largest graph: eager, unpadded
		{17, 20, 20}, {19, 20, 20}, // the largest size is the limit itself
		{9, 12, 12}, {13, 12, 13}, // 2 × max_num_seqs 6 = 12
		{5, 0, 5}, {0, 512, 0}, // no CUDA graphs; an empty pass
	} {
		assert.Equal(t, c.want, CUDAGraphTokens(c.x, c.top), "x=%d top=%d", c.x, c.top)
	}
}
