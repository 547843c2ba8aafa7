package aic

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllReduceCapsABumpByALargerSize(t *testing.T) {
	// 8 GPUs: 10 µs at 64k elements, a 26 µs bump at 128k and 256k, 17 µs at
	// 512k. Padding a 128k message to 512k costs 17 µs, so 128k and 256k
	// cost 17 µs; 64k keeps its 10 µs; halfway between 64k and 128k is
	// (10 + 17)/2 = 13.5 µs.
	rows := []allReduceRow{
		{NumGPUs: 8, MessageSize: 65536, Latency: 0.010},
		{NumGPUs: 8, MessageSize: 131072, Latency: 0.026},
		{NumGPUs: 8, MessageSize: 262144, Latency: 0.026},
		{NumGPUs: 8, MessageSize: 524288, Latency: 0.017},
	}
	c, err := newAllReduceCurve(rows, 8, 1e18) // roofline negligible
	require.NoError(t, err)
	assert.InDelta(t, 10e-6, c.Seconds(65536), 1e-12)
	assert.InDelta(t, 17e-6, c.Seconds(131072), 1e-12)
	assert.InDelta(t, 17e-6, c.Seconds(262144), 1e-12)
	assert.InDelta(t, 17e-6, c.Seconds(524288), 1e-12)
	assert.InDelta(t, 13.5e-6, c.Seconds(98304), 1e-12)
	// never decreasing in the message size
	prev := 0.0
	for e := 128.0; e <= 1<<20; e *= 1.1 {
		s := c.Seconds(e)
		assert.GreaterOrEqual(t, s, prev, "at %g elements", e)
		prev = s
	}
}

func TestAllReduceB200TP8Bump(t *testing.T) {
	db := sharedDB(t)
	for _, v := range []string{"0.19.0", "0.24.0"} {
		p := filepath.Join(db, "data", "b200_sxm", "comm", "vllm", v, "custom_allreduce_perf.parquet")
		rows, err := loadAllReduce(p)
		require.NoError(t, err)
		c, err := newAllReduceCurve(rows, 8, 900e9)
		require.NoError(t, err)
		// the tables: 26.0 / 25.8 µs at 131,072 elements; 16.7 / 17.2 µs at 524,288
		at512k := c.Seconds(524288)
		assert.InDelta(t, map[string]float64{"0.19.0": 16.7e-6, "0.24.0": 17.2e-6}[v], at512k, 0.06e-6, v)
		assert.Equal(t, at512k, c.Seconds(131072), v)
		assert.Less(t, c.Seconds(65536), 10e-6, v)
	}
}

// TestPrintAllReduceEnvelope is a diagnostic, not a check: with
// AIC_ALLREDUCE_ENVELOPE=1 it lists, for every custom all-reduce table under
// the shared database, the measured sizes that padEnvelope lowers by more
// than 5 % (docs/accuracy.md quotes it).
//
//	AIC_ALLREDUCE_ENVELOPE=1 go test ./core/perf/aic -run PrintAllReduceEnvelope -v
func TestPrintAllReduceEnvelope(t *testing.T) {
	if os.Getenv("AIC_ALLREDUCE_ENVELOPE") == "" {
		t.Skip("diagnostic; set AIC_ALLREDUCE_ENVELOPE=1")
	}
	db := sharedDB(t)
	paths, err := filepath.Glob(filepath.Join(db, "data", "*", "comm", "vllm", "*", "custom_allreduce_perf.parquet"))
	require.NoError(t, err)
	for _, p := range paths {
		rows, err := loadAllReduce(p)
		require.NoError(t, err)
		gpus := map[int64]bool{}
		for _, r := range rows {
			gpus[r.NumGPUs] = true
		}
		for _, g := range []int64{2, 4, 8} {
			if !gpus[g] {
				continue
			}
			c, err := newAllReduceCurve(rows, g, 1e18)
			require.NoError(t, err)
			for _, r := range rows {
				if r.NumGPUs != g {
					continue
				}
				capped := c.sec[indexOf(c.sizes, float64(r.MessageSize))]
				if raw := r.Latency * 1e-3; raw > 1.05*capped {
					rel, _ := filepath.Rel(db, p)
					fmt.Printf("%-60s %d GPUs  %9d elements  %6.1f → %6.1f µs\n", rel, g, r.MessageSize, raw*1e6, capped*1e6)
				}
			}
		}
	}
}
