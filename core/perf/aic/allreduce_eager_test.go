package aic

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

// A pass above the largest CUDA-graph capture size runs eagerly, so its
// all-reduces are the table's vllm_eager rows (Model.arSeconds); a pass
// within it replays a graph (vllm_graph rows). h100_sxm vLLM 0.14.0,
// custom_allreduce_perf, 2 GPUs, read off the table:
//
//	elements    vllm_graph ms  vllm_eager ms
//	16,777,216  0.138178       0.164166
//	33,554,432  0.246804       0.294637
func TestEagerAllReduceAbovePassesWithGraphs(t *testing.T) {
	db := sharedDB(t)
	sys := builtinSystem(t, "h100_sxm")
	arch := sharedModel(t, "Qwen--Qwen3-32B")
	top := perf.CUDAGraphMaxTokens(8, 5604) // min(2·8, 512, 5604) = 16
	require.Equal(t, 16, top)
	m, err := New(arch, sys, Options{MaxTokens: 5604, Database: db, Backend: "vllm", Version: "0.12.0", TP: 2,
		PassOverheadUs: config.DefaultPassOverheadUs, CUDAGraphMaxTokens: top})
	require.NoError(t, err)
	require.NotNil(t, m.allReduceEager)

	// on a table row: that row's time, eager above 16 tokens, graph at 16
	require.InDelta(t, 0.164166e-3, m.arSeconds(17, 16777216), 1e-9)
	require.InDelta(t, 0.138178e-3, m.arSeconds(16, 16777216), 1e-9)
	// a 4103-token pass of Qwen3-32B (hidden 5120): 21,007,360 elements,
	// w = (21,007,360 − 16,777,216) / 16,777,216 = 0.252136;
	// eager 0.164166 + 0.252136 × (0.294637 − 0.164166) = 0.197063 ms,
	// graph 0.138178 + 0.252136 × (0.246804 − 0.138178) = 0.165567 ms
	e := 4103 * 5120.0
	require.InDelta(t, 0.197063e-3, m.arSeconds(4103, e), 2e-9)
	require.InDelta(t, 0.165567e-3, m.allReduce.Seconds(e), 2e-9)
	// the pass: 2·64 + 1 = 129 all-reduces of the eager kind
	_, _, arNs, _ := m.tokenCosts(4103)
	require.InDelta(t, 129*0.197063e6, arNs, 129*2)
	bd := m.Breakdown(&perf.Batch{Prefill: []perf.Chunk{{NewTokens: 4096}}, Decodes: 7, DecodeKVSum: 7 * 4160, Samplers: 8})
	require.InDelta(t, 129*0.197063e6, bd.AllReduceNs, 129*2)
	// a decode pass within the graphs keeps the graph rows
	dec := m.Breakdown(&perf.Batch{Decodes: 8, DecodeKVSum: 8 * 4160, Samplers: 8})
	require.InDelta(t, 129*m.allReduce.Seconds(8*5120)*1e9, dec.AllReduceNs, 1e-6)

	// without CUDA graphs (CUDAGraphMaxTokens 0: not vLLM) the graph rows price every pass
	g, err := New(arch, sys, Options{MaxTokens: 5604, Database: db, Backend: "vllm", Version: "0.12.0", TP: 2,
		PassOverheadUs: config.DefaultPassOverheadUs})
	require.NoError(t, err)
	require.Nil(t, g.allReduceEager)
	require.InDelta(t, 0.165567e-3, g.arSeconds(4103, e), 2e-9)
}

// A table without vllm_eager rows (SGLang's: sglang_graph and
// sglang_eager) leaves every pass on its graph rows, with graphs or not.
func TestEagerAllReduceNotInSGLangTables(t *testing.T) {
	db := sharedDB(t)
	m, err := New(sharedModel(t, "Qwen--Qwen3-32B"), builtinSystem(t, "h100_sxm"), Options{MaxTokens: 5604, Database: db,
		Backend: "sglang", Version: "0.5.9", TP: 2, CUDAGraphMaxTokens: 16})
	require.NoError(t, err)
	require.Nil(t, m.allReduceEager)
	e := 4103 * 5120.0
	require.Equal(t, m.allReduce.Seconds(e), m.arSeconds(4103, e))
}
