package aic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/perf"
)

// TestAttentionMissingHeadDimFallsBack: b200_sxm's vLLM 0.19.0 attention
// tables measure head_dim 128 and 256 only, and no window of 128, so
// gpt-oss-120b (head_dim 64, 18 full and 18 sliding-window layers) runs
// instead of failing: its full layers read the head_dim 128 rows at half
// the time (context FLOPs and decode KV bytes ∝ head_dim), its sliding
// layers the full-attention grid over 128 keys, and all 36 layers of both
// ops count as fallbacks.
func TestAttentionMissingHeadDimFallsBack(t *testing.T) {
	a := sharedModel(t, "openai/gpt-oss-120b")
	sys := builtinSystem(t, "b200_sxm")
	m, err := New(a, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.19.0", TP: 1})
	require.NoError(t, err)
	assert.Equal(t, 36, m.Fallbacks()[OpContextAttention])
	assert.Equal(t, 36, m.Fallbacks()[OpGenerationAttention])
	assert.Equal(t, m.Fallbacks(), m.Metadata()["fallbacks"])
	// the same rows read at head_dim 128 directly: the stand-in is half
	rows, err := loadAttention(filepath.Join(sharedDB(t), "data", "b200_sxm", "attention", "vllm", "0.19.0", "context_attention_perf.parquet"))
	require.NoError(t, err)
	sel := attnSelect{kind: contextKind, heads: 64, kvHeads: 8, headDim: 128, kvDtype: "bfloat16", kvBytes: 2,
		flops: sys.BF16Flops, memBW: sys.MemBW}
	ref, err := newAttnGrid(rows, sel)
	require.NoError(t, err)
	for _, s := range []float64{1024, 4096} {
		assert.InEpsilon(t, ref.Seconds(1, s)/2, m.ctx.Seconds(1, s), 1e-12)
	}
	var found bool
	for _, n := range m.Notes() {
		found = found || n == "context_attention_perf has no rows with head_dim 64, kv_cache_dtype bfloat16, window 0; head_dim 128 (bfloat16) scaled by 64/128"
	}
	assert.True(t, found, m.Notes())
}

// TestMissingTablesFallBack: a system folder holding only a GEMM table
// still prices Qwen3-32B at TP 2: attention from the roofline with the
// system's memory model (every layer, both ops: 64 each) and the TP
// all-reduce from the system's measured all-reduce fit (2·64 + 1 per pass).
// A decode of one request at KV 1,000 reads 2 · 4 KV heads · 128 · 2 bytes
// · 1,001 tokens per layer: 2,050,048 B at 0.8 × 3.35 TB/s, plus 3 µs.
func TestMissingTablesFallBack(t *testing.T) {
	db := t.TempDir()
	dir := filepath.Join(db, "data", "h100_sxm", "gemm", "vllm", "0.24.0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(sharedDB(t), "data", "h100_sxm", "gemm", "vllm", "0.24.0", "gemm_perf.parquet"),
		filepath.Join(dir, "gemm_perf.parquet")))
	sys := builtinSystem(t, "h100_sxm")
	m, err := New(sharedModel(t, "Qwen/Qwen3-32B"), sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.24.0", TP: 2})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{OpContextAttention: 64, OpGenerationAttention: 64, OpAllReduce: 129}, m.Fallbacks())
	b := &perf.Batch{Samplers: 1}
	b.AddDecode(1000)
	want := 2*4*128*2*1001/(0.8*3350e9) + 3e-6
	assert.InEpsilon(t, want, m.generationSeconds(b), 1e-12)
	l, ok := sys.AllReduceFor(2)
	require.True(t, ok)
	e := 5120.0
	assert.InEpsilon(t, l.LatencyS+2*0.5*2*e/l.BusBW, m.allReduce.Seconds(e), 1e-12)
}

// TestNCCLFallbackLatency: a GPU count the NCCL table did not measure takes
// the nearest measured count's smallest message time as its latency and a
// ring at the given bandwidth: over 16 GPUs, (16 − 1)/16 · 2 bytes per
// element moved once.
func TestNCCLFallbackLatency(t *testing.T) {
	rows := []ncclRow{
		{Op: "all_gather", NumGPUs: 8, MessageSize: 1024, Latency: 0.02},
		{Op: "all_gather", NumGPUs: 8, MessageSize: 512, Latency: 0.015},
		{Op: "all_gather", NumGPUs: 4, MessageSize: 256, Latency: 0.01},
		{Op: "reduce_scatter", NumGPUs: 16, MessageSize: 256, Latency: 0.5},
	}
	c := ncclFallback(rows, "all_gather", 16, 100e9)
	assert.InEpsilon(t, 15e-6+15.0/16*2*1e6/100e9, c.Seconds(1e6), 1e-12)
	assert.InEpsilon(t, 10e-6+15.0/16*2*1e6/100e9, ncclFallback(nil, "all_gather", 16, 100e9).Seconds(1e6), 1e-12)
}
