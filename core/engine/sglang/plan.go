package sglang

import (
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/model"
)

// cudaContextBytes is the memory a GPU holds before SGLang loads the weights
// (the CUDA context and the torch runtime), besides the NCCL buffers: about
// 0.5 GiB on Hopper with CUDA 12.
const cudaContextBytes = 512 << 20

// hashBlockTokens is the prefix hash block of a page-size-1 pool: the radix
// tree matches to the token within it through the known partial block (the
// workload's content ids fix tokens in 16-token steps or coarser).
const hashBlockTokens = 16

// New-token-ratio parameters (python/sglang/srt/environ.py).
const (
	initNewTokenRatio       = 0.7  // SGLANG_INIT_NEW_TOKEN_RATIO
	minNewTokenRatioFactor  = 0.14 // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
	newTokenRatioDecaySteps = 600  // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
)

// Plan sizes one pool of SGLang servers (engine.Planner):
//
//	KV pool   max_total_num_tokens = ⌊(f·M − W − pre) / kv⌋, page-aligned,
//	          at most max_total_tokens (ModelRunner.profile_max_num_token:
//	          the memory left after the weights minus (1 − f)·M)
//	requests  the request pool min(max(⌊tokens / context_length · 512⌋,
//	          2048), 4096) (or max_running_requests when given), and
//	          max_running_requests = min(given, or tokens / 2, that pool)
//	          (ModelRunner.init_memory_pool, TpModelWorker); from 0.5.10 the
//	          pool is max_running_requests (reqPoolRuleSince)
//	lengths   max_req_len = min(context_length − 1, tokens − 1),
//	          max_req_input_len = max_req_len − 5
//
// with f mem_fraction_static (config.SGLangDefaults), M the GPU's memory, W
// the weights per GPU, pre the memory in use before them (the CUDA context,
// cudaContextBytes, and the NCCL buffers of the system spec) and kv the KV
// bytes of a token per GPU. A decode server of P/D runs without the radix
// cache (server_args.py: the decode mode forces disable_radix_cache).
func (Family) Plan(in engine.PoolInput) (engine.PoolPlan, error) {
	e := &in.Spec.Engine
	g := e.SGLangOf(in.Name)
	if g == nil {
		g = &config.SGLang{MaxPrefillTokens: config.DefaultSGLangMaxPrefillTokens, PageSize: config.DefaultSGLangPageSize,
			SchedulePolicy: config.DefaultSGLangSchedulePolicy, ScheduleConservativeness: config.DefaultSGLangScheduleConservativeness}
	}
	// DP attention (--enable-dp-attention --dp-size dp, the pool's
	// data_parallel_size): the server's tp × dp GPUs (SGLang's --tp-size) are
	// dp attention ranks of tp GPUs, each its own scheduler and token pool,
	// the MoE and dense MLP layers spanning them all (layers/dp_attention.py);
	// server_args.py _handle_data_parallelism divides chunked_prefill_size by
	// dp and scales schedule_conservativeness by 0.3, and each rank runs at
	// most max_running_requests // dp requests (TpModelWorker).
	dp := max(in.DP, 1)
	rel := e.SGLangRelease()
	spec := g.Speculative()
	// _handle_piecewise_cuda_graph runs before _handle_gpu_memory_settings,
	// which reserves the graphs' memory (from 0.5.10)
	pcg := piecewiseMemory(rel, in, g, spec, dp)
	d := config.SGLangDefaultsPiecewise(rel, in.Sys.MemCapacity, in.TP*dp, 1, dp, g, pcg)
	kvBytes := in.Arch.KVBytesPerToken(in.TP, in.KVDtype.Bytes())
	if spec && in.Arch.Layers > 0 {
		// EAGLE's draft model keeps its own KV pool of the same tokens
		// (model_runner.py: the draft worker's token_to_kv_pool); the
		// draft is one decoder layer of the target's shape (DeepSeek's
		// NextN layer, an EAGLE head)
		kvBytes += kvBytes / int64(in.Arch.Layers)
	}
	weights := in.Arch.WeightBytesPerGPUParallel(model.Parallel{TP: in.TP, DP: dp, EP: in.EP})
	if spec && in.Arch.Layers > 0 && config.SGLangDraftWeightsInKV(rel) {
		// the draft's weights come out of the KV budget (from 0.5.14): one
		// decoder layer of the target's shape, as its KV above, its
		// embedding and lm_head the target's (eagle_worker_v2.py
		// set_embed_and_head); the target's weights over its layers, which
		// counts 1/layers of the embedding and lm_head too (DeepSeek-V3 at
		// TP 8: 2 × 129,280 × 7,168 × 2 B / 8 / 61, about 8 MB)
		weights += weights / int64(in.Arch.Layers)
	}
	pre := int64(cudaContextBytes) + in.Sys.NCCLMemFor(in.TP*dp)
	rest := d.MemFractionStatic*float64(in.Sys.MemCapacity) - float64(weights) - float64(pre)
	mamba, err := mambaPool(in, g, rest, dp)
	if err != nil {
		return engine.PoolPlan{}, err
	}
	rest -= float64(mamba.size) * float64(mamba.perReq)
	tokens := int64(0)
	if rest > 0 {
		tokens = int64(math.Floor(rest / float64(kvBytes)))
	}
	if g.MaxTotalTokens > 0 {
		tokens = min(tokens, int64(g.MaxTotalTokens))
	}
	page := g.PageSize
	dsaPage := config.SGLangDSAPageSize(rel, in.Arch.Architecture, in.Arch.MLA != nil && in.Arch.MLA.Indexer != nil)
	if dsaPage > 0 {
		page = dsaPage // whatever --page-size says
		if c := g.ChunkedPrefillSize; c > 0 && c%page != 0 {
			// server_args.py check_server_args: assert
			// chunked_prefill_size % page_size == 0, after the DSA rule
			return engine.PoolPlan{}, &config.Error{Field: "engine.sglang.chunked_prefill_size", Msg: fmt.Sprintf(
				"must be a multiple of the page SGLang %s sets for %s's sparse attention (%d), got %d", rel, in.Arch.Architecture, page, c)}
		}
	}
	tokens -= tokens % int64(page)
	if tokens <= 0 {
		const gib = 1 << 30
		return engine.PoolPlan{}, &config.Error{Field: "engine.sglang.mem_fraction_static", Infeasible: true, Msg: fmt.Sprintf(
			"not enough memory (SGLang: \"Not enough memory. Please try to increase --mem-fraction-static\"): %.3f × %.2f GiB − weights %.2f GiB − %.2f GiB in use before them leaves no KV token on %s at TP %d",
			d.MemFractionStatic, float64(in.Sys.MemCapacity)/gib, float64(weights)/gib, float64(pre)/gib, in.Sys.Name, in.TP)}
	}
	if tokens > config.MaxGPUBlocks*int64(page) {
		tokens = config.MaxGPUBlocks * int64(page)
	}
	ctx := g.ContextLength
	if ctx == 0 {
		ctx = in.Arch.MaxPositionEmbeddings
	} else if ctx > in.Arch.MaxPositionEmbeddings {
		// model_config.py refuses a longer context unless
		// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set
		return engine.PoolPlan{}, &config.Error{Field: "engine.sglang.context_length",
			Msg: fmt.Sprintf("%d exceeds %s's max_position_embeddings (%d)", ctx, in.Arch.Name, in.Arch.MaxPositionEmbeddings)}
	}
	t := int(tokens)
	// the request pool's estimate from the tokens and the context
	estimated := min(max(int(float64(t)/float64(ctx)*512), 2048), 4096)
	reqPool := g.MaxRunningRequests
	if reqPool == 0 && spec {
		reqPool = config.DefaultSGLangSpeculativeMaxRunningRequests
	}
	if reqPool == 0 {
		reqPool = estimated
	}
	maxRunning := t / 2
	given := g.MaxRunningRequests
	if given == 0 && spec {
		given = config.DefaultSGLangSpeculativeMaxRunningRequests // server_args.py _handle_speculative_decoding
	}
	if given > 0 {
		maxRunning = given / dp
	}
	maxRunning = max(min(maxRunning, reqPool), 1)
	if !rel.Before(reqPoolRuleSince) {
		// model_runner_kv_cache_mixin.py _resolve_max_num_reqs: the request
		// pool is max_running_requests, and a given one is capped at the
		// estimate (through 0.5.9 a given one sized the pool)
		switch {
		case given > 0 && !rel.Before(givenRunningUncappedSince):
			// from 0.5.14 a given one is capped at half the tokens, not
			// at the estimate
			maxRunning = min(given/dp, t/2)
		case given > 0:
			maxRunning = min(given/dp, estimated)
		default:
			maxRunning = min(estimated, t/2)
		}
		maxRunning = max(maxRunning, 1)
	}
	if mamba.size > 0 {
		// a running request holds a mamba state slot (HybridReqToTokenPool)
		maxRunning = min(maxRunning, mamba.size)
	}
	if !rel.Before(reqPoolRuleSince) {
		reqPool = maxRunning
	}
	slots := 0
	if in.Name == "decode" {
		slots = decodeRequestSlots(rel, reqPool, g.MaxRunningRequests, dp)
	}
	maxReqLen := min(ctx-1, t-1)
	chunk := d.ChunkedPrefillSize
	conservativeness := g.ScheduleConservativeness
	if dp > 1 {
		if chunk > 0 {
			chunk = max(chunk/dp, 1)
		}
		conservativeness *= 0.3
	}
	if spec && g.EnableMixedChunk && chunk > 0 && !rel.Before(specMixedChunkSince) {
		// arg_groups/speculative_hook.py _handle_eagle_family keeps
		// --enable-mixed-chunk with EAGLE from 0.5.19, its running requests
		// decoding one token, without drafts, in a mixed pass: not modelled
		return engine.PoolPlan{}, &config.Error{Field: "engine.sglang.enable_mixed_chunk", Msg: fmt.Sprintf(
			"with speculative decoding is not modelled for SGLang %s (from 0.5.19 a mixed pass decodes the running requests without their drafts)", rel)}
	}
	radix := !g.DisableRadixCache && in.Name != "decode"
	init := math.Min(initNewTokenRatio*conservativeness, 1)
	minRatio := math.Min(init*minNewTokenRatioFactor, 1)
	opt := Options{ChunkedPrefillSize: chunk, MaxPrefillTokens: g.MaxPrefillTokens, PageSize: page, Policy: g.SchedulePolicy,
		InitNewTokenRatio: init, MinNewTokenRatio: minRatio, NewTokenRatioDecay: (init - minRatio) / newTokenRatioDecaySteps,
		MixedChunk: g.EnableMixedChunk && chunk > 0 && !spec, RadixCache: radix, MaxReqLen: maxReqLen, MaxReqInputLen: maxReqLen - 5,
		RequestSlots: slots, PrefillServer: in.Name == "prefill", StreamInterval: g.StreamInterval,
		StreamsFirstToken: config.SGLangStreamsFirstToken(rel), PageOverhead: !rel.Before(pageOverheadSince),
		PageInAdmitCheck: !rel.Before(pageInAdmitCheckSince), IgnoreEOSFullRoom: !rel.Before(ignoreEOSFullRoomSince),
		RetractSortsSpec: !rel.Before(retractSortsSpecSince), StreamByUnsent: !rel.Before(streamByUnsentSince),
		InputCapUnchunkedOnly: !rel.Before(inputCapUnchunkedSince)}
	// EAGLE (server_args.py _handle_speculative_decoding): no mixed chunks,
	// and the overlap scheduler off unless spec v2 (SGLANG_ENABLE_SPEC_V2,
	// on by default from 0.5.11: config.SGLangSpecV2ByDefault)
	overlap := !g.DisableOverlapSchedule
	if spec {
		opt.DraftSteps, opt.Acceptance = g.SpeculativeNumSteps, g.AcceptanceRates()
		overlap = overlap && (g.EnableSpecV2 || config.SGLangSpecV2ByDefault(rel))
	}
	opt.Overlap = overlap
	opt.SkipFinishingDecode = overlap && in.Name != "prefill" && in.Name != "decode" && !rel.Before(skipFinishingDecodeSince)
	a2a, a2aPriced, err := deepEP(g, in, dp)
	if err != nil {
		return engine.PoolPlan{}, err
	}
	if opt.MaxReqInputLen < 1 {
		return engine.PoolPlan{}, &config.Error{Field: "engine.sglang.max_total_tokens", Infeasible: true,
			Msg: fmt.Sprintf("a token pool of %d tokens leaves no room for a prompt (max_req_len %d)", t, maxReqLen)}
	}
	passTokens := g.MaxPrefillTokens
	if chunk > 0 {
		passTokens = chunk
	}
	if opt.MixedChunk {
		passTokens += maxRunning
	}
	passTokens = max(passTokens, maxRunning*(1+opt.DraftSteps)) // a full decode pass with its drafts
	hash := hashBlockTokens
	if page > 1 {
		hash = page
	}
	cfg := engine.Config{MaxNumSeqs: maxRunning, MaxNumBatchedTokens: passTokens, BlockSize: page, NumBlocks: t / page,
		MaxModelLen: ctx, PrefixCaching: radix, HashBlockTokens: hash, PartialBlockHash: page == 1, Options: opt}
	cuda := d.CUDAGraphMaxBS
	if in.Name == "prefill" {
		cuda = 0 // server_args.py: CUDA graphs are off on a prefill server
	}
	// a decode's verified drafts are the graph's tokens too. SGLang captures
	// graphs up to cuda_graph_max_bs whatever the pass limit, but no pass
	// carries more than passTokens, so a graph past it is never replayed:
	// the perf sources take the graphs up to the largest pass (a hybrid
	// model's mamba pool can hold fewer requests than cuda_graph_max_bs).
	graphTokens := min(cuda*(1+opt.DraftSteps), passTokens)
	opt = withEagerLaunch(opt, g, in.Arch, cuda)
	opt.PiecewiseMaxTokens = piecewiseMaxTokens(rel, in, d, pcg, a2a != "", spec)
	if opt.PiecewiseMaxTokens > 0 && !rel.Before(prefillPaddingSince) {
		// can_run_graph refuses a pass padded to more than twice its
		// tokens (_MAX_PREFILL_CUDA_GRAPH_PADDING_FACTOR = 2): a 1-token
		// extend pads to the smallest capture size, 4
		opt.PiecewiseMinTokens = 2
	}
	cfg.Options = opt
	args := map[string]any{"release": rel.String(), "defaults_rule": d.Rule,
		"tp_size": in.TP * dp, "dp_size": dp, "enable_dp_attention": dp > 1,
		"mem_fraction_static": d.MemFractionStatic, "chunked_prefill_size": chunk, "max_prefill_tokens": g.MaxPrefillTokens,
		"cuda_graph_max_bs": cuda, "max_total_num_tokens": t, "max_running_requests": maxRunning,
		"context_length": ctx, "page_size": page, "schedule_policy": g.SchedulePolicy, "radix_cache": radix,
		"enable_mixed_chunk": opt.MixedChunk, "overlap_schedule": overlap}
	if dsaPage > 0 {
		args["page_size_rule"] = "DeepSeek DSA on CUDA: 64 (server_args.py)"
	}
	if a2a != "" {
		args["moe_a2a_backend"], args["deepep_mode"], args["deepep_mode_priced"] = g.MoEA2ABackend, g.DeepEPMode, a2aPriced
		if g.DeepEPMode == "" {
			args["deepep_mode"] = config.SGLangDeepEPAuto
		}
	}
	if g.EPSize > 0 {
		args["ep_size"] = g.EPSize // --ep-size as given (the experts' split: the pool's parallel layout)
	}
	if opt.PiecewiseMaxTokens > 0 {
		// the server argument; the replay's bound is its largest capture
		// size (opt.PiecewiseMaxTokens), the same when it is one
		args["piecewise_cuda_graph_max_tokens"] = d.PiecewiseMaxTokens
	}
	if g.StreamInterval > 1 {
		args["stream_interval"], args["stream_first_token"] = g.StreamInterval, opt.StreamsFirstToken
	}
	if mamba.size > 0 {
		args["max_mamba_cache_size"], args["mamba_ssm_dtype"], args["mamba_state_bytes_per_request"] = mamba.size, mamba.dtype, mamba.perReq
	}
	if spec {
		args["speculative_algorithm"], args["speculative_num_steps"] = g.SpeculativeAlgorithm, g.SpeculativeNumSteps
		args["speculative_num_draft_tokens"], args["speculative_acceptance_rates"] = g.SpeculativeNumDraftTokens, opt.Acceptance
	}
	// One front end for all the server's data-parallel ranks, with or
	// without DP attention, at every release: entrypoints/engine.py
	// _launch_subprocesses starts one DetokenizerManager process and one
	// TokenizerManager in the HTTP server's process (--tokenizer-worker-num,
	// from 0.5.x, defaults to 1; more workers are not simulated), and the
	// data_parallel_controller.py launchers connect every rank's scheduler
	// to that one detokenizer (launch_dp_schedulers copies its
	// detokenizer_ipc_name and tokenizer_ipc_name into each rank's
	// PortArgs; launch_dp_attention_schedulers gives all the ranks the one
	// PortArgs). The replay's worker loop stands for both processes.
	return engine.PoolPlan{Config: cfg, MaxPassTokens: passTokens, CUDAGraphMaxTokens: graphTokens,
		Overlap: overlap, Args: args, DPRoundRobin: true, OneFrontEnd: true, All2AllBackend: a2a}, nil
}

