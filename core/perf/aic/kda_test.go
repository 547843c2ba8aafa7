package aic

import (
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKDAPassOnTableRows: Kimi-K3 at TP 8 on b300_sxm with vLLM's kda_perf
// (its only version, 0.1.dev19262; the per-GPU shape 12 heads of 128,
// d_model 7168): a decode of 4 costs the fused_kda_decode row at batch 4 (the
// convolution update, the rule and the gated norm in one kernel, no
// separate conv row), a 1,024-token prefill the causal_conv1d_fn_qkv3 and
// flashkda_fwd rows at batch 1, seq_len 1,024, each KDA layer; no fallback.
func TestKDAPassOnTableRows(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "b300_sxm")
	arch := sharedModel(t, "moonshotai--Kimi-K3")
	m, err := New(arch, sys, Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, KVDtype: model.FP8})
	require.NoError(t, err)
	require.NotNil(t, m.hy.gdn)
	assert.Zero(t, m.Fallbacks()[OpLinearAttention])
	assert.Nil(t, m.hy.gdn.grids[gdnGenConv])
	path := filepath.Join(db, "data", "b300_sxm", "kda", "vllm", "0.1.dev19262", "kda_perf.parquet")
	sh := gdnShape{dModel: 7168, dConv: 4, kHeads: 12, kDim: 128, vHeads: 12, vDim: 128}
	gen := gdnRowMs(t, path, "fused_kda_decode", 4, 1, sh)
	assert.InDelta(t, gen, m.hy.gdn.generationSeconds(4)*1e3, 1e-12)
	ctx := gdnRowMs(t, path, "causal_conv1d_fn_qkv3", 1, 1024, sh) + gdnRowMs(t, path, "flashkda_fwd", 1, 1024, sh)
	assert.InDelta(t, ctx, m.hy.gdn.contextSeconds(1024, 1)*1e3, 1e-12)
	// between rows: linear (a decode of 6 between batches 4 and 8)
	g8 := gdnRowMs(t, path, "fused_kda_decode", 8, 1, sh)
	assert.InDelta(t, (gen+g8)/2, m.hy.gdn.generationSeconds(6)*1e3, 1e-12)

	// a pass's breakdown: the 69 KDA layers' kernel and the 24 MLA layers'
	// decode attention
	b := perf.Batch{Decodes: 4, DecodeKVSum: 4 * 1000, Samplers: 4}
	bd := m.Breakdown(&b)
	assert.InDelta(t, 69*gen*1e6+24*generationOn(&b, m.hy.mla.gen)*1e9, bd.GenerationAttentionNs, 1e-3)
}

// TestKDAKernelRoles: SGLang's KDA decode is two kernels
// (causal_conv1d_update, fused_recurrent_kda_packed_decode), or
// kda_fused_decode alone on the 12-head shard, and its prefill rule
// chunk_kda; vLLM's decode is fused_kda_decode alone; verify rows play
// no role.
func TestKDAKernelRoles(t *testing.T) {
	v, s := gdnKernels{kda: true, vllm: true}, gdnKernels{kda: true}
	for _, c := range []struct {
		k      gdnKernels
		kernel string
		phase  string
		role   gdnRole
		ok     bool
	}{
		{v, "fused_kda_decode", "generation", gdnGenRule, true},
		{v, "causal_conv1d_update", "generation", 0, false},
		{v, "flashkda_fwd", "context", gdnContextRule, true},
		{v, "causal_conv1d_fn_qkv3", "context", gdnContextConv, true},
		{v, "fused_recurrent_kda", "verify", 0, false},
		{s, "chunk_kda", "context", gdnContextRule, true},
		{s, "flashkda_fwd", "context", 0, false},
		{s, "causal_conv1d_update", "generation", gdnGenConv, true},
		{s, "fused_recurrent_kda_packed_decode", "generation", gdnGenRule, true},
		{s, "kda_fused_decode", "generation", gdnGenRule, true},
		{v, "kda_fused_decode", "generation", 0, false},
	} {
		r, ok := c.k.role(&gdnRow{Kernel: c.kernel, Phase: c.phase})
		assert.Equal(t, c.ok, ok, c.kernel)
		assert.Equal(t, c.role, r, c.kernel)
	}
	assert.Equal(t, [2][]gdnRole{{gdnContextConv, gdnContextRule}, {gdnGenRule}}, v.phaseRoles())
	assert.Equal(t, [2][]gdnRole{{gdnContextConv, gdnContextRule}, {gdnGenConv, gdnGenRule}}, s.phaseRoles())
}

// TestKDASGLangFusedDecode: SGLang times only kda_fused_decode for the
// 12-head shard (Kimi-K3 at TP 8): a decode of 4 costs that row at batch 4,
// with no convolution-update row beside it; a 1,024-token prefill the
// causal_conv1d_fn_qkv3 and chunk_kda rows.
func TestKDASGLangFusedDecode(t *testing.T) {
	db := sharedDB(t)
	m, err := New(sharedModel(t, "moonshotai--Kimi-K3"), builtinSystem(t, "b300_sxm"), Options{MaxTokens: 8192, Database: db,
		Backend: "sglang", Version: "0.5.16", TP: 8, KVDtype: model.FP8})
	require.NoError(t, err)
	assert.Zero(t, m.Fallbacks()[OpLinearAttention])
	assert.Nil(t, m.hy.gdn.grids[gdnGenConv])
	path := filepath.Join(db, "data", "b300_sxm", "kda", "sglang", "0.5.16", "kda_perf.parquet")
	sh := gdnShape{dModel: 7168, dConv: 4, kHeads: 12, kDim: 128, vHeads: 12, vDim: 128}
	assert.InDelta(t, gdnRowMs(t, path, "kda_fused_decode", 4, 1, sh), m.hy.gdn.generationSeconds(4)*1e3, 1e-12)
	ctx := gdnRowMs(t, path, "causal_conv1d_fn_qkv3", 1, 1024, sh) + gdnRowMs(t, path, "chunk_kda", 1, 1024, sh)
	assert.InDelta(t, ctx, m.hy.gdn.contextSeconds(1024, 1)*1e3, 1e-12)
}

// TestMLAOutputGateMemoryOp: Kimi-K3's MLA layers gate their output
// (mla_use_output_gate): per MLA layer one more memory-bound op reading the
// attention output and the gate and writing the product, 6·(96/8)·128 =
// 9,216 bytes a token at TP 8; the 24 MLA layers' memory ops grow by
// 24·(x·9,216 / W + latency) against the same model without the gate.
func TestMLAOutputGateMemoryOp(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "b300_sxm")
	arch := sharedModel(t, "moonshotai--Kimi-K3")
	opt := Options{MaxTokens: 8192, Database: db, Backend: "vllm", Version: "0.24.0", TP: 8, KVDtype: model.FP8}
	gated, err := New(arch, sys, opt)
	require.NoError(t, err)
	a := *arch
	mla := *arch.MLA
	mla.OutputGate = false
	a.MLA = &mla
	plain, err := New(&a, sys, opt)
	require.NoError(t, err)
	b := perf.Batch{Decodes: 64, DecodeKVSum: 64 * 1000, Samplers: 64}
	want := 24 * (64*9216/gated.memBW + gated.memLatencyS) * 1e9
	assert.InDelta(t, want, gated.Breakdown(&b).MemoryOpsNs-plain.Breakdown(&b).MemoryOpsNs, 1e-6*want)
}
