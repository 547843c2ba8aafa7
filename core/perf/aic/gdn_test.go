package aic

import (
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gdnRowMs is the latency (ms) of one gdn_perf row, read independently of
// the grid.
func gdnRowMs(t *testing.T, path, kernel string, batch, seq int64, sh gdnShape) float64 {
	t.Helper()
	rows, err := loadGDN(path)
	require.NoError(t, err)
	for _, r := range rows {
		if r.Kernel == kernel && r.Batch == batch && r.SeqLen == seq && r.shape() == sh {
			return r.Latency
		}
	}
	t.Fatalf("no %s row at batch %d, seq %d", kernel, batch, seq)
	return 0
}

// TestGDNPassOnTableRows: Qwen3.5-397B-A17B at TP 8 on h200_sxm with the
// vLLM 0.24.0 table (its per-GPU shape: 2 key and 8 value heads): a decode
// of 4 costs the causal_conv1d_update and recurrent-rule rows at batch 4, a
// 1,024-token prefill the causal_conv1d_fn and chunked-rule rows at batch 1,
// seq_len 1,024, each layer.
func TestGDNPassOnTableRows(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "Qwen--Qwen3.5-397B-A17B")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, EP: true,
		KVDtype: model.BF16})
	require.NoError(t, err)
	require.NotNil(t, m.hy.gdn)
	assert.Zero(t, m.Fallbacks()[OpLinearAttention])
	path := filepath.Join(db, "data", "h200_sxm", "linear_attention", "vllm", "0.24.0", "gdn_perf.parquet")
	sh := gdnShape{dModel: 4096, dConv: 4, kHeads: 2, kDim: 128, vHeads: 8, vDim: 128}
	gen := gdnRowMs(t, path, "causal_conv1d_update", 4, 1, sh) + gdnRowMs(t, path, "fused_recurrent_gated_delta_rule_packed_decode", 4, 1, sh)
	assert.InDelta(t, gen, m.hy.gdn.generationSeconds(4)*1e3, 1e-12)
	ctx := gdnRowMs(t, path, "causal_conv1d_fn", 1, 1024, sh) + gdnRowMs(t, path, "chunk_gated_delta_rule_flashinfer", 1, 1024, sh)
	assert.InDelta(t, ctx, m.hy.gdn.contextSeconds(1024, 1)*1e3, 1e-12)
	// between rows: linear (decode of 6 between batches 4 and 8)
	g8 := gdnRowMs(t, path, "causal_conv1d_update", 8, 1, sh) + gdnRowMs(t, path, "fused_recurrent_gated_delta_rule_packed_decode", 8, 1, sh)
	assert.InDelta(t, (gen+g8)/2, m.hy.gdn.generationSeconds(6)*1e3, 1e-12)

	// a pass's breakdown: the 45 linear layers' kernels and the 15
	// full-attention layers' decode attention
	b := perf.Batch{Decodes: 4, DecodeKVSum: 4 * 1000, Samplers: 4}
	bd := m.Breakdown(&b)
	assert.InDelta(t, 45*gen*1e6+15*m.generationSeconds(&b)*1e9, bd.GenerationAttentionNs, 1e-3)
}

// TestGDNStandIns: a shape no version measured reads the nearest measured
// one scaled by the roofline ratio (a fallback of every linear layer);
// without any table, the roofline.
func TestGDNStandIns(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "Qwen--Qwen3.5-397B-A17B")
	a := *arch
	l := *arch.Linear
	l.ValueHeads = 80 // 10 a GPU at TP 8: not measured; 12 (Qwen3.5-27B at TP 4) is the nearest
	a.Linear = &l
	m, err := New(&a, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, EP: true, KVDtype: model.BF16})
	require.NoError(t, err)
	assert.Equal(t, 2*45, m.Fallbacks()[OpLinearAttention]) // both phases
	g := m.hy.gdn.grids[gdnGenRule]
	assert.InDelta(t, 10.0/12, g.scale, 0.02) // fewer value heads than the stand-in: a smaller state to read
	assert.Greater(t, m.hy.gdn.generationSeconds(4), 0.0)
	// a100_sxm has no linear_attention tables: the roofline
	a100 := builtinSystem(t, "a100_sxm")
	r, err := New(arch, a100, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, EP: true, KVDtype: model.BF16})
	if err != nil {
		t.Skipf("a100_sxm tables: %v", err)
	}
	assert.Equal(t, 2*45, r.Fallbacks()[OpLinearAttention])
	assert.Equal(t, "roofline", r.hy.gdn.grids[gdnGenRule].kernel)
}

// TestChunkedLayersOnTheFullGrid: Llama-4 Scout's 36 chunked local-attention
// layers are priced with the full-attention grids over each query's chunk
// (a stand-in of those layers, counted): a decode at KV 9,000 reads
// 9,000 mod 8,192 + 1 = 809 keys there, 9,001 in the 12 global layers.
func TestChunkedLayersOnTheFullGrid(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h200_sxm")
	arch := sharedModel(t, "meta-llama--Llama-4-Scout-17B-16E-Instruct")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, KVDtype: model.BF16})
	require.NoError(t, err)
	assert.Equal(t, []int{-8192}, m.DecodeWindows())
	fb := m.Fallbacks()
	assert.GreaterOrEqual(t, fb[OpContextAttention], 36)
	assert.GreaterOrEqual(t, fb[OpGenerationAttention], 36)
	b := perf.Batch{Samplers: 4}
	for range 4 {
		b.AddDecodeWindows(9000, m.DecodeWindows())
	}
	assert.Equal(t, []int64{4 * 809}, b.DecodeWindowSums)
	bd := m.Breakdown(&b)
	want := 12*m.gen.Seconds(4, 9001) + 36*m.gen.Seconds(4, 809)
	assert.InDelta(t, want*1e9, bd.GenerationAttentionNs, 1e-3)
}
