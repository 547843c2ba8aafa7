package aic

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

// TestPrintBreakdown is a diagnostic, not a check: with AIC_BREAKDOWN=1 it
// prints the per-op breakdown (ms) of representative passes of
// Llama-3.1-8B (fp8 weights, fp8 KV cache) on h200_sxm at TP 1/2/4/8, as
// the accuracy harness prices the vllm_dense_dev.csv rows (backend 0.12.0),
// with each layer GEMM's and the all-reduce's measured/roofline ratio.
//
//	AIC_BREAKDOWN=1 go test ./core/perf/aic -run PrintBreakdown -v
//
// docs/accuracy-llama8b-fp8.md records what it printed and what follows.
func TestPrintBreakdown(t *testing.T) {
	if os.Getenv("AIC_BREAKDOWN") == "" {
		t.Skip("diagnostic; set AIC_BREAKDOWN=1")
	}
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "meta-llama--Meta-Llama-3.1-8B")
	passes := []struct {
		name string
		b    perf.Batch
	}{
		{"decode 64 @ KV 4000", perf.Batch{Decodes: 64, DecodeKVSum: 64 * 4000, Samplers: 64}},
		{"mixed 2x4096 + 64 decodes", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}, {NewTokens: 4096}}, Decodes: 64, DecodeKVSum: 64 * 4000, Samplers: 66}},
		{"prefill 1 x 8192", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 8192}}, Samplers: 1}},
	}
	for _, tp := range []int{1, 2, 4, 8} {
		m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.12.0", TP: tp,
			WeightDtype: model.FP8, KVDtype: model.FP8, PassOverheadUs: config.DefaultPassOverheadUs})
		require.NoError(t, err)
		for _, p := range passes {
			bd := m.Breakdown(&p.b)
			fmt.Printf("TP%d %-26s GEMM %7.3f ctx %6.3f gen %6.3f AR %6.3f mem %6.3f emb %5.3f logits %5.3f ovh %5.3f = %7.3f ms\n",
				tp, p.name, bd.GEMMNs/1e6, bd.ContextAttentionNs/1e6, bd.GenerationAttentionNs/1e6, bd.AllReduceNs/1e6,
				bd.MemoryOpsNs/1e6, bd.EmbeddingNs/1e6, bd.LogitsNs/1e6, bd.OverheadNs/1e6, bd.TotalNs()/1e6)
		}
		for i, s := range m.gemms {
			for _, x := range []float64{64, 8256} {
				sec := m.gemmW.Seconds(x, float64(s.N), float64(s.K))
				fmt.Printf("    GEMM %d n %5d k %5d m %4v: %.4f ms, roofline/measured %.2f\n",
					i, s.N, s.K, x, sec*1e3, m.gemmW.roofline(x, float64(s.N), float64(s.K))/sec)
			}
		}
		if ar, ok := m.allReduce.(*allReduceCurve); ok {
			for _, e := range []float64{64 * 4096, 8256 * 4096} {
				sec := ar.Seconds(e)
				fmt.Printf("    all-reduce %8.0f elements (%5.1f MB): %.4f ms, roofline/measured %.2f\n",
					e, 2*e/1e6, sec*1e3, ar.roofline(e)/sec)
			}
		}
	}
}

// TestPrintBreakdownQwen3 is a diagnostic, not a check: with
// AIC_BREAKDOWN=1 it prints the per-op breakdown (ms) of Qwen3-32B (bf16)
// passes on h100_sxm at TP 1/2/4/8 as the accuracy harness prices the
// vllm_dense_dev.csv rows (backend 0.12.0: the 0.14.0 tables), and each
// layer GEMM at m 4096 / 4103 with whether (n, k) is a measured site and
// its TFLOP/s, and the all-reduce of a 4103-token pass (CUDA graphs up
// to 16 tokens, c = 8: the pass runs eagerly, Model.arSeconds).
//
//	AIC_BREAKDOWN=1 go test ./core/perf/aic -run PrintBreakdownQwen3 -v
//
// docs/accuracy.md ("The ISL 4096 rows: the cycle and the perf layer")
// records what it printed.
func TestPrintBreakdownQwen3(t *testing.T) {
	if os.Getenv("AIC_BREAKDOWN") == "" {
		t.Skip("diagnostic; set AIC_BREAKDOWN=1")
	}
	db := sharedDB(t)
	sys := builtinSystem(t, "h100_sxm")
	arch := sharedModel(t, "Qwen--Qwen3-32B")
	passes := []struct {
		name string
		b    perf.Batch
	}{
		{"prefill 4096", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}}, Samplers: 1}},
		{"prefill 4096 + 7 decodes", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}}, Decodes: 7, DecodeKVSum: 7 * 4160, Samplers: 8}},
		{"prefill 1024", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024}}, Samplers: 1}},
		{"decode 8 @ KV 4160", perf.Batch{Decodes: 8, DecodeKVSum: 8 * 4160, Samplers: 8}},
	}
	for _, tp := range []int{1, 2, 4, 8} {
		m, err := New(arch, sys, Options{MaxTokens: 5604, Database: db, Backend: "vllm", Version: "0.12.0", TP: tp,
			PassOverheadUs: config.DefaultPassOverheadUs, CUDAGraphMaxTokens: perf.CUDAGraphMaxTokens(8, 5604)})
		require.NoError(t, err)
		for _, p := range passes {
			bd := m.Breakdown(&p.b)
			fmt.Printf("TP%d %-26s GEMM %7.3f ctx %6.3f gen %6.3f AR %6.3f mem %6.3f emb %5.3f logits %5.3f ovh %5.3f = %7.3f ms\n",
				tp, p.name, bd.GEMMNs/1e6, bd.ContextAttentionNs/1e6, bd.GenerationAttentionNs/1e6, bd.AllReduceNs/1e6,
				bd.MemoryOpsNs/1e6, bd.EmbeddingNs/1e6, bd.LogitsNs/1e6, bd.OverheadNs/1e6, bd.TotalNs()/1e6)
		}
		for i, s := range m.gemms {
			_, site := m.gemmW.sites[[2]float64{float64(s.N), float64(s.K)}]
			for _, x := range []float64{4096, 4103} {
				sec := m.gemmW.Seconds(x, float64(s.N), float64(s.K))
				fmt.Printf("    GEMM %d n %5d k %5d site %-5v m %4v: %.4f ms, %.0f TFLOP/s\n",
					i, s.N, s.K, site, x, sec*1e3, 2*x*float64(s.N)*float64(s.K)/sec/1e12)
			}
		}
		if ar, ok := m.allReduce.(*allReduceCurve); ok {
			e := 4103 * m.hidden
			fmt.Printf("    all-reduce %.0f elements (%.1f MB): graph %.4f ms, in a %d-token pass %.4f ms\n",
				e, 2*e/1e6, ar.Seconds(e)*1e3, 4103, m.arSeconds(4103, e)*1e3)
		}
	}
}