// deepEP is the MoE all-to-all of a pool whose server runs
// --moe-a2a-backend deepep (none otherwise), as the perf models price it
// (config.All2AllDeepEPHT for DeepEP's normal kernels,
// config.All2AllDeepEPLL for its low-latency ones), and the mode priced.
// --deepep-mode auto picks per batch (layers/moe/utils.py
// DeepEPMode.resolve: normal with a prefill in the batch, low-latency for
// decode): a P/D prefill server's batches are prefills, a decode server's
// decodes; an aggregated server's passes are priced with the low-latency
// kernels, those of its decode passes (its prefill passes would use
// normal's). DeepEP moves tokens between the data-parallel attention ranks
// that expert parallelism spans: it needs the pool's enable_expert_parallel
// and data_parallel_size > 1.
func deepEP(g *config.SGLang, in engine.PoolInput, dp int) (string, string, error) {
	if !g.DeepEP() {
		return "", "", nil
	}
	if !in.EP || dp < 2 {
		return "", "", &config.Error{Field: in.Field, Msg: fmt.Sprintf(
			"moe_a2a_backend %s needs expert parallelism over data-parallel attention ranks (enable_expert_parallel and data_parallel_size > 1; got %v and %d): the perf models price DeepEP's dispatch between those ranks",
			config.SGLangA2ADeepEP, in.EP, dp)}
	}
	mode := g.DeepEPMode
	if mode == "" || mode == config.SGLangDeepEPAuto {
		mode = config.SGLangDeepEPLowLatency
		if in.Name == "prefill" {
			mode = config.SGLangDeepEPNormal
		}
	}
	if mode == config.SGLangDeepEPNormal {
		return config.All2AllDeepEPHT, mode, nil
	}
	return config.All2AllDeepEPLL, mode, nil
}

