package parity

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/perf/aic"
)

// Shape is one batch shape of the grid.
type Shape struct {
	Name  string
	Batch perf.Batch
}

// Shapes are the batch shapes priced at every grid point, for a perf model
// with the given decode windows (perf.DecodeWindows: the decodes' window sums
// are filled for them).
func Shapes(windows []int) []Shape {
	return []Shape{
		{"prefill_2048", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 2048}}, Samplers: 1}},
		{"prefill_512_after_1536", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 512, PrefixTokens: 1536}}, Samplers: 1}},
		{"prefill_4x1024", perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024}, {NewTokens: 1024}, {NewTokens: 1024}, {NewTokens: 1024}}, Samplers: 4}},
		{"decode_1_kv100", same(perf.Batch{Samplers: 1}, 1, 100, windows)},
		{"decode_32_kv1024", same(perf.Batch{Samplers: 32}, 32, 1024, windows)},
		{"decode_256_kv3000", same(perf.Batch{Samplers: 256}, 256, 3000, windows)},
		{"mixed_1024_plus_16_kv2048", same(perf.Batch{Prefill: []perf.Chunk{{NewTokens: 1024, PrefixTokens: 0}}, Samplers: 16}, 16, 2048, windows)},
	}
}

// same adds n decodes of kv tokens each to b (with their window sums).
func same(b perf.Batch, n, kv int, windows []int) perf.Batch {
	for range n {
		b.AddDecodeWindows(kv, windows)
	}
	return b
}

// Point is one (model, weights, system, layout) deployment of the grid.
type Point struct {
	Model   string
	Weights model.Dtype
	System  string
	TP      int
	DP      int  // data-parallel ranks (0 or 1: none); MoE points only
	EP      bool // expert parallelism; MoE points only
}

// Key names a point and source in the golden file ("…|tpN", then "|dpN"
// and "|ep" when set).
func (p Point) Key(source string) string {
	k := fmt.Sprintf("%s|%s|%s|%s|tp%d", source, p.Model, p.Weights, p.System, p.TP)
	if p.DP > 1 {
		k += fmt.Sprintf("|dp%d", p.DP)
	}
	if p.EP {
		k += "|ep"
	}
	return k
}

// Points is the deployment grid.
func Points() []Point {
	var out []Point
	for _, m := range []struct {
		name string
		w    model.Dtype
	}{
		{"Qwen/Qwen3-32B", model.BF16}, {"Qwen/Qwen3-32B-FP8", model.FP8Block},
		{"meta-llama/Meta-Llama-3.1-8B", model.BF16}, {"meta-llama/Meta-Llama-3.1-8B", model.FP8},
	} {
		for _, sys := range []string{"h100_sxm", "h200_sxm"} {
			for _, tp := range []int{1, 2, 8} {
				out = append(out, Point{Model: m.name, Weights: m.w, System: sys, TP: tp})
			}
		}
	}
	// mixture-of-experts shapes and layouts (a single batch stands for every
	// DP rank's)
	return append(out,
		Point{Model: "Qwen/Qwen3-235B-A22B-FP8", Weights: model.FP8Block, System: "h200_sxm", TP: 4},
		Point{Model: "Qwen/Qwen3-235B-A22B-FP8", Weights: model.FP8Block, System: "h200_sxm", TP: 2, EP: true},
		Point{Model: "Qwen/Qwen3-235B-A22B-FP8", Weights: model.FP8Block, System: "h200_sxm", TP: 1, DP: 2},
		Point{Model: "MiniMaxAI/MiniMax-M2.5", Weights: model.FP8Block, System: "h200_sxm", TP: 8, EP: true},
		Point{Model: "openai/gpt-oss-120b", Weights: model.BF16, System: "h200_sxm", TP: 1},
		Point{Model: "openai/gpt-oss-120b", Weights: model.BF16, System: "h200_sxm", TP: 2, DP: 2, EP: true},
	)
}

// AICVersion is the table version the aic goldens use.
const AICVersion = "0.24.0"

// Models builds both perf sources of a point: the roofline with the spec's
// default parameters (core/config/defaults.go), and aic on the tables under
// db (nil when db is "") with no engine-step overhead (kernels only) and the
// default token budget.
func Models(p Point, modelDir, db string) (roof, measured perf.Model, err error) {
	arch, err := model.Load(p.Model, modelDir)
	if err != nil {
		return nil, nil, err
	}
	sys, ok := hardware.Builtin(p.System)
	if !ok {
		return nil, nil, fmt.Errorf("unknown system %s", p.System)
	}
	params := perf.RooflineParams{ComputeEfficiency: config.DefaultComputeEfficiency,
		MemoryEfficiency: config.DefaultMemoryEfficiency, PassOverheadUs: config.DefaultPassOverheadUs,
		SequenceOverheadUs: config.DefaultPerSequenceOverheadUs, LayerLatencyUs: config.DefaultLayerLatencyUs,
		MoELatencyUs:       config.DefaultMoELatencyUs,
		AllReduceLatencyUs: perf.CustomAllReduceLatencyUs}
	rl, err := perf.NewRoofline(arch, sys, perf.RooflineOptions{TP: p.TP, DP: p.DP, EP: p.EP, WeightDtype: p.Weights, Params: params})
	if err != nil {
		return nil, nil, err
	}
	if db == "" {
		return rl, nil, nil
	}
	m, err := aic.New(arch, sys, aic.Options{Database: db, Backend: config.BackendVLLM, Version: AICVersion, TP: p.TP, DP: p.DP, EP: p.EP,
		WeightDtype: p.Weights, MaxTokens: config.LargeGPUMaxNumBatchedTokens, // vLLM's default on these large GPUs
		// and its CUDA graphs as the replay sets them (perf.CUDAGraphMaxTokens of the same defaults)
		CUDAGraphMaxTokens: perf.CUDAGraphMaxTokens(config.LargeGPUMaxNumSeqs, config.LargeGPUMaxNumBatchedTokens),
		// and the experts at the spec's default routing (engine.perf.moe_routing)
		MoERouting: config.DefaultMoERouting})
	if err != nil {
		return nil, nil, err
	}
	return rl, m, nil
}
