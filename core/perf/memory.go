package perf

import (
	"errors"
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// MinActivationBytes is the floor of the activation estimate: 70 MiB.
const MinActivationBytes = 70 << 20

// fusedMoEChunkTokens is vLLM's VLLM_FUSED_MOE_CHUNK_SIZE default: the fused
// MoE kernel works through at most this many tokens at a time, so its
// workspace stops growing there.
const fusedMoEChunkTokens = 32768

// activationFactor is c(t) of the activation estimate, by TP degree
// (docs/design.md, "The KV capacity"): 11, 6.5, 5, 5 for t = 1, 2, 4, 8.
// A degree between listed ones uses the next smaller listed degree.
func activationFactor(tp int) float64 {
	switch {
	case tp >= 4:
		return 5
	case tp >= 2:
		return 6.5
	}
	return 11
}

// MemoryPlan is the per-GPU memory budget of one worker, bytes, and the KV
// blocks it leaves (docs/design.md, "The KV capacity"; vLLM
// Worker.determine_available_memory and get_kv_cache_config).
type MemoryPlan struct {
	// UsableBytes is floor(gpu_memory_utilization × MemCapacity); with the
	// extensible KV cache at most MemCapacity − MarginBytes.
	UsableBytes int64
	// MarginBytes is the extensible KV cache's margin (PlanMemoryExtensible;
	// 0 otherwise).
	MarginBytes int64
	// WeightBytes is model.Arch.WeightBytesPerGPU.
	WeightBytes int64
	// ActivationBytes is the peak activation estimate of a
	// max_num_batched_tokens pass.
	ActivationBytes int64
	// NCCLBytes is System.NCCLMemFor(tp).
	NCCLBytes int64
	// OtherBytes is System.OtherMem.
	OtherBytes int64
	// SlidingBytes is the sliding-window layers' KV of MaxNumSeqs running
	// sequences, reserved off the budget (0 without sliding layers).
	SlidingBytes int64
	// KVBudgetBytes is Usable − Weight − Activation − NCCL − Other − Sliding.
	KVBudgetBytes int64
	// KVBytesPerToken is the KV size of one token on one GPU.
	KVBytesPerToken int64
	// Blocks is floor(KVBudget / KVBytesPerToken / blockSize): KV blocks of
	// the worker (vLLM num_gpu_blocks).
	Blocks int
	// BlockSize is the block size the plan was made for, tokens: the one
	// asked for, or the larger attention block vLLM sets for a hybrid model
	// (Hybrid).
	BlockSize int
	// Hybrid is vLLM's layout of a hybrid model's cache (nil for a model
	// without recurrent state); StateBlocks the blocks each running request
	// holds for its state (Hybrid.StateGroups).
	Hybrid      *HybridKV
	StateBlocks int
}

// Tokens is the KV capacity in tokens, Blocks × BlockSize.
func (p MemoryPlan) Tokens() int64 { return int64(p.Blocks) * int64(p.BlockSize) }

// PlanMemory derives the KV cache capacity of a worker of tp GPUs, per GPU:
//
//	usable = ⌊u · C⌋
//	A      = max(2 · M · n·d · c(t), 70 MiB)
//	budget = usable − W(t) − A − nccl(t) − other
//	blocks = ⌊budget / (kv_bytes_per_token(t) · block_size)⌋
//
// u gpu_memory_utilization (0, 1]; C HBM capacity (bytes); W(t)
// model.Arch.WeightBytesPerGPU; M max_num_batched_tokens; n·d the attention
// width (elements, whole model; the fall of c with t carries the TP split);
// c(t) = 11, 6.5, 5, 5 for t = 1, 2, 4, 8; nccl(t) and other from the system
// spec; kv_bytes_per_token(t) = ceil(kv/t)·d·L·2·b_kv (model.Arch.KVBytesPerToken).
// Source: docs/design.md ("The KV capacity"), after AIConfigurator's
// memory model of vLLM. Each GPU of the worker holds its share of the KV heads
// of the same tokens, so the per-GPU quotient is the worker's block count,
// as vLLM reports num_gpu_blocks.
//
// Errors: invalid inputs (each named), or a budget too small for one block
// ("does not fit", naming every term in GiB; errors.Is(err, ErrDoesNotFit)).
func PlanMemory(arch *model.Arch, sys *hardware.System, tp int, kvDtype model.Dtype,
	maxNumBatchedTokens int, gpuMemoryUtilization float64, blockSize int) (MemoryPlan, error) {
	return PlanMemoryParallel(arch, sys, model.Parallel{TP: tp, DP: 1}, kvDtype, maxNumBatchedTokens, 0,
		gpuMemoryUtilization, blockSize)
}

// PlanMemoryParallel is PlanMemory for one DP rank of a layout p (each rank
// has its own KV cache; its GPUs hold the weights of
// model.Arch.WeightBytesPerGPUParallel), with the terms a mixture-of-experts
// or sliding-window model adds:
//
//	A      = max(2 · M · n·d · c(t), 70 MiB, A_moe)
//	A_moe  = min(X, 32768) · k · (3·I_g + h) · 2          (MoE models)
//	S      = maxNumSeqs · SlidingKVBytesPerSequence(t)    (sliding layers)
//	budget = usable − W(p) − A − nccl(TP·DP) − other − S
//
// A_moe is vLLM's fused-MoE workspace (intermediate caches of X·k rows of
// 2·I_g, I_g and h bf16 elements, X = DP·M tokens gathered, chunked at
// VLLM_FUSED_MOE_CHUNK_SIZE = 32768); the peak is taken as the larger of the
// attention and MoE phases. S reserves every sequence slot's sliding window
// (vLLM shares one block pool between full and sliding layers and frees a
// sliding layer's blocks as its window moves, so a full cache holds at most
// max_num_seqs windows). maxNumSeqs only matters with sliding layers. The
// NCCL buffers follow the GPUs of the MoE collectives (TP×DP; TP for a
// dense model, whose DP ranks are separate engines). A dense decoder
// at DP 1 gives exactly PlanMemory's plan.
func PlanMemoryParallel(arch *model.Arch, sys *hardware.System, par model.Parallel, kvDtype model.Dtype,
	maxNumBatchedTokens, maxNumSeqs int, gpuMemoryUtilization float64, blockSize int) (MemoryPlan, error) {
	return planMemory(arch, sys, par, kvDtype, maxNumBatchedTokens, maxNumSeqs, gpuMemoryUtilization, blockSize, false)
}

// Extensible KV cache margins of vLLM 0.34.0 on CUDA
// (vllm/v1/worker/extensible_kv_cache.py): KV_CACHE_MARGIN_FLOOR_BYTES 1 GiB
// and KV_CACHE_MARGIN_FRACTION 0.75 of the transient peak.
const (
	ExtensibleKVMarginFloorBytes = 1 << 30
	ExtensibleKVMarginFraction   = 0.75
)

// PlanMemoryExtensible is PlanMemoryParallel for vLLM's extensible KV cache
// (0.34.0's default on CUDA), sized from the memory measured after warmup
// and CUDA-graph capture (measure_kv_cache_bytes in
// vllm/v1/worker/extensible_kv_cache.py):
//
//	available = min(requested − non_kv_used, headroom − margin) − peak
//	margin    = max(1 GiB, 0.75 · peak)
//
// requested ⌈u · C⌉ (request_memory, vllm/v1/worker/utils.py), headroom the
// device's free memory plus the cache's own, C − non_kv_used; non_kv_used is
// W + nccl + other here and the transient peak the activation estimate A,
// so
//
//	usable = min(⌊u · C⌋, C − max(1 GiB, ⌊0.75 · A⌋))
//	budget = usable − W − A − nccl − other − S
//
// With u = 1 (the resolved default) the margin decides; with an explicit
// u below 1 the plan is PlanMemoryParallel's unless the margin is larger
// than the memory u leaves.
func PlanMemoryExtensible(arch *model.Arch, sys *hardware.System, par model.Parallel, kvDtype model.Dtype,
	maxNumBatchedTokens, maxNumSeqs int, gpuMemoryUtilization float64, blockSize int) (MemoryPlan, error) {
	return planMemory(arch, sys, par, kvDtype, maxNumBatchedTokens, maxNumSeqs, gpuMemoryUtilization, blockSize, true)
}

func planMemory(arch *model.Arch, sys *hardware.System, par model.Parallel, kvDtype model.Dtype,
	maxNumBatchedTokens, maxNumSeqs int, gpuMemoryUtilization float64, blockSize int, extensible bool) (MemoryPlan, error) {
	if arch == nil || sys == nil {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan needs a model and a system")
	}
	tp := par.TP
	if par.DP < 1 {
		par.DP = 1
	}
	if err := arch.ValidateParallel(par); err != nil {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: %w", err)
	}
	if kvDtype != model.BF16 && kvDtype != model.FP8 {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: kv dtype %q, want %s or %s", kvDtype, model.BF16, model.FP8)
	}
	if maxNumBatchedTokens <= 0 {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: max_num_batched_tokens = %d, want > 0", maxNumBatchedTokens)
	}
	if !(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1) {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: gpu_memory_utilization = %g, want in (0, 1]", gpuMemoryUtilization)
	}
	if blockSize <= 0 {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: block_size = %d, want > 0", blockSize)
	}
	if sys.MemCapacity <= 0 {
		return MemoryPlan{}, fmt.Errorf("perf: memory plan: system %s mem_capacity = %d, want > 0", sys.Name, sys.MemCapacity)
	}

	act := int64(math.Ceil(2 * float64(maxNumBatchedTokens) * float64(arch.Heads*arch.HeadDim) * activationFactor(tp)))
	if act < MinActivationBytes {
		act = MinActivationBytes
	}
	if m := arch.MoE; m != nil {
		x := math.Min(float64(par.DP*maxNumBatchedTokens), fusedMoEChunkTokens)
		ig := float64((m.Intermediate + par.MoETP() - 1) / par.MoETP())
		act = max(act, int64(math.Ceil(x*float64(m.TopK)*(3*ig+float64(arch.ExpertHidden()))*2)))
	}
	ncclGPUs := tp // a dense model's DP ranks are separate engines
	if arch.MoE != nil {
		ncclGPUs = par.GPUs() // the MoE layers' collectives span every rank
	}
	p := MemoryPlan{
		UsableBytes:     int64(math.Floor(gpuMemoryUtilization * float64(sys.MemCapacity))),
		WeightBytes:     arch.WeightBytesPerGPUParallel(par),
		ActivationBytes: act,
		NCCLBytes:       sys.NCCLMemFor(ncclGPUs),
		OtherBytes:      sys.OtherMem,
		SlidingBytes:    int64(maxNumSeqs) * arch.SlidingKVBytesPerSequence(tp, kvDtype.Bytes(), blockSize),
		KVBytesPerToken: arch.KVBytesPerToken(tp, kvDtype.Bytes()),
		BlockSize:       blockSize,
	}
	if extensible {
		p.MarginBytes = max(ExtensibleKVMarginFloorBytes, int64(math.Floor(ExtensibleKVMarginFraction*float64(act))))
		p.UsableBytes = min(p.UsableBytes, sys.MemCapacity-p.MarginBytes)
	}
	p.KVBudgetBytes = p.UsableBytes - p.WeightBytes - p.ActivationBytes - p.NCCLBytes - p.OtherBytes - p.SlidingBytes
	blockBytes := p.KVBytesPerToken * int64(blockSize)
	hy, hybrid, err := VLLMHybridKV(arch, sys, tp, kvDtype, blockSize)
	if err != nil {
		return MemoryPlan{}, err
	}
	if hybrid {
		// one block id holds a page in each of GroupSize tensors; a token
		// block takes one in each attention group (HybridKV)
		p.Hybrid, p.BlockSize = &hy, hy.BlockSize
		blockBytes = hy.BlockBytes() * int64(hy.AttnGroups)
		p.StateBlocks = (hy.StateGroups + hy.AttnGroups - 1) / hy.AttnGroups
	}
	if p.KVBudgetBytes > 0 {
		p.Blocks = int(p.KVBudgetBytes / blockBytes)
	}
	if p.Blocks < 1 {
		const gib = 1 << 30
		layout := fmt.Sprintf("TP %d", tp)
		if par.DP > 1 || par.EP {
			layout = par.String()
		}
		sliding := ""
		if p.SlidingBytes > 0 {
			sliding = fmt.Sprintf(" − sliding windows %.2f GiB", float64(p.SlidingBytes)/gib)
		}
		usable := fmt.Sprintf("%.2f × %.2f GiB", gpuMemoryUtilization, float64(sys.MemCapacity)/gib)
		if p.MarginBytes > 0 {
			usable = fmt.Sprintf("at most %s and the capacity less the extensible KV cache's margin %.2f GiB", usable, float64(p.MarginBytes)/gib)
		}
		return p, doesNotFit{fmt.Sprintf("perf: model %s does not fit on %s at %s: usable %.2f GiB (%s) − weights %.2f GiB − activations %.2f GiB − nccl %.2f GiB − other %.2f GiB%s = KV budget %.2f GiB, less than one block of %d tokens (%d bytes)",
			arch.Name, sys.Name, layout,
			float64(p.UsableBytes)/gib, usable,
			float64(p.WeightBytes)/gib, float64(p.ActivationBytes)/gib, float64(p.NCCLBytes)/gib,
			float64(p.OtherBytes)/gib, sliding, float64(p.KVBudgetBytes)/gib, p.BlockSize, blockBytes)}
	}
	return p, nil
}

// ErrDoesNotFit is matched (errors.Is) by PlanMemory's error when the model
// leaves no room for one KV block: a deployment vLLM would refuse to start.
var ErrDoesNotFit = errors.New("perf: the model does not fit")

// doesNotFit is PlanMemory's "does not fit" error: its message names every
// memory term; it matches ErrDoesNotFit.
type doesNotFit struct{ msg string }

func (e doesNotFit) Error() string        { return e.msg }
func (e doesNotFit) Is(target error) bool { return target == ErrDoesNotFit }

// KVCapacityBlocks is PlanMemory(…).Blocks: the KV blocks of a worker of tp
// GPUs. Errors as PlanMemory.
func KVCapacityBlocks(arch *model.Arch, sys *hardware.System, tp int, kvDtype model.Dtype,
	maxNumBatchedTokens int, gpuMemoryUtilization float64, blockSize int) (int, error) {
	p, err := PlanMemory(arch, sys, tp, kvDtype, maxNumBatchedTokens, gpuMemoryUtilization, blockSize)
	if err != nil {
		return 0, err
	}
	return p.Blocks, nil
}