// pageOverheadSince and inputCapUnchunkedSince: the releases whose
// PrefillAdder (managers/schedule_policy.py) reserves a page per admission
// (the 0.5.10 wheel) and stops at max_prefill_tokens only without chunked
// prefill (the 0.5.13 wheel; Options.PageOverhead, InputCapUnchunkedOnly).
var (
	pageOverheadSince      = config.Release{Major: 0, Minor: 5, Patch: 10}
	inputCapUnchunkedSince = config.Release{Major: 0, Minor: 5, Patch: 13}
	// pageInAdmitCheckSince: add_one_req checks extend + max_new +
	// page_size against rem_total_tokens (the 0.5.11 wheel; 0.5.10's
	// check has no page)
	pageInAdmitCheckSince = config.Release{Major: 0, Minor: 5, Patch: 11}
	// ignoreEOSFullRoomSince: the running ignore_eos requests' decode room
	// at ratio 1 (the 0.5.22 wheel; Options.IgnoreEOSFullRoom)
	ignoreEOSFullRoomSince = config.Release{Major: 0, Minor: 5, Patch: 22}
	// retractSortsSpecSince: retract_decode sorts EAGLE's requests too
	// (schedule_batch.py, the 0.5.17 wheel; through 0.5.16 "if not
	// server_args.speculative_algorithm", and allow_policy_sort in 0.5.16)
	retractSortsSpecSince = config.Release{Major: 0, Minor: 5, Patch: 17}
	// streamByUnsentSince: output_streamer.py sends at once and then when
	// stream_interval tokens are unsent (the 0.5.22 wheel; through 0.5.21
	// len(output_ids) % stream_interval == 1)
	streamByUnsentSince = config.Release{Major: 0, Minor: 5, Patch: 22}
	// skipFinishingDecodeSince: event_loop_overlap skips the finishing
	// requests' extra decode (the 0.5.22 wheel; Options.SkipFinishingDecode)
	skipFinishingDecodeSince = config.Release{Major: 0, Minor: 5, Patch: 22}
)

