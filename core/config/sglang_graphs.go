package config

// Prefill CUDA graphs from 0.5.15: cuda_graph_config's prefill phase,
// whose default backend on CUDA is breakable (model_executor/
// cuda_graph_config.py default_prefill_backend: Backend.BREAKABLE if
// is_cuda(), in the wheels of 0.5.15 to 0.5.23; through 0.5.14 the
// torch.compile piecewise graphs of SGLangPiecewiseByDefault). Every system
// the simulator knows is a CUDA GPU.

// SGLang prefill CUDA graph backends (cuda_graph_config.py Backend).
const (
	SGLangPrefillGraphsOff  = ""
	SGLangBreakableGraphs   = "breakable"
	SGLangTCPiecewiseGraphs = "tc_piecewise"
)

// SGLangBreakableByDefault reports whether release r's prefill passes run
// breakable CUDA graphs by default (SGLangPrefillGraphs decides).
func SGLangBreakableByDefault(r Release) bool { return !r.Before(sglangBreakableSince) }

var sglangBreakableSince = Release{0, 5, 15}

// SGLangPrefillGraphInput is what release 0.5.15 and later's
// _apply_cuda_graph_compatibility and _apply_cuda_graph_disaggregation_roles
// read of a server: its architecture (config.json "architectures"), whether
// it runs MLA attention (use_mla_backend), DeepSeek Sparse Attention (dsa),
// its DP attention ranks, DeepEP (--moe-a2a-backend deepep) and its role
// (Mode: "aggregated", "prefill" or "decode").
type SGLangPrefillGraphInput struct {
	Architecture string
	MLA, DSA     bool
	DP           int
	DeepEP       bool
	Mode         string
}

// SGLangPrefillGraphs is the backend release r (0.5.15 or later) replays
// extend passes with, SGLangPrefillGraphsOff when none: breakable, turned
// off by _disable_breakable_cudagraph_if_incompatible's rules (server_args.py
// through 0.5.18, arg_groups/cuda_graph_hook.py from 0.5.19) that can hold
// for a simulated server:
//
//	0.5.15        MLA attention, DeepSeek-V4, a MoE all-to-all backend, DP
//	              attention, a multimodal model
//	0.5.16        the same, a multimodal model unless on
//	              multimodal_breakable_cuda_graph_supported_model_archs
//	              (Qwen3.5); one on multimodal_piecewise_cuda_graph_
//	              supported_model_archs (Kimi-K2.5, MiniMax-M3 sparse) takes
//	              tc_piecewise instead, off with DP attention or P/D
//	0.5.17        MLA without DSA, Nemotron-H, DeepSeek-V4, an all-to-all
//	              backend other than deepep (DP attention and DeepEP keep them)
//	0.5.18–0.5.19 DeepSeek-V4 (MLA keeps them); Kimi-K2.5 joins the breakable
//	              allowlist
//	0.5.20 on     and KDA linear attention (Kimi-K3); 0.5.22 puts MiniMax-M3
//	              sparse on the breakable allowlist, and 0.5.23 drops the
//	              tc_piecewise switch
//
// and by the server's role: a P/D prefill server's disable_cuda_graph turns
// both phases off in 0.5.15 (arg_groups/pd_disaggregation_hook.py); from
// 0.5.16 a prefill server keeps its prefill graphs and a decode server's are
// off (_apply_cuda_graph_disaggregation_roles). A multimodal model is one of
// configs/model_config.py multimodal_model_archs (Llama-4 only with
// --enable-multimodal, left out here).
func SGLangPrefillGraphs(r Release, in SGLangPrefillGraphInput) string {
	if !SGLangBreakableByDefault(r) {
		return SGLangPrefillGraphsOff
	}
	switch {
	case in.Mode == "decode":
		return SGLangPrefillGraphsOff
	case in.Mode == "prefill" && r.Before(sglangRolesSince):
		return SGLangPrefillGraphsOff
	}
	a := in.Architecture
	multimodal := sglangMultimodalArchitectures[a]
	if multimodal && sglangTCPiecewiseMultimodal(r, a) && !sglangBreakableMultimodal(r, a) {
		if in.DP > 1 || in.Mode != "aggregated" {
			return SGLangPrefillGraphsOff
		}
		return SGLangTCPiecewiseGraphs
	}
	off := a == "DeepseekV4ForCausalLM" || multimodal && !sglangBreakableMultimodal(r, a)
	switch {
	case r.Before(sglangBreakableDPSince): // 0.5.15 and 0.5.16
		off = off || in.MLA || in.DeepEP || in.DP > 1
	case r.Before(sglangBreakableMLASince): // 0.5.17
		off = off || in.MLA && !in.DSA || a == "NemotronHForCausalLM"
	}
	if !r.Before(sglangBreakableKDASince) && a == "KimiK3ForConditionalGeneration" {
		off = true // uses_kda_attention
	}
	if off {
		return SGLangPrefillGraphsOff
	}
	return SGLangBreakableGraphs
}

// The releases at which SGLangPrefillGraphs's rules change.
var (
	sglangRolesSince        = Release{0, 5, 16}
	sglangBreakableDPSince  = Release{0, 5, 17}
	sglangBreakableMLASince = Release{0, 5, 18}
	sglangBreakableKDASince = Release{0, 5, 20}
)

// sglangMultimodalArchitectures are the simulator's architectures on
// model_config.py multimodal_model_archs (0.5.15 to 0.5.23).
var sglangMultimodalArchitectures = map[string]bool{
	"Gemma4ForConditionalGeneration": true, "KimiK25ForConditionalGeneration": true,
	"MiniMaxM3SparseForConditionalGeneration": true, "Qwen3VLForConditionalGeneration": true,
	"Qwen3VLMoeForConditionalGeneration": true, "Qwen3_5ForConditionalGeneration": true,
	"Qwen3_5MoeForConditionalGeneration": true,
}

// sglangBreakableMultimodal: multimodal_breakable_cuda_graph_supported_model_archs
// (none in 0.5.15; Qwen3.5 from 0.5.16, Kimi-K2.5 from 0.5.18, MiniMax-M3
// sparse from 0.5.22).
func sglangBreakableMultimodal(r Release, a string) bool {
	switch a {
	case "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration":
		return !r.Before(sglangRolesSince)
	case "KimiK25ForConditionalGeneration":
		return !r.Before(sglangBreakableMLASince)
	case "MiniMaxM3SparseForConditionalGeneration":
		return !r.Before(Release{0, 5, 22})
	}
	return false
}

// sglangTCPiecewiseMultimodal: multimodal_piecewise_cuda_graph_supported_model_archs,
// which _apply_cuda_graph_compatibility switches to tc_piecewise (0.5.16 to
// 0.5.22: Kimi-K2.5 and MiniMax-M3 sparse).
func sglangTCPiecewiseMultimodal(r Release, a string) bool {
	if r.Before(sglangRolesSince) || !r.Before(Release{0, 5, 23}) {
		return false
	}
	return a == "KimiK25ForConditionalGeneration" || a == "MiniMaxM3SparseForConditionalGeneration"
}
