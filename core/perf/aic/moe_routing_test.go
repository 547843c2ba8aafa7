package aic

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// qwenMoERouted is Qwen3-235B-A22B-FP8 on h200_sxm at TP 4 (moe_tp 4, the
// fp8_block experts) from the vLLM 0.14.0 tables (Triton's fused_experts,
// the tables' kernel), its experts priced at routing.
func qwenMoERouted(t *testing.T, routing string) *Model {
	t.Helper()
	m, err := New(sharedModel(t, "Qwen/Qwen3-235B-A22B-FP8"), builtinSystem(t, "h200_sxm"),
		Options{MaxTokens: 8192, Backend: "vllm", Database: sharedDB(t), Version: "0.14.0", TP: 4, MoERouting: routing})
	require.NoError(t, err)
	return m
}

// moeRow1 reads the row of a moe_perf table of one routing, ms.
func moeRow1(t *testing.T, path, dist string, tokens int64) float64 {
	t.Helper()
	rows, err := loadMoE(path)
	require.NoError(t, err)
	for _, r := range rows {
		if r.Dtype == "fp8_block" && r.Distribution == dist && r.Tokens == tokens && r.Hidden == 4096 && r.Inter == 1536 &&
			r.TopK == 8 && r.Experts == 128 && r.TP == 4 && r.EP == 1 {
			return r.Latency
		}
	}
	t.Fatalf("no %s row at %d tokens", dist, tokens)
	return 0
}

// TestMoERoutingOnATableRow: one table row per routing, priced by hand. A
// power-law pass at a measured token count costs that row (the rows already
// read the experts the routing touches and wait for its busiest rank): 16
// tokens (128 assignments over 128 experts: 0.1077 ms at α 1.01, 0.1055 ms
// at α 1.2, where the balanced rows read every expert in 0.1938 ms) and
// 1,024 (0.3720 and 0.3867 ms against balanced's 0.3018: the hot experts'
// tokens). A balanced pass is corrected to uniform routing: at 16 tokens
// balanced reads min(128, 16·8) = 128 experts, uniform routing
// 128·(1 − (120/128)^16) = 82.42 in expectation, each one less saving
// w = (T(16) − T(1)) / (128 − 8) (saturation at E/k = 16 tokens, 8 experts
// at one token), so T = T(16) − w·(128 − 82.42).
func TestMoERoutingOnATableRow(t *testing.T) {
	path := filepath.Join(sharedDB(t), "data", "h200_sxm", "moe", "vllm", "0.14.0", "moe_perf.parquet")
	for _, dist := range []string{MoERoutingPowerLaw101, MoERoutingPowerLaw12} {
		m := qwenMoERouted(t, dist)
		require.Equal(t, dist, m.hy.moe.dist)
		for _, n := range []int64{16, 1024} {
			assert.InDelta(t, moeRow1(t, path, dist, n)*1e-3, m.hy.moe.Seconds(float64(n)), 1e-15, "%s at %d tokens", dist, n)
		}
		assert.Contains(t, tableNames(m), "moe_perf (fp8_block, "+dist+")", "the routing in the provenance")
	}
	assert.InDelta(t, 0.107738e-3, qwenMoERouted(t, MoERoutingPowerLaw101).hy.moe.Seconds(16), 1e-9, "the row's value")

	m := qwenMoERouted(t, MoERoutingBalanced)
	t1, t16 := moeRow1(t, path, "balanced", 1)*1e-3, moeRow1(t, path, "balanced", 16)*1e-3
	du := 128 * (1 - math.Pow(120.0/128, 16))
	assert.InDelta(t, 82.42, du, 0.01)
	w := (t16 - t1) / (128 - 8)
	assert.InDelta(t, t16-w*(128-du), m.hy.moe.Seconds(16), 1e-15)
	assert.Contains(t, tableNames(m), "moe_perf (fp8_block)", "balanced: the label as before")
}

func tableNames(m *Model) []string {
	var out []string
	for _, s := range m.Sources() {
		out = append(out, s.Table)
	}
	return out
}

// TestMoERoutingBalancedIsToday: "" (the package's zero value) and
// balanced price every pass alike and name the same tables: the balanced
// rows corrected to uniform routing, as before the routing option.
func TestMoERoutingBalancedIsToday(t *testing.T) {
	a, b := qwenMoERouted(t, ""), qwenMoERouted(t, MoERoutingBalanced)
	assert.Equal(t, a.Sources(), b.Sources())
	assert.Equal(t, a.Notes(), b.Notes())
	for _, n := range []int{1, 7, 64, 300} {
		assert.Equal(t, a.PassTime(decodesP(seqLens(n, 2000))), b.PassTime(decodesP(seqLens(n, 2000))), "%d decodes", n)
	}
	for _, x := range []float64{1, 16, 333, 8192} {
		assert.Equal(t, a.hy.moe.Seconds(x), b.hy.moe.Seconds(x))
	}
}

