package aic

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

// TestPrintMoEBreakdown is a diagnostic, not a check: with
// AIC_MOE_BREAKDOWN=1 it prints the per-op breakdown (ms, kernels only: no
// pass overhead) of decode and prefill passes for the (model, layout,
// version) groups of ../shared/data/silicon/vllm_moe_dev.csv on h200_sxm, as
// the accuracy harness builds them (fp8 KV cache, the CUDA-graph capture
// limit of max_num_seqs 16).
//
//	AIC_MOE_BREAKDOWN=1 go test ./core/perf/aic -run PrintMoEBreakdown -v
//
// docs/moe.md ("What was checked for the remaining gap") quotes it.
func TestPrintMoEBreakdown(t *testing.T) {
	if os.Getenv("AIC_MOE_BREAKDOWN") == "" {
		t.Skip("diagnostic; set AIC_MOE_BREAKDOWN=1")
	}
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	const maxTokens, maxSeqs = 9696, 16
	for _, c := range []struct {
		name, ver string
		tp, dp    int
		ep        bool
	}{
		{"MiniMaxAI--MiniMax-M2.5", "0.16.0", 4, 1, false},
		{"MiniMaxAI--MiniMax-M2.5", "0.18.0", 8, 1, true},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 2, 1, false},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 2, 1, true},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 4, 1, false},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 4, 1, true},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 1, 2, false},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 1, 4, false},
		{"Qwen--Qwen3-235B-A22B-FP8", "0.12.0", 2, 2, false},
	} {
		arch := sharedModel(t, c.name)
		m, err := New(arch, sys, Options{MaxTokens: maxTokens, Database: db, Backend: "vllm", Version: c.ver,
			TP: c.tp, DP: c.dp, EP: c.ep, WeightDtype: arch.WeightDtype, KVDtype: model.FP8,
			CUDAGraphMaxTokens: perf.CUDAGraphMaxTokens(maxSeqs, maxTokens)})
		require.NoError(t, err)
		fmt.Printf("%s vLLM %s TP%d DP%d EP %v\n", c.name, c.ver, c.tp, c.dp, c.ep)
		for _, p := range []struct {
			name string
			b    perf.Batch
		}{
			{"decode 4 @ KV 9000", perf.Batch{Decodes: 4, DecodeKVSum: 4 * 9000, Samplers: 4}},
			{"decode 16 @ KV 3000", perf.Batch{Decodes: 16, DecodeKVSum: 16 * 3000, Samplers: 16}},
			{"decode 48 @ KV 1500", perf.Batch{Decodes: 48, DecodeKVSum: 48 * 1500, Samplers: 48}},
			{"prefill 1 x 1024", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024}}, Samplers: 1}},
			{"prefill 1 x 8192", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 8192}}, Samplers: 1}},
		} {
			// every DP rank runs the same pass (the lockstep group's MoE tokens)
			bs := make([]perf.Batch, max(c.dp, 1))
			for i := range bs {
				bs[i] = p.b
			}
			X := int(perf.DPMoETokens(max(c.dp, 1), perf.CUDAGraphTokens(p.b.Tokens(), m.cgTop)))
			bd := m.Breakdown(&p.b)
			if m.hy != nil {
				bd = m.hybridBreakdown(&p.b, X)
			}
			fmt.Printf("  %-20s GEMM %7.3f ctx %7.3f gen %6.3f AR %6.3f mem %6.3f logits %5.3f experts %7.3f DP %6.3f = %7.3f ms\n",
				p.name, bd.GEMMNs/1e6, bd.ContextAttentionNs/1e6, bd.GenerationAttentionNs/1e6, bd.AllReduceNs/1e6,
				bd.MemoryOpsNs/1e6, bd.LogitsNs/1e6, bd.ExpertsNs/1e6, bd.DispatchNs/1e6, bd.TotalNs()/1e6)
		}
	}
}
