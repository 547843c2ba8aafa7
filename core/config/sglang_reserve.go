package config

import "math"

// The GPU-memory rules of SGLang 0.5.14 and later (SGLangDefaultsPiecewise
// reads them by release).

// sglangRoleReserve is the reserved memory, MiB, of release 0.5.15 and
// later (_handle_gpu_memory_settings, from 0.5.16 reserve_for_graph_mb and
// reserve_for_deepep_a2a_mb; arg_groups/memory_hook.py from 0.5.19), for a
// server of role pcg.Mode without post-capture KV sizing
// (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, false by default):
//
//	512 + 1.5 · activation + tp·pp/8 · 1024 + graphs, at least 10 GiB
//	    when g > 60 GiB, + 2 GiB with DeepEP (not on a prefill server)
//	activation  decode server: max(max_running_requests (given, else
//	            cuda_graph_max_bs) · (speculative_num_draft_tokens or 1),
//	            2048); else max(chunked_prefill_size (max_prefill_tokens
//	            without chunking), 2048)
//	graphs      2 · cuda_graph_max_bs (not on a prefill server, whose
//	            decode graphs are off), DP attention's 3 · max_bs · dp (and
//	            1.5 · max_bs · dp above 300; not on a prefill server), the
//	            prefill graphs' 1.5 GiB (MLA) or 8 MiB per capture size
//	            (not on a decode server), and from 0.5.19 1 GiB for
//	            breakable prefill graphs with DeepEP
func sglangRoleReserve(r Release, g, par float64, dp int, d SGLangGPUDefaults, given *SGLang, pcg SGLangPiecewiseMemory, piecewise bool) float64 {
	const gib = 1024.0
	var act float64
	switch {
	case pcg.Mode == "decode":
		running := d.CUDAGraphMaxBS
		if given != nil && given.MaxRunningRequests > 0 {
			running = given.MaxRunningRequests
		}
		draft := 1
		if given != nil && given.SpeculativeNumDraftTokens > 0 {
			draft = given.SpeculativeNumDraftTokens
		}
		act = math.Max(float64(max(running, 1)*draft), 2048)
	case d.ChunkedPrefillSize > 0:
		act = math.Max(float64(d.ChunkedPrefillSize), 2048)
	default:
		prefill := DefaultSGLangMaxPrefillTokens
		if given != nil && given.MaxPrefillTokens > 0 {
			prefill = given.MaxPrefillTokens
		}
		act = math.Max(float64(prefill), 2048)
	}
	reserved := 512 + act*1.5 + par/8*1024
	bs := float64(d.CUDAGraphMaxBS)
	if pcg.Mode != "prefill" {
		reserved += bs * 2
		if dp > 1 {
			reserved += bs * float64(dp) * 3
			if bs > 300 {
				reserved += bs * float64(dp) * 1.5
			}
		}
	}
	if piecewise && pcg.Mode != "decode" {
		if pcg.MLA {
			reserved += 1.5 * gib
		} else {
			reserved += float64(d.PiecewiseSizes) * 8
		}
		if pcg.Breakable && given.DeepEP() && !r.Before(sglangBreakableDeepEPSince) {
			reserved += gib
		}
	}
	if g > 60*gib {
		reserved = math.Max(reserved, 10*gib)
	}
	if given.DeepEP() && pcg.Mode != "prefill" {
		reserved += 2 * gib
	}
	return reserved
}

// SGLangDraftWeightsInKV reports whether release r charges EAGLE's draft
// weights to the KV pool's budget rather than to a reserve: from 0.5.14,
// whose Scheduler.init_model_worker loads the target's and the draft's
// weights before it sizes the KV pools (init_memory_pools, after
// maybe_init_draft_worker; model_runner_kv_cache_mixin.py
// _profile_available_bytes: "Loaded weights (target + draft)"), and whose
// _handle_gpu_memory_settings drops the draft's reserve (4 GiB in 0.5.10 to
// 0.5.13, 2 GiB before: "eagle draft models and cuda graphs"). Through
// 0.5.13 the target's pool was sized before the draft loaded
// (ModelRunner.init_memory_pool from the target's own initialize).
func SGLangDraftWeightsInKV(r Release) bool { return !r.Before(sglangDraftInKVSince) }

var sglangDraftInKVSince = Release{0, 5, 14}
