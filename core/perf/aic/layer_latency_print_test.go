package aic

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

// TestPrintLayerLatency is a diagnostic, not a check: with
// AIC_LAYER_LATENCY=1 it prints, for a one-request decode pass (KV 1500)
// priced by the kernel tables (backend 0.12.0, overheads 0), how far each op
// family sits above the roofline at the default efficiencies with no layer
// latency, in µs per layer. The roofline's layer_latency_us default
// (config.DefaultLayerLatencyUs) is read off these numbers.
//
//	AIC_LAYER_LATENCY=1 go test ./core/perf/aic -run PrintLayerLatency -v
func TestPrintLayerLatency(t *testing.T) {
	if os.Getenv("AIC_LAYER_LATENCY") == "" {
		t.Skip("diagnostic; set AIC_LAYER_LATENCY=1")
	}
	db := sharedDB(t)
	for _, c := range []struct{ model, system string }{
		{"Qwen--Qwen3-32B", "h100_sxm"}, {"meta-llama--Meta-Llama-3.1-8B", "h200_sxm"},
	} {
		arch := sharedModel(t, c.model)
		sys := builtinSystem(t, c.system)
		for _, tp := range []int{1, 2, 4, 8} {
			m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.12.0", TP: tp})
			require.NoError(t, err)
			p := perf.RooflineParams{ComputeEfficiency: config.DefaultComputeEfficiency,
				MemoryEfficiency: config.DefaultMemoryEfficiency, AllReduceLatencyUs: perf.CustomAllReduceLatencyUs}
			r, err := perf.NewRoofline(arch, sys, perf.RooflineOptions{TP: tp, Params: p})
			require.NoError(t, err)
			b := perf.Batch{Decodes: 1, DecodeKVSum: 1500, Samplers: 1}
			a, o := m.Breakdown(&b), r.Breakdown(&b)
			us := func(x, y float64) float64 { return (x - y) / 1e3 / float64(arch.Layers) }
			gemm, gen, mem := us(a.GEMMNs, o.GEMMNs), us(a.GenerationAttentionNs, o.GenerationAttentionNs),
				us(a.MemoryOpsNs, o.MemoryOpsNs)
			fmt.Printf("%s %s TP%d: µs/layer above the roofline: 4 GEMMs %5.1f, decode attention %5.1f, norms+activation %5.1f; sum %5.1f\n",
				c.model, c.system, tp, gemm, gen, mem, gemm+gen+mem)
		}
	}
}