func seqLens(n, kv int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = kv
	}
	return out
}

// TestMoERoutingAuto: auto takes the power law AIConfigurator prices the
// architecture at (MoERoutingFor): Qwen3-MoE α 1.2, so its curve is
// power_law_1.2's; the DeepSeek family and Kimi α 1.01; a dense or unmapped
// architecture balanced.
func TestMoERoutingAuto(t *testing.T) {
	for arch, want := range map[string]string{
		"Qwen3MoeForCausalLM": MoERoutingPowerLaw12, "GptOssForCausalLM": MoERoutingPowerLaw12,
		"MiniMaxM2ForCausalLM": MoERoutingPowerLaw12, "Qwen3_5MoeForConditionalGeneration": MoERoutingPowerLaw12,
		"DeepseekV3ForCausalLM": MoERoutingPowerLaw101, "KimiK25ForConditionalGeneration": MoERoutingPowerLaw101,
		"GlmMoeDsaForCausalLM": MoERoutingPowerLaw101, "DeepseekV32ForCausalLM": MoERoutingPowerLaw101,
		"LlamaForCausalLM": MoERoutingBalanced, "DeepseekV2ForCausalLM": MoERoutingBalanced,
	} {
		assert.Equal(t, want, MoERoutingFor(arch), arch)
		assert.Equal(t, want, resolveMoERouting(MoERoutingAuto, arch), arch)
	}
	assert.Equal(t, MoERoutingBalanced, resolveMoERouting("", "Qwen3MoeForCausalLM"), `"" is balanced`)
	assert.Equal(t, MoERoutingPowerLaw101, resolveMoERouting(MoERoutingPowerLaw101, "Qwen3MoeForCausalLM"), "named wins")
	auto, p12 := qwenMoERouted(t, MoERoutingAuto), qwenMoERouted(t, MoERoutingPowerLaw12)
	assert.Equal(t, MoERoutingPowerLaw12, auto.hy.moe.dist)
	assert.Equal(t, p12.hy.moe.Seconds(100), auto.hy.moe.Seconds(100))
}

// TestMoERoutingFallsBackToBalanced: rows that measured a shape balanced
// only (as h100_sxm's vLLM 0.14.0 rows for a few shapes) give a power-law
// request the balanced curve, corrected to uniform routing as every
// balanced curve; the power-law rows of another shape are not borrowed.
func TestMoERoutingFallsBackToBalanced(t *testing.T) {
	s := moeShape{h: 4096, inter: 1536, k: 8, e: 128, tp: 4, ep: 1}
	other := moeShape{h: 2048, inter: 768, k: 8, e: 128, tp: 4, ep: 1}
	var rows []moeRow
	for _, n := range []int64{1, 16, 64} {
		rows = append(rows, moeRow{Dtype: "fp8_block", Tokens: n, Hidden: s.h, Inter: s.inter, TopK: s.k, Experts: s.e, TP: s.tp, EP: s.ep,
			Distribution: "balanced", Latency: 0.1 + 0.01*float64(n)})
		rows = append(rows, moeRow{Dtype: "fp8_block", Tokens: n, Hidden: other.h, Inter: other.inter, TopK: other.k, Experts: other.e,
			TP: other.tp, EP: other.ep, Distribution: "power_law_1.2", Latency: 0.05})
	}
	sys := &hardware.System{MemBW: 4.8e12, BF16Flops: 989e12, FP8Flops: 1979e12}
	c, ok := moeRouted(rows, "fp8_block", s, sys, model.FP8Block, MoERoutingPowerLaw12)
	require.True(t, ok)
	assert.Equal(t, MoERoutingBalanced, c.dist)
	b, _ := newMoECurve(rows, "fp8_block", s, sys, model.FP8Block, MoERoutingBalanced)
	assert.Equal(t, b.Seconds(16), c.Seconds(16))
	assert.Less(t, c.Seconds(16), 0.26e-3, "corrected below the balanced row (uniform routing reads fewer experts)")
	near, ok := nearestMoEShape(rows, "fp8_block", moeShape{h: 4096, inter: 1536, k: 8, e: 128, tp: 8, ep: 1}, true, MoERoutingPowerLaw12)
	require.True(t, ok)
	assert.Equal(t, other, near, "the nearest shape of the routing's rows, when it has any")
}