// specMixedChunkSince is the first release that keeps mixed chunks with
// EAGLE (SpeculativeAlgorithm.supports_mixed_chunk).
var specMixedChunkSince = config.Release{Major: 0, Minor: 5, Patch: 19}

// prefillPaddingSince is the first release whose prefill graph runner
// refuses a pass padded past twice its tokens (runner/
// prefill_cuda_graph_runner.py can_run_graph, the 0.5.16 wheel): with the
// capture sizes 4, 8, … only a 1-token pass.
var prefillPaddingSince = config.Release{Major: 0, Minor: 5, Patch: 16}

// givenRunningUncappedSince is the first release whose
// _resolve_max_num_reqs caps a given max_running_requests // dp at
// max_total_num_tokens // 2 rather than the estimate (the 0.5.14 wheel;
// mem_cache/kv_cache_configurator.py resolve_max_num_reqs from 0.5.17).
var givenRunningUncappedSince = config.Release{Major: 0, Minor: 5, Patch: 14}

// reqPoolRuleSince is the first SGLang release whose request pool is
// max_running_requests (model_runner_kv_cache_mixin.py _resolve_max_num_reqs
// in the 0.5.10 wheel, the same through 0.5.13): min(given // dp, the
// estimate min(max(tokens / context_length · 512, 2048), 4096)), or
// min(the estimate, tokens / 2) when none is given.
var reqPoolRuleSince = config.Release{Major: 0, Minor: 5, Patch: 10}

