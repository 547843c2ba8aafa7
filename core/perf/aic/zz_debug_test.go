package aic

import (
	"fmt"
	"testing"

	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/stretchr/testify/require"
)

func TestZZDebugBreakdown(t *testing.T) {
	db := sharedDB(t)
	for _, c := range []struct{ model, sys, kv string; tp int }{
		{"meta-llama/Meta-Llama-3.1-8B", "h200_sxm", "fp8", 1},
		{"meta-llama/Meta-Llama-3.1-8B", "h200_sxm", "fp8", 8},
		{"Qwen/Qwen3-32B", "h100_sxm", "bfloat16", 2},
	} {
		arch := sharedModel(t, c.model)
		sys := builtinSystem(t, c.sys)
		m, err := New(arch, sys, Options{Database: db, Version: "0.12.0", TP: c.tp, KVDtype: "fp8", WeightDtype: "fp8"})
		if c.kv == "bfloat16" { m, err = New(arch, sys, Options{Database: db, Version: "0.12.0", TP: c.tp}) }
		require.NoError(t, err)
		fmt.Println(c.model, c.tp, arch.WeightDtype, m.Notes(), m.Sources())
		for _, D := range []int{1, 8, 64, 128} {
			kv := make([]int, D)
			for i := range kv { kv[i] = 2000 }
			b := &perf.Batch{DecodeKVLens: kv, Samplers: D}
			fmt.Printf("decode D=%d %+v total %.3f ms\n", D, m.Breakdown(b), m.Breakdown(b).TotalNs()/1e6)
		}
		b := &perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2000}}, Samplers: 1}
		fmt.Printf("prefill 2000 %+v total %.3f ms\n", m.Breakdown(b), m.Breakdown(b).TotalNs()/1e6)
	}
}
