package replay

import (
	"fmt"
	"math"
	"slices"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/model"
)

// trtllmWindows is how TensorRT-LLM's KV cache manager lays out a worker's
// cache by attention window (kv_cache_config.max_attention_window), per GPU:
//
//   - one window (the list absent, as every recipe of the rows leaves it, or
//     one size): one block pool, every layer full-length, a model's
//     sliding-window layers too. The window of such a layer is the attention
//     op's alone (gpt-oss: modeling_gpt_oss.py passes its 128 tokens per
//     call as attention_window_size), and KvCacheCreator treats the cache as
//     variable sliding-window attention (VSWA) only when the list holds two
//     sizes (_util.py: is_vswa = len(set(max_attention_window)) > 1). A
//     token costs every layer: T = L · b;
//   - two sizes or more (VSWA): a pool per window, layer i in the pool of
//     window min(w[i mod n], max_seq_len) (BaseKVCacheManager::
//     groupLayersByWindowSize), and from 1.2 each of the N pools gets the
//     same 1/N of the memory ("allocating identical number of blocks for
//     all layers to achieve identical performance",
//     BaseKVCacheManager::calculateMaxNumBlocks in cpp/tensorrt_llm/
//     batch_manager/kvCacheManager.cpp; the same equal shares in
//     resource_manager.py's VSWA path). The simulation runs the pool of the
//     largest window, the one whose blocks grow with the whole sequence:
//     T = L_max · b tokens' bytes, N · T the memory a token of it takes.
//
// b = ceil(kv/t) · d · 2 · b_kv (one layer's K and V of a token on one GPU).
// The smaller windows' pools are not simulated: from 1.2 each holds
// 1/N of the memory in tokens of its layers, of which a running sequence keeps
// about its window (gpt-oss at TP 1 on an H200: as many tokens as the full
// pool, some 6,000 sequences of a 128-token window and a block). Before 1.2
// the memory was split by window × layers (BlockManager::calculateWindowSizeToShare, used by
// calculateMaxNumBlocks then), which leaves a 128-token window's pool a few
// sequences at a 131,072-token max_seq_len; that rule is refused, not
// modelled, as are windows on a model without plain attention layers.
type trtllmWindows struct {
	// pools is N, the distinct windows (1: one pool of every layer).
	pools int
	// tokenBytes is T, one token of the simulated pool on one GPU, bytes.
	tokenBytes int64
	// allBytes is one token of every layer (the KV size per token
	// KvCacheCreator turns kv_cache_config.max_tokens into memory with).
	allBytes int64
}

// trtllmEqualSharesSince is the release whose KV cache manager gives each
// window's pool the same share of the memory (the 1.2 line; the
// window-weighted split of 1.0 and 1.1 is refused).
var trtllmEqualSharesSince = config.Release{Major: 1, Minor: 2}

// planTRTLLMWindows lays out the cache of a TensorRT-LLM worker of tp GPUs
// (trtllmWindows). ok is false when the layout is the one the memory plan
// already prices: a model without sliding-window layers and no
// max_attention_window. maxSeqLen is max_seq_len, or the model's
// max_position_embeddings; field names the block's kv_cache_config.
func planTRTLLMWindows(rel config.Release, t *config.TRTLLM, arch *model.Arch, tp int, kvBytes float64, maxSeqLen int,
	field string) (w trtllmWindows, ok bool, err error) {
	windows := t.KVCacheConfig.MaxAttentionWindow
	if arch.SlidingLayers() == 0 && len(windows) == 0 {
		return trtllmWindows{}, false, nil
	}
	f := field + "max_attention_window"
	if arch.MLA != nil || arch.DSV4 != nil || arch.Sparse != nil || arch.LinearLayers() > 0 || arch.ChunkedLayers() > 0 {
		return trtllmWindows{}, false, &config.Error{Field: f, Msg: fmt.Sprintf(
			"%s's attention layers are not plain full or sliding-window attention: TensorRT-LLM's attention windows are modelled for those alone", arch.Name)}
	}
	all := arch.LayersKVBytesPerToken(tp, arch.Layers, kvBytes)
	w = trtllmWindows{pools: 1, tokenBytes: all, allBytes: all}
	if len(windows) == 0 {
		return w, true, nil
	}
	perWindow := map[int]int{} // layers of each window
	for i := 0; i < arch.Layers; i++ {
		perWindow[min(windows[i%len(windows)], maxSeqLen)]++
	}
	if len(perWindow) == 1 {
		return w, true, nil
	}
	if rel.Before(trtllmEqualSharesSince) {
		return trtllmWindows{}, false, &config.Error{Field: f, Msg: fmt.Sprintf(
			"%d window sizes under TensorRT-LLM %s are not modelled: its KV cache manager splits the memory between the windows' pools by window × layers (BlockManager::calculateWindowSizeToShare); from %s each pool gets an equal share, which is modelled",
			len(perWindow), rel, trtllmEqualSharesSince)}
	}
	sizes := make([]int, 0, len(perWindow))
	for s := range perWindow {
		sizes = append(sizes, s)
	}
	w.pools, w.tokenBytes = len(perWindow), arch.LayersKVBytesPerToken(tp, perWindow[slices.Max(sizes)], kvBytes)
	return w, true, nil
}

// trtllmMaxSeqLen is the max_seq_len the windows are clamped to: the
// pool's max_model_len, else the model's max_position_embeddings.
func trtllmMaxSeqLen(lim limits, arch *model.Arch) int {
	if lim.maxModelLen != 0 {
		return lim.maxModelLen
	}
	return arch.MaxPositionEmbeddings
}

// blocks is the simulated pool's blocks of tokensPerBlock tokens from the
// budget the profiling run leaves (budgetBytes, one GPU) at
// free_gpu_memory_fraction f, with kv_cache_config.max_tokens m (0: none):
//
//	one pool:  ⌊f · budget / (T · B)⌋, at most ⌊m / B⌋ (limits.kvBlocksOfFree)
//	N pools:   ⌊min(f · budget, m · L · b) / (N · T · B)⌋
//
// With VSWA KvCacheCreator caps the memory at max_tokens tokens of every
// layer (_util.py) and the C++ manager divides that memory, not max_tokens,
// between the pools ("kv_cache_config.max_tokens is not effective in VSWA
// scheme", calculateMaxNumBlocks).
func (w trtllmWindows) blocks(lim limits, budgetBytes int64) int {
	if w.pools == 1 {
		return lim.kvBlocksOfFree(budgetBytes, w.tokenBytes)
	}
	mem := float64(budgetBytes) * lim.memFraction
	if lim.maxKVTokens > 0 {
		mem = math.Min(mem, float64(lim.maxKVTokens)*float64(w.allBytes))
	}
	return int(mem / float64(int64(w.pools)*w.tokenBytes*int64(lim.blockSize)))
}