// preAllocSince is the first SGLang release whose P/D decode server keeps
// request slots for pre-allocated handoffs beside its request pool
// (DecodeReqToTokenPool, sgl-project/sglang pull request 6980, June 2025);
// before it the reserved, transferring and running requests shared the pool.
var preAllocSince = config.Release{Major: 0, Minor: 4, Patch: 7}

// decodeRequestSlots is a P/D decode server's request slots
// (model_runner.py: DecodeReqToTokenPool(size=max_num_reqs,
// pre_alloc_size=max_num_reqs × 2 if max_num_reqs ≤ 32 else 0)). From
// 0.5.14 the extra slots are --disaggregation-decode-extra-slots, which
// arg_groups/pd_disaggregation_hook.py sets, when left out, from the given
// max_running_requests only: 2 × (given // dp) if that is at most 32, else
// 0, and 0 without one (given: engine.sglang.max_running_requests as given,
// before EAGLE's 48, which a later hook sets).
func decodeRequestSlots(rel config.Release, reqPool, given, dp int) int {
	if rel.Before(preAllocSince) {
		return reqPool
	}
	if !rel.Before(extraSlotsSince) {
		if per := given / max(dp, 1); given > 0 && per <= 32 {
			return reqPool + 2*per
		}
		return reqPool
	}
	if reqPool > 32 {
		return reqPool
	}
	return 3 * reqPool
}

