package aic

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func qwenTP2(t testing.TB) *Model {
	t.Helper()
	m, err := New(sharedModel(t, "Qwen/Qwen3-32B"), builtinSystem(t, "h100_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 2})
	require.NoError(t, err)
	return m
}

func mixedBatch() *perf.Batch {
	b := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 512, PrefixTokens: 1024}, {NewTokens: 700}}, Samplers: 65}
	for i := range 64 {
		b.AddDecode(1000 + 37*i)
	}
	return b
}

func TestPassTimeBasics(t *testing.T) {
	m := qwenTP2(t)
	assert.Equal(t, "aic-v1", m.Name())
	// an empty pass still advances the clock
	assert.Equal(t, int64(1), m.PassTime(&perf.Batch{}))
	b := mixedBatch()
	bd := m.Breakdown(b)
	assert.InDelta(t, bd.TotalNs(), float64(m.PassTime(b)), 0.5)
	for name, v := range map[string]float64{"gemm": bd.GEMMNs, "ctx": bd.ContextAttentionNs,
		"gen": bd.GenerationAttentionNs, "mem": bd.MemoryOpsNs, "allreduce": bd.AllReduceNs, "logits": bd.LogitsNs} {
		assert.Greater(t, v, 0.0, name)
	}
	// a pass beyond the tabulated size is priced on the fly, consistently
	big := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 9000}}, Samplers: 1}
	assert.Greater(t, m.PassTime(big), m.PassTime(&perf.Batch{Prefill: []perf.Chunk{{NewTokens: 8192}}, Samplers: 1}))
	// provenance for the report
	md := m.Metadata()
	srcs := md["tables"].([]Source)
	require.Len(t, srcs, 4)
	assert.Equal(t, "0.24.0", srcs[0].ReadFrom)
}

// TestSequenceOverhead: the overhead is fixed + per sequence × (prefill
// chunks + decodes): the mixed batch has 2 chunks and 64 decodes, so 1 ms +
// 66 × 40 µs = 3.64 ms, and the kernels are priced as without it.
func TestSequenceOverhead(t *testing.T) {
	bare := qwenTP2(t)
	m, err := New(sharedModel(t, "Qwen/Qwen3-32B"), builtinSystem(t, "h100_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 2, PassOverheadUs: 1000, SequenceOverheadUs: 40})
	require.NoError(t, err)
	b := mixedBatch()
	assert.InDelta(t, 3_640_000, m.Breakdown(b).OverheadNs, 1e-6)
	assert.InDelta(t, bare.Breakdown(b).TotalNs()+3_640_000, m.Breakdown(b).TotalNs(), 1e-3)
	_, err = New(sharedModel(t, "Qwen/Qwen3-32B"), builtinSystem(t, "h100_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.24.0", TP: 2, SequenceOverheadUs: -2})
	assert.ErrorContains(t, err, "per_sequence_overhead_us = -2")
}

// TestEagerLaunchBoundsThePass: a batch's host launch (perf.Batch.HostLaunchNs)
// reaches the breakdown outside TotalNs; a launch longer than the mixed
// batch's kernels is the pass (no CPU overhead and no overlap here, so
// T = 0 + max(kernels, H) = H), a shorter one leaves it as it was.
func TestEagerLaunchBoundsThePass(t *testing.T) {
	m := qwenTP2(t)
	b := mixedBatch()
	kernels := m.Breakdown(b).TotalNs()
	b.HostLaunchNs = kernels + 5e6
	bd := m.Breakdown(b)
	assert.Equal(t, kernels, bd.TotalNs())
	assert.InDelta(t, kernels+5e6, float64(m.PassTime(b)), 0.5)
	b.HostLaunchNs = kernels / 2
	assert.InDelta(t, kernels, float64(m.PassTime(b)), 0.5)
}

// TestCachedPrefixReducesContextAttention: a 512-token chunk after a
// 1536-token prefix does (2048² − 1536²)/2048² = 7/16 of the work of a
// 2048-token prompt's attention (docs/design.md, "Lookups").
func TestCachedPrefixReducesContextAttention(t *testing.T) {
	m := qwenTP2(t)
	full := m.Breakdown(&perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2048}}, Samplers: 1}).ContextAttentionNs
	tail := m.Breakdown(&perf.Batch{Prefill: []perf.Chunk{{NewTokens: 512, PrefixTokens: 1536}}, Samplers: 1}).ContextAttentionNs
	assert.InEpsilon(t, full*7/16, tail, 1e-9)
}

func TestPassTimeDoesNotAllocate(t *testing.T) {
	m := qwenTP2(t)
	b := mixedBatch()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.PassTime(b) }))
}

func TestNewErrors(t *testing.T) {
	arch := sharedModel(t, "Qwen/Qwen3-32B")
	sys := builtinSystem(t, "h100_sxm")
	db := sharedDB(t)
	_, err := New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Version: "0.24.0", TP: 1})
	assert.ErrorContains(t, err, "database is required")
	_, err = New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: t.TempDir(), Version: "0.24.0", TP: 1})
	assert.ErrorContains(t, err, "h100_sxm")
	_, err = New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.24.0", TP: 3})
	assert.ErrorContains(t, err, "does not divide")
	_, err = New(arch, sys, Options{MaxTokens: 8192, Backend: "vllm", Database: db, Version: "0.24.0", TP: 1, KVDtype: model.FP8Block})
	assert.ErrorContains(t, err, "kv dtype")
}

// TestStandIns: a dtype missing from a table falls back to bf16 and is
// noted (a100_sxm has no fp8 GEMM rows).
func TestStandIns(t *testing.T) {
	m, err := New(sharedModel(t, "meta-llama/Meta-Llama-3.1-8B"), builtinSystem(t, "a100_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.14.0", TP: 1, WeightDtype: model.FP8})
	require.NoError(t, err)
	assert.Contains(t, m.Notes()[0], "no fp8 GEMMs; bfloat16 used")
}

func BenchmarkAICPassTime(b *testing.B) {
	m := qwenTP2(b)
	batch := mixedBatch()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.PassTime(batch)
	}
}
