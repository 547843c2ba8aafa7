package perf

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
)

// HybridKV is how vLLM's hybrid KV cache manager lays out a model whose
// layers keep a constant recurrent state beside their attention KV cache
// (model.Arch.StateBytesPerSequence > 0: Gated DeltaNet, Mamba), one DP
// rank's worth on each GPU (vllm/v1/core/kv_cache_utils.py
// _get_kv_cache_groups_uniform_page_size and get_kv_cache_config_from_groups,
// vllm/model_executor/models/config.py HybridAttentionMambaModelConfig):
//
//   - every layer's cache is made of pages of one size: an attention page
//     holds BlockSize tokens of one layer (a = ⌈kv/t⌉·d·2·b_kv bytes a
//     token), a state page one request's state of one layer (s bytes),
//     padded to the attention page. vLLM raises the attention block size
//     until a page holds a state: BlockSize = A·⌈s / (A·a)⌉ tokens, A the
//     attention kernel's block alignment (16; 32 for head_dim 256 on sm100
//     GPUs, FlashInfer's limit), or the spec's block_size when larger;
//   - the layers are grouped by kind into KV cache groups of GroupSize
//     layers each (the smaller kind's count, or the larger's when it is
//     under 1.25 times the smaller): AttnGroups groups of attention layers
//     and StateGroups of state layers, all drawing from one block pool;
//   - the pool has ⌊budget / (PageBytes · GroupSize)⌋ blocks (each block id
//     is one page in each of GroupSize tensors);
//   - a request holds ⌈tokens / BlockSize⌉ blocks in each attention group
//     and one block in each state group (its running state; MambaManager
//     without prefix caching, "none" mode; in "align" mode the running
//     state too, plus a block for the next step's state while a step
//     crosses a block boundary, which is not counted).
//
// Qwen3.5-27B on one GPU, bf16 KV: a = 4·256·2·2 = 4,096 bytes, s =
// 3,207,168 (model.LinearAttention.StateBytesPerLayer), BlockSize =
// 16·⌈3,207,168 / 65,536⌉ = 784 (vLLM logs "Setting attention block size to
// 784 tokens"), 16 full-attention and 48 linear layers: GroupSize 16, one
// attention group, three state groups.
//
// An MLA model (Kimi-K3: 24 MLA and 69 KDA layers) pages one latent of
// LatentBytes a token with 64-token alignment: at TP 8 with an fp8 cache
// a = 576, s = 814,080, BlockSize = 64·⌈814,080 / 36,864⌉ = 1,472,
// GroupSize 24, one attention group, three state groups.
type HybridKV struct {
	// BlockSize is the attention block size vLLM runs with, tokens.
	BlockSize int
	// PageBytes is one page of one layer, bytes: BlockSize · a.
	PageBytes int64
	// StateBytesPerLayer is one request's state in one state layer (s),
	// bytes, before padding to PageBytes.
	StateBytesPerLayer int64
	// GroupSize is the layers of each KV cache group.
	GroupSize int
	// AttnGroups and StateGroups count the KV cache groups of each kind.
	AttnGroups, StateGroups int
}

// BlockBytes is one block id's memory on one GPU: PageBytes · GroupSize.
func (h HybridKV) BlockBytes() int64 { return h.PageBytes * int64(h.GroupSize) }

// sm100Systems are the systems whose GPUs are compute capability 10.0
// (B200, GB200), where vLLM aligns a hybrid model's attention block to 32
// tokens for head_dim 256 (FlashInfer does not support 16 there).
var sm100Systems = map[string]bool{"b200_sxm": true, "gb200": true}

// VLLMHybridKV returns vLLM's layout of a hybrid model's cache on system
// sys at tensor parallelism tp with KV dtype kv, for the spec's block size
// (HybridKV), and false for a model without recurrent state.
func VLLMHybridKV(arch *model.Arch, sys *hardware.System, tp int, kv model.Dtype, blockSize int) (HybridKV, bool, error) {
	s := arch.StateBytesPerSequence(tp)
	if s == 0 {
		return HybridKV{}, false, nil
	}
	lin := arch.LinearLayers()
	attn := arch.FullKVLayers()
	if attn == 0 || arch.SlidingLayers() > 0 {
		return HybridKV{}, true, fmt.Errorf("perf: model %s: a cache of %d state layers beside %d full-attention and %d sliding-window layers is not simulated (vLLM's hybrid manager is modelled for state and full-attention layers)",
			arch.Name, lin, attn, arch.SlidingLayers())
	}
	perLayer := s / int64(lin)
	tok := int64(float64(arch.KVHeadsPerGPU(tp)*arch.HeadDim*2) * kv.Bytes())
	align := int64(16)
	switch {
	case arch.MLA != nil:
		// an MLA layer's page holds one latent a token (MLAAttentionSpec), and
		// the MLA kernels want 64-token blocks (HybridAttentionMambaModelConfig:
		// kernel_block_alignment_size 64, 128 for CUTLASS_MLA, not modelled)
		tok, align = int64(arch.MLA.LatentBytes(kv.Bytes())), 64
	case arch.HeadDim == 256 && sys != nil && sm100Systems[sys.Name]:
		align = 32
	}
	bs := align * ((perLayer + align*tok - 1) / (align * tok))
	h := HybridKV{BlockSize: int(max(bs, int64(blockSize))), StateBytesPerLayer: perLayer}
	h.PageBytes = int64(h.BlockSize) * tok
	small, large := min(attn, lin), max(attn, lin)
	h.GroupSize = small
	if float64(large) < 1.25*float64(small) {
		h.GroupSize = large
	}
	h.AttnGroups = (attn + h.GroupSize - 1) / h.GroupSize
	h.StateGroups = (lin + h.GroupSize - 1) / h.GroupSize
	return h, true, nil
}