// extraSlotsSince is the first release whose decode server's extra request
// slots follow --disaggregation-decode-extra-slots (decodeRequestSlots).
var extraSlotsSince = config.Release{Major: 0, Minor: 5, Patch: 14}

// mambaState is a hybrid model's mamba pool on one GPU: size states of
// perReq bytes, the recurrent state in dtype.
type mambaState struct {
	size   int
	perReq int64
	dtype  string
}

// mambaPool sizes SGLang's mamba pool of a hybrid model (one with
// linear-attention layers; none otherwise), as ModelRunner's
// _handle_max_mamba_cache does: max_mamba_cache_size when given; with
// disable_radix_cache and max_running_requests given, one state per running
// request; else the share r/(1+r) of the memory left after the weights, r =
// mamba_full_memory_ratio (0.9), in states of the per-request state (every
// linear-attention layer's conv and recurrent state on this GPU, the
// recurrent part at mamba_ssm_dtype, by default the checkpoint's). rest is
// that memory, bytes; the KV pool gets what the states leave. Errors:
// no room for one state (SGLang: "Not enough GPU memory for hybrid
// (mamba/linear-attention) state cache"). With DP attention each of the dp
// ranks has its own pool: the sizes given are divided among them.
func mambaPool(in engine.PoolInput, g *config.SGLang, rest float64, dp int) (mambaState, error) {
	a := in.Arch
	if a.Linear == nil {
		return mambaState{}, nil
	}
	st := mambaState{dtype: config.SGLangMambaBF16}
	b := a.Linear.StateBytes
	if b == 4 {
		st.dtype = config.SGLangMambaFloat32
	}
	switch g.MambaSSMDtype {
	case config.SGLangMambaFloat32:
		b, st.dtype = 4, g.MambaSSMDtype
	case config.SGLangMambaBF16:
		b, st.dtype = 2, g.MambaSSMDtype
	}
	st.perReq = a.StateBytesPerSequenceAs(in.TP, b)
	ratio := g.MambaFullMemoryRatio
	if ratio == 0 {
		ratio = config.DefaultSGLangMambaFullMemoryRatio
	}
	switch {
	case g.MaxMambaCacheSize > 0:
		st.size = g.MaxMambaCacheSize / dp
	case g.DisableRadixCache && g.MaxRunningRequests > 0:
		st.size = g.MaxRunningRequests / dp
	default:
		st.size = int(math.Floor(rest * ratio / (1 + ratio) / float64(st.perReq)))
	}
	if st.size <= 0 || float64(st.size)*float64(st.perReq) >= rest {
		const gib = 1 << 30
		return st, &config.Error{Field: "engine.sglang.mem_fraction_static", Infeasible: true, Msg: fmt.Sprintf(
			"not enough GPU memory for the hybrid state cache (SGLang: \"Not enough GPU memory for hybrid (mamba/linear-attention) state cache\"): %d states of %.2f MiB in %.2f GiB left after the weights on %s at TP %d",
			max(st.size, 1), float64(st.perReq)/(1<<20), rest/gib, in.Sys.Name, in.TP)}
	}
	return st, nil
}

// withEagerLaunch sets opt's eager launch: the launch time of each of the
// model's layers (config.SGLangEagerLaunchUsPerLayer: engine.sglang's
// eager_launch_us_per_layer, else the architecture's measured value), and
// the CUDA graphs' largest decode batch.
func withEagerLaunch(opt Options, g *config.SGLang, arch *model.Arch, graphMaxBS int) Options {
	opt.EagerLaunchNs = config.SGLangEagerLaunchUsPerLayer(g, arch.Architecture) * 1e3 * float64(arch.Layers)
	opt.GraphMaxBS = graphMaxBS
	return opt
}
