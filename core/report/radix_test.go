package report

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

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
