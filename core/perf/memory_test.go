package perf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sharedConfigs = "../../../shared/data/aic/model_configs"

// TestKVCapacityQwen3_32BFP8OnH200 is the worked example of docs/design.md ("The KV capacity"):
// Qwen3-32B-FP8 on one H200, 8192 batched tokens, utilization 0.9.
func TestKVCapacityQwen3_32BFP8OnH200(t *testing.T) {
	path := filepath.Join(sharedConfigs, "Qwen--Qwen3-32B-FP8_config.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared config %s absent", path)
	}
	arch, err := model.Load(path, "")
	require.NoError(t, err)
	require.Equal(t, model.FP8Block, arch.WeightDtype)
	h200, ok := hardware.Builtin("h200_sxm")
	require.True(t, ok)

	p, err := PlanMemory(arch, h200, 1, model.BF16, 8192, 0.9, 16)
	require.NoError(t, err)
	// usable      ⌊0.9 · 151,397,597,184⌋           = 136,257,837,465
	// weights     (see model.TestWeightBytesPerGPU) =  34,317,271,040
	// activations 2 · 8192 · (64·128) · 11          =   1,476,395,008
	// nccl (t=1) 0, other 3.5 GiB                   =   3,758,096,384
	// budget                                        =  96,706,075,033
	// tokens 96,706,075,033 / 262,144 = 368,904.5 → ⌊/16⌋ = 23,056 blocks.
	assert.Equal(t, int64(136_257_837_465), p.UsableBytes)
	assert.Equal(t, int64(1_476_395_008), p.ActivationBytes)
	assert.Equal(t, int64(96_706_075_033), p.KVBudgetBytes)
	assert.Equal(t, int64(262_144), p.KVBytesPerToken)
	assert.Equal(t, 23_056, p.Blocks)
	assert.InEpsilon(t, 369_000, float64(p.Tokens()), 0.02)

	blocks, err := KVCapacityBlocks(arch, h200, 1, model.BF16, 8192, 0.9, 16)
	require.NoError(t, err)
	assert.Equal(t, p.Blocks, blocks)
}

func TestPlanMemoryByHand(t *testing.T) {
	// h 64, n 8, kv 2, d 8, I 128, V 1000, L 2, bf16.
	arch := &model.Arch{Name: "tiny", Layers: 2, Hidden: 64, Heads: 8, KVHeads: 2, HeadDim: 8,
		Intermediate: 128, Vocab: 1000, WeightDtype: model.BF16}
	sys := &hardware.System{Name: "toy", MemCapacity: 1 << 30, OtherMem: 1 << 20,
		NCCLMem: map[int]int64{1: 0, 2: 2 << 20}}
	p, err := PlanMemory(arch, sys, 2, model.BF16, 100, 0.5, 4)
	require.NoError(t, err)
	// usable 0.5 · 2^30 = 536,870,912.
	// weights t=2: qkv (4+2)·8·64 = 3072, o 64·32 = 2048, gate_up 128·64 = 8192,
	//   down 64·64 = 4096 → 17,408 · 2 layers · 2 B = 69,632; embedding and
	//   logits 2 · 500·64·2 = 128,000 → 197,632.
	// activations 2·100·64·6.5 = 83,200 < 70 MiB → 73,400,320.
	// nccl(2) 2,097,152; other 1,048,576.
	// budget 536,870,912 − 197,632 − 73,400,320 − 2,097,152 − 1,048,576 = 460,127,232.
	// KV per token: 1·8·2·2·2 = 64 B; blocks ⌊460,127,232 / (64·4)⌋ = 1,797,372.
	assert.Equal(t, MemoryPlan{UsableBytes: 536_870_912, WeightBytes: 197_632, ActivationBytes: 73_400_320,
		NCCLBytes: 2_097_152, OtherBytes: 1_048_576, KVBudgetBytes: 460_127_232, KVBytesPerToken: 64,
		Blocks: 1_797_372, BlockSize: 4}, p)
}

