package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Five completed requests sent at 0 with first tokens at 10, 20, 30, 40, 50
// ms (TTFT = first token − send). numpy's linear percentile of n = 5 sorted
// values sits at v = (n − 1)·p/100:
//
//	p99.9: v = 4·0.999 = 3.996 → 40 + (50 − 40)·0.996 = 49.96
//	p12.5: v = 4·0.125 = 0.5   → 10 + (20 − 10)·0.5   = 15
//	p100:  v = 4                → 50 (the maximum)
//
// and the ITL pool (one gap per request: end − first token = 2, 4, 6, 8, 10
// ms) gives p99.9 = 8 + 2·0.996 = 9.992 and p12.5 = 2 + 2·0.5 = 3.
func TestChosenPercentiles(t *testing.T) {
	var acc Accumulator
	ps, err := CheckPercentiles([]float64{99.9, 50, 12.5, 100, 99.9})
	require.NoError(t, err)
	assert.Equal(t, []float64{12.5, 50, 99.9, 100}, ps) // ascending, one 99.9
	acc.SetPercentiles(ps)
	for i := int64(1); i <= 5; i++ {
		first := i * 10_000_000
		r := Record{Status: StatusCompleted, OutputTokens: 2, FirstTokenNs: first, SecondTokenNs: first + 2*i*1_000_000,
			EndNs: first + 2*i*1_000_000}
		acc.Add(&r)
		acc.AddGap(2 * i * 1_000_000)
	}
	s := acc.Close(1)
	// 50 is a fixed percentile (P50), so More holds the other three
	require.Len(t, s.TTFT.More, 3)
	for i, want := range []PercentileValue{{12.5, 15}, {99.9, 49.96}, {100, 50}} {
		assert.Equal(t, want.P, s.TTFT.More[i].P)
		assert.InDelta(t, want.V, s.TTFT.More[i].V, 1e-9, "ttft p%g", want.P)
	}
	assert.InDelta(t, 30.0, s.TTFT.P50, 1e-12)
	assert.InDelta(t, 3.0, s.ITL.More[0].V, 1e-9)
	assert.InDelta(t, 9.992, s.ITL.More[1].V, 1e-9)
	// the chosen keys follow p99, named as vLLM names them
	b, err := json.Marshal(s.TTFT)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(b), `"p99":49.6,"p12.5":15,"p99.9":49.96000000000001,"p100":50}`), string(b))
	var back map[string]float64
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Len(t, back, 11) // mean std min max p50 p90 p95 p99 + three
}

// Without chosen percentiles a Stats writes only its fields: the bytes of the
// struct without the MarshalJSON method.
func TestStatsJSONWithoutChosenPercentiles(t *testing.T) {
	st := Compute([]float64{3, 1, 2})
	type fields Stats
	want, err := json.Marshal(fields(*st))
	require.NoError(t, err)
	got, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, `{"mean":2,"std":0.816496580927726,"min":1,"max":3,"p50":2,"p90":2.8,"p95":2.9,"p99":2.98}`, string(got))
}

func TestCheckPercentilesRefuses(t *testing.T) {
	for _, ps := range [][]float64{{}, {0}, {-1}, {100.5}, {50, math.NaN()}, {math.Inf(1)}} {
		_, err := CheckPercentiles(ps)
		assert.Error(t, err, "%v", ps)
	}
	_, err := CheckPercentiles([]float64{50, 0})
	assert.EqualError(t, err, "0 is not a percentile: each must be a finite number in (0, 100]")
}

// The key is vLLM's word for the percentile, Python's str of the number: whole
// numbers without a point, an exponent only below 1e-4 (repr(0.0001) is
// "0.0001", repr(0.00001) "1e-05"), so the smallest double is a short name.
func TestPercentileKeyIsVLLMsWord(t *testing.T) {
	for p, want := range map[float64]string{
		50: "p50", 100: "p100", 99.9: "p99.9", 12.5: "p12.5", 0.0001: "p0.0001",
		0.00001: "p1e-05", 1e-300: "p1e-300", 99.99999: "p99.99999",
	} {
		assert.Equal(t, want, PercentileKey(p), "%v", p)
	}
}
