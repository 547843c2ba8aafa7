package aic

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

// TestPrintSGLangPrefill is a diagnostic, not a check: with
// AIC_SGLANG_PREFILL=1 it prints the per-op breakdown (ms, kernels only: no
// pass overhead) of one prompt's prefill pass of Qwen3-235B-A22B-FP8 on
// h200_sxm as the accuracy harness prices the sglang_dev.csv rows (SGLang
// 0.5.6.post2, its tables and the nearest stand-ins, fp8 KV cache, TP 2 and
// 4, CUDA graphs up to batch 9).
//
//	AIC_SGLANG_PREFILL=1 go test ./core/perf/aic -run PrintSGLangPrefill -v
//
// docs/accuracy.md ("SGLang rows", the Qwen3-235B prefill leads) quotes it.
func TestPrintSGLangPrefill(t *testing.T) {
	if os.Getenv("AIC_SGLANG_PREFILL") == "" {
		t.Skip("diagnostic; set AIC_SGLANG_PREFILL=1")
	}
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "Qwen--Qwen3-235B-A22B-FP8")
	for _, tp := range []int{2, 4} {
		m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "sglang", Version: "0.5.6.post2",
			TP: tp, WeightDtype: arch.WeightDtype, KVDtype: model.FP8,
			CUDAGraphMaxTokens: perf.CUDAGraphMaxTokens(9, 8192)})
		require.NoError(t, err)
		fmt.Printf("Qwen3-235B-A22B-FP8 SGLang 0.5.6.post2 TP%d\n", tp)
		for _, n := range []int{1000, 2000, 4000, 8000} {
			b := perf.Batch{Prefill: []perf.Chunk{{NewTokens: n}}, Samplers: 1}
			bd := m.Breakdown(&b)
			fmt.Printf("  prefill %5d GEMM %7.3f ctx %7.3f AR %6.3f mem %6.3f logits %5.3f experts %7.3f = %7.3f ms\n",
				n, bd.GEMMNs/1e6, bd.ContextAttentionNs/1e6, bd.AllReduceNs/1e6, bd.MemoryOpsNs/1e6,
				bd.LogitsNs/1e6, bd.ExpertsNs/1e6, bd.TotalNs()/1e6)
		}
	}
}