// TestPlanMemoryExtensibleByHand: vLLM 0.34.0's extensible KV cache keeps
// max(1 GiB, 0.75 × peak) of the capacity free beyond the peak
// (measure_kv_cache_bytes, vllm/v1/worker/extensible_kv_cache.py).
func TestPlanMemoryExtensibleByHand(t *testing.T) {
	arch := &model.Arch{Name: "tiny", Layers: 2, Hidden: 64, Heads: 8, KVHeads: 2, HeadDim: 8,
		Intermediate: 128, Vocab: 1000, WeightDtype: model.BF16}
	sys := &hardware.System{Name: "toy", MemCapacity: 4 << 30, OtherMem: 1 << 20,
		NCCLMem: map[int]int64{1: 0, 2: 2 << 20}}
	par := model.Parallel{TP: 2, DP: 1}
	// the terms of TestPlanMemoryByHand: weights 197,632, activations
	// 73,400,320 (0.75 × that < 1 GiB: margin 1,073,741,824), nccl 2,097,152,
	// other 1,048,576; KV 64 B per token.
	// u = 1: usable min(4,294,967,296, 4,294,967,296 − 1,073,741,824) = 3,221,225,472;
	// budget 3,221,225,472 − 76,743,680 = 3,144,481,792; blocks ⌊/256⌋ = 12,283,132.
	p, err := PlanMemoryExtensible(arch, sys, par, model.BF16, 100, 0, 1, 4)
	require.NoError(t, err)
	assert.Equal(t, int64(1<<30), p.MarginBytes)
	assert.Equal(t, int64(3_221_225_472), p.UsableBytes)
	assert.Equal(t, int64(3_144_481_792), p.KVBudgetBytes)
	assert.Equal(t, 12_283_132, p.Blocks)
	// u = 0.5 leaves 2 GiB, more than the margin: PlanMemoryParallel's plan
	half, err := PlanMemoryExtensible(arch, sys, par, model.BF16, 100, 0, 0.5, 4)
	require.NoError(t, err)
	want, err := PlanMemoryParallel(arch, sys, par, model.BF16, 100, 0, 0.5, 4)
	require.NoError(t, err)
	want.MarginBytes = 1 << 30
	assert.Equal(t, want, half)
	// max_num_batched_tokens 4,000,000: A = 2·4·10⁶·64·6.5 = 3,328,000,000,
	// margin 0.75·A = 2,496,000,000, above the floor
	big, err := PlanMemoryExtensible(arch, &hardware.System{Name: "big", MemCapacity: 16 << 30, OtherMem: 1 << 20,
		NCCLMem: map[int]int64{2: 2 << 20}}, par, model.BF16, 4_000_000, 0, 1, 4)
	require.NoError(t, err)
	assert.Equal(t, int64(2_496_000_000), big.MarginBytes)
	assert.Equal(t, int64(16<<30)-2_496_000_000, big.UsableBytes)
}

func TestKVCapacityDoesNotFit(t *testing.T) {
	// Llama-3.1-70B bf16 on one H100: weights ≈ 141 GB > 0.9 · 80 GiB.
	arch, _ := model.Builtin("meta-llama/Llama-3.1-70B-Instruct")
	h100, _ := hardware.Builtin("h100_sxm")
	_, err := KVCapacityBlocks(arch, h100, 1, model.BF16, 8192, 0.9, 16)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not fit")
	assert.Contains(t, err.Error(), "weights 131.")
	assert.ErrorIs(t, err, ErrDoesNotFit) // a sweep records the point as infeasible
	// At TP 4 it fits (≈ 33 GiB of weights per GPU).
	blocks, err := KVCapacityBlocks(arch, h100, 4, model.BF16, 8192, 0.9, 16)
	require.NoError(t, err)
	assert.Greater(t, blocks, 0)
}

func TestPlanMemoryErrors(t *testing.T) {
	arch, _ := model.Builtin("Qwen/Qwen3-8B")
	h100, _ := hardware.Builtin("h100_sxm")
	tests := []struct {
		name  string
		tp    int
		kv    model.Dtype
		mnbt  int
		util  float64
		block int
		want  string
	}{
		{"tp", 3, model.BF16, 8192, 0.9, 16, "does not divide"},
		{"kv dtype", 1, model.FP8Block, 8192, 0.9, 16, "kv dtype"},
		{"batched tokens", 1, model.BF16, 0, 0.9, 16, "max_num_batched_tokens = 0"},
		{"utilization", 1, model.BF16, 8192, 1.5, 16, "gpu_memory_utilization = 1.5"},
		{"block size", 1, model.BF16, 8192, 0.9, 0, "block_size = 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanMemory(arch, h100, tc.tp, tc.kv, tc.mnbt, tc.util, tc.block)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := PlanMemory(nil, h100, 1, model.BF16, 8192, 0.9, 16)
	assert.Error(t, err)
}
