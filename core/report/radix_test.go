package report

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// sortSamples gives slices.Sort's order exactly: random latencies (many
// equal, some 0, a spread of exponents), and lists it must hand to
// slices.Sort (a negative value, NaN, −0).
func TestSortSamplesIsSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lists := map[string][]float64{}
	var lat, few []float64
	for i := 0; i < 3*radixMin; i++ {
		lat = append(lat, math.Round(rng.ExpFloat64()*1e6)/1e3) // ms, µs resolution
		few = append(few, float64(rng.IntN(3))*12.5)
	}
	lat[7], lat[99] = 0, math.Inf(1)
	lists["latencies"], lists["three values"] = lat, few
	for name, bad := range map[string]float64{"negative": -1, "NaN": math.NaN(), "-0": math.Copysign(0, -1)} {
		xs := slices.Clone(lat)
		xs[123] = bad
		lists[name] = xs
	}
	lists["short"] = slices.Clone(lat[:radixMin-1])
	for name, xs := range lists {
		want := slices.Clone(xs)
		slices.Sort(want)
		buf := sortSamples(xs, nil)
		for i := range xs {
			assert.Equal(t, math.Float64bits(want[i]), math.Float64bits(xs[i]), "%s[%d]", name, i)
		}
		if name == "latencies" {
			assert.Len(t, buf, len(xs), "the buffer is kept for the next list")
		}
	}
}

// sortRuns orders gap runs by value as slices.SortFunc does (runs of equal
// value in any order: compared as sorted values and per-value counts).
func TestSortRunsSortsByValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{radixMin - 1, 3 * radixMin} {
		runs := make([]gapRun, n)
		for i := range runs {
			runs[i] = gapRun{v: int64(rng.IntN(50_000_000)), n: int64(1 + rng.IntN(9))}
		}
		runs[5].v = 0
		want := slices.Clone(runs)
		slices.SortFunc(want, func(a, b gapRun) int { return cmp.Compare(a.v, b.v) })
		sortRuns(runs)
		counts := func(rs []gapRun) map[int64]int64 {
			m := map[int64]int64{}
			for _, r := range rs {
				m[r.v] += r.n
			}
			return m
		}
		for i := range runs {
			assert.Equal(t, want[i].v, runs[i].v, "n=%d [%d]", n, i)
		}
		assert.Equal(t, counts(want), counts(runs))
	}
}

// 3,000,000 exponential latencies (ms at µs resolution), as the summary of a
// 3-million-request replay sorts each sample list.
func BenchmarkSortSamples3M(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]float64, 3_000_000)
	for i := range src {
		src[i] = math.Round(rng.ExpFloat64()*1e6) / 1e3
	}
	xs := make([]float64, len(src))
	var buf []uint64
	for b.Loop() {
		b.StopTimer()
		copy(xs, src)
		b.StartTimer()
		buf = sortSamples(xs, buf)
	}
}

// 3,000,000 gap runs (ns, exponential around 20 ms), as the ITL pool of a
// ten-million-request replay sorts them.
func BenchmarkSortRuns3M(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]gapRun, 3_000_000)
	for i := range src {
		src[i] = gapRun{v: int64(rng.ExpFloat64() * 20e6), n: int64(1 + rng.IntN(256))}
	}
	runs := make([]gapRun, len(src))
	for b.Loop() {
		b.StopTimer()
		copy(runs, src)
		b.StartTimer()
		sortRuns(runs)
	}
}

// radixSort reads an element's key as its first word: a gap run's value must
// be its first field, and a sample's bits are the whole element.
func TestRadixKeyIsFirstWord(t *testing.T) {
	assert.Equal(t, uintptr(0), unsafe.Offsetof(gapRun{}.v))
	assert.Equal(t, uintptr(8), unsafe.Sizeof(sampleBits(0)))
}

// radixSort gives slices.Sort's order whatever the keys' highest set bit (the
// passes above it are left out): all zero, one digit, a digit's edge, wide.
func TestRadixSortKeyWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, width := range []uint{0, 1, 11, 12, 22, 23, 33, 63, 64} {
		xs := make([]sampleBits, radixMin+17)
		for i := range xs {
			if width > 0 {
				xs[i] = sampleBits(rng.Uint64() >> (64 - width))
			}
		}
		want := slices.Clone(xs)
		slices.Sort(want)
		radixSort(xs, nil)
		assert.Equal(t, want, xs, "width %d", width)
	}
}

// radixSortFrom orders by the bits from its start up and keeps the order of
// keys equal in those bits, whatever their lower bits (a packed run's count).
func TestRadixSortFromKeepsOrderBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	xs := make([]packedRun, 3*radixMin)
	for i := range xs {
		xs[i] = packedRun(uint64(rng.IntN(500))<<packedCountBits | uint64(rng.IntN(1<<packedCountBits)))
	}
	want := slices.Clone(xs)
	slices.SortStableFunc(want, func(a, b packedRun) int { return cmp.Compare(a>>packedCountBits, b>>packedCountBits) })
	radixSortFrom(xs, nil, packedCountBits)
	assert.Equal(t, want, xs)
}
