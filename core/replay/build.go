package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/aisimulate/aisimulate/core/clock"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/engines"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/perf/aic"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/version"
	"github.com/aisimulate/aisimulate/core/workload"
)

// pool is one set of identical workers as built from the spec. A worker
// (one vLLM server) has dp data-parallel ranks, each an engine.Worker with
// its own scheduler and KV cache.
type pool struct {
	name      string // "aggregated", "prefill" or "decode"
	field     string // its spec path, for errors
	count, tp int
	dp        int  // data-parallel ranks per worker (1: none)
	ep        bool // routed experts expert-parallel
	// moeEP: with ep, the experts spread over moeEP GPUs and split the rest
	// of the way (TensorRT-LLM's moe_expert_parallel_size, SGLang's ep_size, below its
	// tp_size; 0: over all); moeField names the option
	moeEP    int
	moeField string
	a2a      string // vLLM's --all2all-backend ("": its default)
	// oneLoop: a worker's data-parallel ranks share one API server event
	// loop (the family's engine.PoolPlan.OneFrontEnd, planRanks: vLLM's
	// --api-server-count 1, SGLang's and TensorRT-LLM's one front end); else
	// each rank has its own (poolRT.loopOf)
	oneLoop bool
	// lockstep: the ranks of a worker run every pass together (a
	// mixture-of-experts model with dp > 1: its MoE layers gather every
	// rank's tokens), priced by perf's GroupPassTime
	lockstep  bool
	placement string
	kvRouter  *config.KVRouter // placement kv_router's settings
	perf      perf.Model
	// memory: the plan that sized the KV cache (nil: num_gpu_blocks given,
	// or a family that plans its pools)
	memory *perf.MemoryPlan
	cfg    engine.Config
	// limitFields: the spec path of each of cfg's limits (limits.field:
	// "max_num_seqs" → "engine.trtllm.max_batch_size", …)
	limitFields map[string]string
	// overlap: the engine forms a pass while the previous one runs
	// (vLLM's async_scheduling, SGLang's overlap scheduler)
	overlap bool
	// args: the engine arguments a family's plan resolved (metadata)
	args map[string]any
	// spec is the pool's block of the spec (its own engine options, when
	// the backend takes them per pool: limitsFor)
	spec *config.Pool
	// dpRoundRobin: new requests go to a worker's ranks in turn
	// (engine.PoolPlan.DPRoundRobin)
	dpRoundRobin bool
}

// groupPricer prices the lockstep pass of a worker's data-parallel ranks
// (perf.Roofline and aic.Model implement it).
type groupPricer interface {
	GroupPassTime(bs []perf.Batch) int64
}

// deployment is everything built from spec.engine.
type deployment struct {
	// cache shares measured perf models between deployments (WithPerfCache;
	// nil: none)
	cache   *PerfCache
	arch    *model.Arch
	sys     *hardware.System
	kvDtype model.Dtype
	// pools: one aggregated pool, or the prefill pool then the decode pool.
	pools  []*pool
	disagg bool
	// family is the engine that serves every pool (engine.backend).
	family engine.Family
	// P/D only: KV transfer bandwidth (bytes/ns), latency (ns) and bytes per
	// prompt token moved; the time a request's recurrent state adds (a
	// hybrid model's, 0 for others: planTransfer).
	transferBytesPerNs float64
	transferLatencyNs  int64
	transferBytesTok   int64
	transferStateNs    int64
}

func cfgErr(field string, err error) error { return &config.Error{Field: field, Msg: err.Error()} }

func buildDeployment(s *config.Spec, cache *PerfCache) (*deployment, error) {
	e := &s.Engine
	arch, err := model.Load(e.Model, e.ModelConfigDir)
	if err != nil {
		return nil, cfgErr("engine.model", err)
	}
	sys, err := hardware.Lookup(e.System)
	if err != nil {
		return nil, cfgErr("engine.system", err)
	}
	if err := s.ResolveSchedulerDefaults(sys.MemCapacity, sys.Name); err != nil {
		return nil, err
	}
	family, err := engines.For(e.Backend)
	if err != nil {
		return nil, cfgErr("engine.backend", err)
	}
	d := &deployment{arch: arch, sys: sys, family: family, cache: cache}
	// engine.quantization: weights default to the checkpoint's (config.json),
	// the KV cache to config.DefaultKVCacheDtype, "auto": the checkpoint's
	// calibrated KV format (model.Arch.KVDtype), else bf16. The weight format
	// also sets the weight memory of the KV budget.
	kvName := config.DefaultKVCacheDtype
	if q := e.Quantization; q != nil {
		if q.Weights != "" {
			wd, err := model.ParseDtype(q.Weights)
			if err != nil {
				return nil, cfgErr("engine.quantization.weights", err)
			}
			arch.WeightDtype, arch.AttnDtype = wd, ""
			if arch.MoE != nil && arch.MoE.Dtype != wd {
				// vLLM's --quantization applies to every linear layer, the
				// routed experts and the attention included
				arch.MoE.Dtype = ""
			}
		}
		if q.KVCache != "" {
			kvName = q.KVCache
		}
		if kvName == config.DtypeFP8E5M2 {
			// one byte an element like e4m3, unscaled (vLLM's fp8_e5m2 cache): the
			// passes price the bytes moved, the same as fp8's
			kvName = config.DtypeFP8
		}
	}
	kvDtype := arch.KVDtype
	if kvName != config.DtypeAuto || kvDtype == "" {
		if kvName == config.DtypeAuto {
			kvName = string(model.BF16)
		}
		if kvDtype, err = model.ParseDtype(kvName); err != nil {
			return nil, cfgErr("engine.quantization.kv_cache", err)
		}
	}
	d.kvDtype = kvDtype

	if dg := e.Workers.Disaggregated; dg != nil {
		d.disagg = true
		d.pools = []*pool{
			newPool("prefill", "engine.workers.disaggregated.prefill", &dg.Prefill),
			newPool("decode", "engine.workers.disaggregated.decode", &dg.Decode),
		}
	} else {
		d.pools = []*pool{newPool("aggregated", "engine.workers.aggregated", e.Workers.Aggregated)}
	}
	for _, p := range d.pools {
		if limitsFor(e, p.spec, p.field).attentionDP {
			// TensorRT-LLM's enable_attention_dp: the worker's tp_size GPUs
			// are as many attention ranks of one GPU each (their own
			// scheduler and KV cache), the MoE layers spanning them all
			p.dp, p.tp = p.tp, 1
		}
		if err := p.moeSplit(e); err != nil {
			return nil, err
		}
	}
	if dg := e.Workers.Disaggregated; dg != nil {
		if err := d.planTransfer(e, &dg.KVTransfer); err != nil {
			return nil, err
		}
	}
	for _, p := range d.pools {
		if err := d.buildPool(s, p); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func newPool(name, field string, p *config.Pool) *pool {
	return &pool{name: name, field: field, count: p.Count, tp: p.TP, dp: p.DP(), ep: p.EnableExpertParallel,
		a2a: p.All2AllBackend, placement: p.Placement, kvRouter: p.KVRouter, spec: p}
}

// planTransfer sets the P/D KV transfer's price from kv_transfer: the bytes
// a prompt token moves (the model's KV of every layer and head, unless
// kv_bytes_per_token is given), the bandwidth they move at and the latency.
// Without bandwidth_gb_per_s the bandwidth is the system's network: each
// attention rank of the prefill worker sends its share of the KV over its own
// NIC (node.inter_node_bw, one per GPU) to the decode rank that holds that
// share, so the links in parallel are the smaller of the two pools' attention
// TP, each carrying model.Arch.KVBytesPerToken at that TP (an MLA model's
// latent KV is whole on every rank: one link's worth). This is how SGLang's
// and vLLM's NIXL / Mooncake transfers move the KV (each TP rank registers
// and writes its own KV buffers); transfers sharing a NIC do not slow each
// other here.
func (d *deployment) planTransfer(e *config.Engine, t *config.KVTransfer) error {
	arch := d.arch
	d.transferLatencyNs = int64(math.Round(t.LatencyMs * 1e6))
	d.transferBytesTok = t.KVBytesPerToken
	if d.transferBytesTok == 0 {
		d.transferBytesTok = d.transferTokenBytes(e, 1) // every layer and head
	}
	const field = "engine.workers.disaggregated.kv_transfer"
	d.transferBytesPerNs = t.BandwidthGBPerS // 1 GB/s = 1e9 B/s = 1 B/ns
	if t.BandwidthGBPerS == 0 {
		if !(d.sys.InterNodeBW > 0) {
			return &config.Error{Field: field + ".bandwidth_gb_per_s", Msg: fmt.Sprintf(
				"not given, and system %s has no network bandwidth (node.inter_node_bw) to take it from", d.sys.Name)}
		}
		links := min(d.pools[0].tp, d.pools[1].tp)
		whole, share := d.transferTokenBytes(e, 1), d.transferTokenBytes(e, links)
		d.transferBytesPerNs = d.sys.InterNodeBW / 1e9 * float64(whole) / float64(max(share, 1))
	}
	// A hybrid model's recurrent state moves with the KV, once per request
	// whatever the decode worker's cache holds: vLLM's NixlConnector sends
	// the state blocks of the hybrid KV cache manager's groups with the
	// attention blocks, SGLang's transfer sends the request's mamba pool slot
	// (public P/D runs of such models: InferenceX's
	// benchmarks/multi_node/srt-slurm-recipes/vllm/kimi-k3/agentic/disagg-gb300-1p1d-dcp8-dcp8-dspark4-mooncake-agentic.yaml,
	// sglang/qwen3.5/gb200-fp8/1k1k/1p1d-dep4-dep16.yaml). Each attention
	// rank holds the state of its heads (StateBytesPerSequence at its TP) and
	// sends it over its own link as its KV: one link's share at the NIC's
	// bandwidth; with bandwidth_gb_per_s the whole state at that bandwidth.
	// The state is the model's dtype (an engine's own --mamba-ssm-dtype is not
	// applied to the transfer); TensorRT-LLM's is the one its mamba cache
	// manager holds, the SSM state at the model's bf16 (trtllmStates).
	stateAt := arch.StateBytesPerSequence
	if e.Backend == config.BackendTRTLLM {
		stateAt = func(tp int) int64 { return arch.StateBytesPerSequenceAs(tp, trtllmSSMBytes) }
	}
	if st := stateAt(1); st > 0 {
		d.transferStateNs = clock.Span(float64(st) / d.transferBytesPerNs)
		if t.BandwidthGBPerS == 0 {
			links := min(d.pools[0].tp, d.pools[1].tp)
			d.transferStateNs = clock.Span(float64(stateAt(links)) / (d.sys.InterNodeBW / 1e9))
		}
	}
	// the longest prompt's transfer must fit the virtual clock
	longest := max(limitsOf(e).maxModelLen, arch.MaxPositionEmbeddings)
	if ns := float64(longest) * float64(d.transferBytesTok) / d.transferBytesPerNs; ns > maxClockNs/16 {
		return &config.Error{Field: field,
			Msg: fmt.Sprintf("a %d-token prompt would take %.3g s to move: raise bandwidth_gb_per_s or lower kv_bytes_per_token", longest, ns/1e9)}
	}
	return nil
}

// transferTokenBytes is the KV of one prompt token held on each of tp
// attention ranks, bytes, as the transfer moves it: model.Arch.KVBytesPerToken,
// but under TensorRT-LLM with one attention window every layer's
// (trtllmWindows: the context server's one pool holds a sliding-window layer's
// KV full-length too, and its cache transceiver sends the request's blocks of
// the pool). With two windows or more the full-attention layers' KV alone, as
// before (which of the windows' blocks move is not modelled).
func (d *deployment) transferTokenBytes(e *config.Engine, tp int) int64 {
	kvBytes := d.kvDtype.Bytes()
	b := d.arch.KVBytesPerToken(tp, kvBytes)
	if e.Backend != config.BackendTRTLLM {
		return b
	}
	ctx := d.pools[0]
	maxLen := trtllmMaxSeqLen(limitsFor(e, ctx.spec, ctx.field), d.arch)
	w, ok, err := planTRTLLMWindows(e.TRTLLMRelease(), e.TRTLLMOf(ctx.spec), d.arch, tp, kvBytes, maxLen, "")
	if err != nil || !ok || w.pools > 1 {
		return b // an error is the pool's, reported when it is built
	}
	return w.tokenBytes
}

// moeSplit applies the pool's expert-parallel size where the engine takes
// one apart from enable_expert_parallel: TensorRT-LLM's
// moe_expert_parallel_size (tensorrt_llm/mapping.py, Mapping: moe_tp_size ×
// moe_ep_size = tp_size) and SGLang's ep_size (--ep-size;
// distributed/parallel_state.py initialize_model_parallel: moe_tp_size =
// tensor_model_parallel_size // moe_ep_size). The experts spread over that
// many of the worker's GPUs (all of them: as enable_expert_parallel; 1:
// none), split GPUs / that many ways. The split both ways is simulated
// without attention DP only (its token dispatch across ranks would be
// another).
func (pl *pool) moeSplit(e *config.Engine) error {
	n, engineRule, dpName := 0, "", "enable_attention_dp"
	switch e.Backend {
	case config.BackendTRTLLM:
		t := e.TRTLLMOf(pl.spec)
		if t == nil || t.MoEExpertParallelSize == 0 {
			return nil
		}
		n, engineRule = t.MoEExpertParallelSize, "TensorRT-LLM's Mapping: moe_tp_size × moe_ep_size = tp_size"
		pl.moeField = "engine.trtllm.moe_expert_parallel_size"
		if pl.spec.TRTLLM != nil {
			pl.moeField = pl.field + ".trtllm.moe_expert_parallel_size"
		}
	case config.BackendSGLang:
		g := e.SGLangOf(pl.name)
		if g == nil || g.EPSize == 0 {
			return nil
		}
		n, engineRule, dpName = g.EPSize, "SGLang: moe_tp_size = tp_size // ep_size", pl.field+".data_parallel_size (DP attention)"
		// a pool's own block takes engine.sglang's ep_size when it leaves it
		// out (config.inheritSGLang): the pool's field is named only for a
		// value of its own
		pl.moeField = "engine.sglang.ep_size"
		if pl.spec.SGLang != nil && (e.SGLang == nil || g.EPSize != e.SGLang.EPSize) {
			pl.moeField = pl.field + ".sglang.ep_size"
		}
		if g.DeepEP() && n != pl.tp*pl.dp {
			// server_args.py _handle_a2a_moe: DeepEP sets ep_size to tp_size
			return &config.Error{Field: pl.moeField, Msg: fmt.Sprintf(
				"%d with moe_a2a_backend %s, which spreads the experts over all %d GPUs (SGLang sets ep_size = tp_size): give %d or leave it out",
				n, config.SGLangA2ADeepEP, pl.tp*pl.dp, pl.tp*pl.dp)}
		}
	default:
		return nil
	}
	gpus := pl.tp * pl.dp
	switch {
	case pl.ep:
		return &config.Error{Field: pl.moeField, Msg: fmt.Sprintf(
			"given with %s.enable_expert_parallel (the experts over all %d GPUs): give one of them", pl.field, gpus)}
	case gpus%n != 0:
		return &config.Error{Field: pl.moeField, Msg: fmt.Sprintf(
			"%d does not divide the worker's %d GPUs (%s)", n, gpus, engineRule)}
	case n > 1 && n < gpus && pl.dp > 1:
		return &config.Error{Field: pl.moeField, Msg: fmt.Sprintf(
			"%d of %d GPUs splits the experts both ways, which is not simulated with %s", n, gpus, dpName)}
	}
	pl.ep = n > 1
	if n < gpus {
		pl.moeEP = n
	}
	return nil
}

// parallel is the pool's layout in model terms.
func (pl *pool) parallel() model.Parallel {
	return model.Parallel{TP: pl.tp, DP: pl.dp, EP: pl.ep, MoEEPSize: pl.moeEP}
}

// planRanks takes a family's placement of requests on the pool's
// data-parallel ranks and their front end (engine.Planner,
// engine.RankPlanner).
func (pl *pool) planRanks(p *engine.PoolPlan) {
	pl.dpRoundRobin = p.DPRoundRobin
	pl.oneLoop = p.OneFrontEnd && pl.dp > 1
}

// buildPool makes the perf model and engine config of one pool (its TP, DP
// and EP set both the pass times and the KV capacity).
func (d *deployment) buildPool(s *config.Spec, pl *pool) error {
	e, arch, sys, kvDtype := &s.Engine, d.arch, d.sys, d.kvDtype
	if err := arch.Validate(pl.tp); err != nil {
		return cfgErr(pl.field+".tp", err)
	}
	// A TP group over several nodes: vLLM (its multi-node serving over Ray or
	// --nnodes), SGLang (--nnodes, sglang/srt/server_args.py) and TensorRT-LLM
	// (one MPI world, tensorrt_llm/llmapi/mpi_session.py) each run one; the
	// perf sources price its all-reduce across the network
	// (hardware.System.TPSpanError says what that needs).
	if err := sys.TPSpanError(pl.tp); err != nil {
		return cfgErr(pl.field+".tp", err)
	}
	if err := arch.ValidateParallel(pl.parallel()); err != nil {
		field := pl.field + ".data_parallel_size"
		if pl.moeField != "" {
			field = pl.moeField
		} else if pl.ep {
			field = pl.field + ".enable_expert_parallel"
		} else if pl.dp == 1 {
			field = pl.field + ".tp"
		}
		return cfgErr(field, err)
	}
	pl.lockstep = arch.IsMoE() && pl.dp > 1
	lim := limitsFor(e, pl.spec, pl.field)
	pl.limitFields = lim.field
	// vLLM's CUDA graphs (on by default): a MoE layer computes the padded
	// token count (perf.CUDAGraphTokens). TensorRT-LLM's padding is the
	// engine's own (its batch holds the dummy requests).
	cgTop, graphs := 0, perf.VLLMGraphs{}
	if e.Backend == config.BackendVLLM {
		cgTop, graphs = vllmCUDAGraphs(e, sys.SMVersion, lim.maxSeqs, lim.maxTokens)
		if !graphs.IsZero() && cgTop == 0 {
			// adjust_cudagraph_sizes_for_spec_decode raises "No valid
			// cudagraph sizes after rounding to multiple of" 1 + k
			return cfgErr("engine.scheduler.speculative_config.num_speculative_tokens", fmt.Errorf(
				"vLLM %s refuses to start: its largest CUDA-graph size under max_num_seqs %d and max_num_batched_tokens %d is below one decode step of %d tokens (1 + num_speculative_tokens); lower it or raise the limits",
				e.BackendVersion, lim.maxSeqs, lim.maxTokens, graphs.QueryLen))
		}
	}
	maxTokens, overlap := lim.maxTokens, lim.async
	in := engine.PoolInput{Spec: s, Arch: arch, Sys: sys, KVDtype: kvDtype, Name: pl.name, Field: pl.field, Pool: pl.spec,
		TP: pl.tp, DP: pl.dp, EP: pl.ep}
	if c, ok := d.family.(engine.ModelChecker); ok {
		if err := c.CheckModel(in); err != nil {
			return err
		}
	}
	var plan *engine.PoolPlan // a family that sizes its own workers (engine.Planner)
	if planner, ok := d.family.(engine.Planner); ok {
		p, err := planner.Plan(in)
		if err != nil {
			return err
		}
		plan, cgTop, maxTokens, overlap = &p, p.CUDAGraphMaxTokens, p.MaxPassTokens, p.Overlap
		if p.All2AllBackend != "" {
			pl.a2a = p.All2AllBackend
		}
		pl.planRanks(&p)
	} else if rp, ok := d.family.(engine.RankPlanner); ok {
		p := rp.PlanRanks(in)
		pl.planRanks(&p)
	}
	pl.overlap = overlap
	// TensorRT-LLM's WideEPMoE with attention DP exchanges the tokens as
	// its alltoall method says (config.TRTLLM.A2ABackend), the bf16 hidden
	// states, and gathers them instead for a pass beyond moe_max_num_tokens
	a2aBF16, a2aMax := false, 0
	if t := e.TRTLLMOf(pl.spec); e.Backend == config.BackendTRTLLM && pl.dp > 1 && t != nil {
		if b := t.A2ABackend(); b != "" {
			pl.a2a, a2aBF16, a2aMax = b, true, t.MoEMaxTokens(pl.tp*pl.dp)
		}
	}
	switch p := e.Perf.Source.(type) {
	case config.AICPerf:
		m, err := d.cache.aicModel(e, arch, sys, aic.Options{Database: p.Database, Backend: e.Backend,
			Version: p.BackendVersion, TP: pl.tp, DP: pl.dp, EP: pl.ep, MoEEP: pl.moeEP, WeightDtype: arch.WeightDtype, KVDtype: kvDtype,
			MaxTokens: maxTokens, PassOverheadUs: p.PassOverheadUs, SequenceOverheadUs: p.PerSequenceOverheadUs,
			OverlapCPU: overlap, CUDAGraphMaxTokens: cgTop, CUDAGraphs: graphs, All2AllBackend: pl.a2a, MoEBackend: e.MoEBackend,
			MoERouting: p.Routing(), All2AllBF16Dispatch: a2aBF16, All2AllMaxTokens: a2aMax})
		if err != nil {
			return cfgErr("engine.perf", err)
		}
		pl.perf = m
	case config.LinearPerf:
		pl.perf = &perf.Linear{BaseMs: p.BaseMs, PerPrefillTokenMs: p.PerPrefillTokenMs, PerDecodeSeqMs: p.PerDecodeSeqMs}
	case config.RooflinePerf:
		params := perf.RooflineParams{ComputeEfficiency: p.ComputeEfficiency, MemoryEfficiency: p.MemoryEfficiency,
			PassOverheadUs: p.PassOverheadUs, SequenceOverheadUs: p.PerSequenceOverheadUs,
			LayerLatencyUs: p.LayerLatencyUs, AllReduceLatencyUs: perf.CustomAllReduceLatencyUs,
			MoELatencyUs: p.MoELatency()}
		rl, err := perf.NewRoofline(arch, sys, perf.RooflineOptions{TP: pl.tp, DP: pl.dp, EP: pl.ep, MoEEP: pl.moeEP,
			WeightDtype: arch.WeightDtype, KVDtype: kvDtype, Params: params, OverlapCPU: overlap,
			CUDAGraphMaxTokens: cgTop, CUDAGraphs: graphs, All2AllBackend: pl.a2a, All2AllBF16Dispatch: a2aBF16, All2AllMaxTokens: a2aMax})
		if err != nil {
			return cfgErr("engine.perf", err)
		}
		pl.perf = rl
	default:
		panic(fmt.Sprintf("replay: engine.perf source %T has no builder", p))
	}
	if _, ok := pl.perf.(groupPricer); pl.lockstep && !ok {
		return &config.Error{Field: "engine.perf.source",
			Msg: e.Perf.Name() + " cannot price a data-parallel mixture-of-experts worker (use roofline or aic)"}
	}
	if plan != nil {
		pl.cfg, pl.args = plan.Config, plan.Args
		return nil
	}

	// the limits' sizing (vLLM's, TensorRT-LLM's: families that plan no pool)
	blocks, blockSize, stateBlocks := lim.numBlocks, lim.blockSize, 0
	hy, hybrid, err := perf.VLLMHybridKV(arch, sys, pl.tp, kvDtype, lim.blockSize)
	if err != nil {
		return cfgErr("engine.model", err)
	}
	var states *trtllmStates
	if hybrid && lim.ofFree {
		// TensorRT-LLM's mamba cache manager: its own state slots, and the
		// attention layers' KV blocks of tokens_per_block (trtllmhybrid.go)
		if states, err = planTRTLLMStates(e, arch, pl, lim); err != nil {
			return err
		}
		hybrid = false
	}
	if hybrid {
		// vLLM's hybrid KV cache manager (perf.HybridKV): its attention
		// block size, and a block per state group for each request
		blockSize, stateBlocks = hy.BlockSize, (hy.StateGroups+hy.AttnGroups-1)/hy.AttnGroups
	}
	if blocks == 0 {
		util, slidingSeqs := lim.memFraction, lim.maxSeqs
		var windows trtllmWindows
		windowed := false
		if lim.ofFree {
			util = 1 // TensorRT-LLM: its fraction is of what the rest leaves (kvBlocksOfFree)
			if windows, windowed, err = planTRTLLMWindows(e.TRTLLMRelease(), e.TRTLLMOf(pl.spec), arch, pl.tp, kvDtype.Bytes(), trtllmMaxSeqLen(lim, arch),
				lim.fieldOf("kv_cache_config")); err != nil {
				return err
			}
			if windowed {
				slidingSeqs = 0 // no window reserved apart: the sliding layers' KV is in the blocks (trtllmWindows)
			}
		}
		planMemory := perf.PlanMemoryParallel
		if d, ok := e.VLLMReleaseDefaults(); ok && d.ExtensibleKVCache && e.Backend == config.BackendVLLM {
			planMemory = perf.PlanMemoryExtensible // vLLM 0.34.0's default sizing (config.VersionDefaults.ExtensibleKVCache)
		}
		plan, err := planMemory(arch, sys, pl.parallel(), kvDtype, lim.maxTokens, slidingSeqs,
			util, lim.blockSize)
		if states != nil && errors.Is(err, perf.ErrDoesNotFit) {
			err = nil // vLLM's enlarged hybrid block did not fit: TensorRT-LLM's tokens_per_block decides below
		}
		if lim.ofFree && err == nil {
			if states != nil {
				states.apply(&plan, lim.blockSize)
			}
			if windowed {
				plan.KVBytesPerToken = windows.tokenBytes
				plan.Blocks = windows.blocks(lim, plan.KVBudgetBytes)
			} else {
				plan.Blocks = lim.kvBlocksOfFree(plan.KVBudgetBytes, plan.KVBytesPerToken)
			}
			if plan.Blocks < 1 {
				err = fmt.Errorf("%w: %s on %s leaves %.2f GiB for the KV cache (free_gpu_memory_fraction %g of %.2f GiB), less than one block of %d tokens",
					perf.ErrDoesNotFit, arch.Name, sys.Name, float64(plan.KVBudgetBytes)*lim.memFraction/(1<<30), lim.memFraction,
					float64(plan.KVBudgetBytes)/(1<<30), lim.blockSize)
				if states != nil && plan.KVBudgetBytes+states.bytes() > 0 {
					// the recurrent states took what the KV cache needed
					return &config.Error{Field: lim.fieldOf("max_num_seqs"), Infeasible: true, Msg: fmt.Sprintf(
						"%v, after the mamba cache manager's %d recurrent-state slots (one a max_batch_size request) of %.2f GiB each, %.2f GiB: lower max_batch_size",
						err, states.slots, float64(states.bytesPerSlot)/(1<<30), float64(states.bytes())/(1<<30))}
				}
			}
		}
		if err != nil {
			return &config.Error{Field: memoryCulprit(plan, sys.MemCapacity, pl.field, lim), Msg: err.Error(),
				Infeasible: errors.Is(err, perf.ErrDoesNotFit)}
		}
		if plan.Blocks > config.MaxGPUBlocks {
			return &config.Error{Field: lim.fieldOf("num_gpu_blocks"), Msg: fmt.Sprintf(
				"the GPU memory holds %d KV blocks of %d tokens, more than the simulator's %d per worker: cap it (%s) or use larger blocks (%s)",
				plan.Blocks, lim.blockSize, config.MaxGPUBlocks, lim.fieldOf("num_gpu_blocks"), lim.fieldOf("block_size"))}
		}
		blocks = plan.Blocks
		pl.memory = &plan
	}
	maxLen := lim.maxModelLen
	if maxLen == 0 {
		maxLen = arch.MaxPositionEmbeddings
	} else if maxLen > arch.MaxPositionEmbeddings {
		// vLLM refuses a max_model_len beyond the model's trained context.
		return &config.Error{Field: lim.fieldOf("max_model_len"),
			Msg: fmt.Sprintf("%d exceeds %s's max_position_embeddings (%d)", maxLen, arch.Name, arch.MaxPositionEmbeddings)}
	}
	if lim.ofFree {
		// TensorRT-LLM lowers max_seq_len to what the KV cache holds (a
		// request longer than the cache is refused at arrival)
		maxLen = min(maxLen, blocks*lim.blockSize)
	} else if err := checkKVHoldsMaxModelLen(pl, &e.Scheduler, blockSize, stateBlocks, blocks, maxLen, arch.KVBytesPerToken(pl.tp, kvDtype.Bytes())); err != nil {
		return err
	}
	prefix, align := lim.prefixCaching, false
	if hybrid {
		prefix, align, pl.args = vllmHybridArgs(e.Scheduler.MambaCacheMode, prefix, e.Backend == config.BackendVLLM && vllmHybridPrefixDefault(e), hy, stateBlocks)
	}
	pl.cfg = engine.Config{
		MaxNumSeqs: lim.maxSeqs, MaxNumBatchedTokens: lim.maxTokens, BlockSize: blockSize,
		NumBlocks: blocks, MaxModelLen: maxLen, PrefixCaching: prefix, Options: engines.Options(e, pl.spec),
		StateBlocks: stateBlocks, MambaAlign: align,
	}
	if states != nil {
		pl.cfg.Options, pl.args = states.options(pl.cfg.Options), states.args()
	}
	return nil
}

// vllmHybridPrefixDefault reports whether engine.backend_version's release
// keeps prefix caching on for hybrid models by default (vLLM 0.28.0 and
// later, config.VersionDefaults.HybridPrefixCaching); false without a
// version, as before.
func vllmHybridPrefixDefault(e *config.Engine) bool {
	d, _ := e.VLLMReleaseDefaults()
	return d.HybridPrefixCaching
}

// vllmHybridArgs resolves how vLLM caches a hybrid model (one with
// recurrent state): engine.scheduler.mamba_cache_mode "align" with prefix
// caching caches its states at block boundaries (align true), and so does a
// mode left out when the release keeps prefix caching on for hybrid models
// (hybridDefault: vLLM 0.28.0 and later turn the default "none" into
// "align"); any other setting runs without prefix caching, as vLLM before
// 0.28.0 does by default for hybrid models (enable_prefix_caching False when
// model_config.is_hybrid) and in "none" mode. It returns the prefix caching
// and align mode the worker runs with and the engine arguments the report
// gives (metadata.pools[].engine_args): the block size and KV cache groups
// of vLLM's hybrid manager (perf.HybridKV).
func vllmHybridArgs(mode string, prefix, hybridDefault bool, hy perf.HybridKV, stateBlocks int) (bool, bool, map[string]any) {
	align := (mode == config.MambaCacheModeAlign || mode == "" && hybridDefault) && prefix
	resolved := config.MambaCacheModeNone
	if align {
		resolved = config.MambaCacheModeAlign
	}
	args := map[string]any{"block_size": hy.BlockSize, "enable_prefix_caching": align, "mamba_cache_mode": resolved,
		"kv_cache_groups": map[string]any{"layers_per_group": hy.GroupSize, "attention": hy.AttnGroups, "state": hy.StateGroups},
		"page_bytes":      hy.PageBytes, "state_bytes_per_layer": hy.StateBytesPerLayer, "state_blocks_per_request": stateBlocks}
	if mode == "" && prefix && !hybridDefault {
		args["note"] = "vLLM turns prefix caching off by default for hybrid models; engine.scheduler.mamba_cache_mode: align serves them with --enable-prefix-caching (align mode)"
	}
	return align, align, args
}

// memoryCulprit names the spec field to change when a worker's memory plan
// leaves no KV block (capacity C bytes per GPU; pool is the pool's field):
// gpu_memory_utilization (TensorRT-LLM: free_gpu_memory_fraction) when the
// model would fit with all of C usable, max_num_batched_tokens (max_num_tokens)
// when it would fit with the smallest activation reserve, else the pool's tp
// (the weights per GPU are too large).
func memoryCulprit(p perf.MemoryPlan, capacity int64, pool string, lim limits) string {
	fixed := p.WeightBytes + p.NCCLBytes + p.OtherBytes + p.KVBytesPerToken*int64(p.BlockSize)
	switch {
	case fixed+p.ActivationBytes <= capacity:
		return lim.fieldOf("memory")
	case fixed+perf.MinActivationBytes <= capacity:
		return lim.fieldOf("max_num_batched_tokens")
	}
	return pool + ".tp"
}

// checkKVHoldsMaxModelLen refuses a deployment whose KV cache cannot hold one
// request of maxLen tokens, as vLLM refuses to start
// (vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory): one request
// needs ⌈maxLen / block_size⌉ blocks, and the largest max_model_len that fits
// is blocks × block_size (vLLM's estimate_max_model_len finds the same by
// binary search). The cache is the worker's: derived from memory, or
// num_gpu_blocks when the spec gives it (vLLM checks its memory before
// applying num_gpu_blocks_override; here the cache the worker will run with
// is the one that must hold the request). A hybrid model's request also
// holds stateBlocks blocks for its recurrent state (perf.HybridKV), and its
// blocks are bs tokens (vLLM's attention block size for it).
// kvBytesPerToken (per GPU) puts the sizes in GiB, as vLLM states them.
func checkKVHoldsMaxModelLen(pl *pool, sc *config.Scheduler, bs, stateBlocks, blocks, maxLen int, kvBytesPerToken int64) error {
	need := (maxLen+bs-1)/bs + stateBlocks
	if need <= blocks {
		return nil
	}
	const gib = 1 << 30
	which := "set"
	if sc.MaxModelLen == 0 {
		which = "default: the model's max_position_embeddings"
	}
	cache := "derived from GPU memory"
	if sc.NumGPUBlocks > 0 {
		cache = "num_gpu_blocks"
	}
	return &config.Error{Field: "engine.scheduler.max_model_len", Infeasible: true, Msg: fmt.Sprintf(
		"to serve one request of max_model_len (%d tokens, %s), a worker needs %d KV blocks of %d tokens "+
			"(%.2f GiB of KV cache per GPU), more than the KV cache of one %s worker (tp %d) holds: %d blocks, %d tokens "+
			"(%.2f GiB, %s). Based on the cache, the largest max_model_len that fits is %d: lower max_model_len, "+
			"or give the KV cache more room (gpu_memory_utilization, tp, quantization.kv_cache: fp8)",
		maxLen, which, need, bs, float64(int64(need*bs)*kvBytesPerToken)/gib, pl.name, pl.tp,
		blocks, blocks*bs, float64(int64(blocks*bs)*kvBytesPerToken)/gib, cache, (blocks-stateBlocks)*bs)}
}

// overlap reports whether the deployment's engine forms a pass while the
// previous one runs (a request reaching a busy worker waits in its inbox).
func (d *deployment) overlap() bool {
	for _, p := range d.pools {
		if p.overlap {
			return true
		}
	}
	return false
}

// gpus is the GPU count of the pool: workers × TP × DP.
func (pl *pool) gpus() int { return pl.count * pl.tp * pl.dp }

// gpus is the GPU count of the deployment.
func (d *deployment) gpus() int {
	n := 0
	for _, p := range d.pools {
		n += p.gpus()
	}
	return n
}

// transferNs is the KV transfer time of a prompt of tokens:
// bytes / bandwidth + latency, bytes = tokens × KV bytes per token, plus a
// hybrid model's recurrent state (transferStateNs).
func (d *deployment) transferNs(tokens int) int64 {
	kv := clock.Span(float64(tokens) * float64(d.transferBytesTok) / d.transferBytesPerNs)
	return clock.Add(clock.Add(kv, d.transferStateNs), d.transferLatencyNs)
}

// metadata describes the deployment as run: per pool its workers, KV capacity,
// busy time, passes, KV block and prefix-cache counters, and the GPU hours of
// the pool; the measured window's start and the trace's time origin.
func (d *deployment) metadata(s *config.Spec, m *sim) report.Metadata {
	pools := make([]report.Pool, len(d.pools))
	durH := float64(m.acc.WindowNs()) / 3.6e12
	for pi, p := range d.pools {
		ws := m.pools[pi].workers
		pl := report.Pool{Name: p.name, Workers: p.count, TP: p.tp, GPUs: p.gpus(),
			GPUHours: float64(p.gpus()) * durH, NumGPUBlocks: p.cfg.NumBlocks, PerfModel: p.perf.Name(),
			KVBlocks: make([]report.KVBlocks, len(ws)), PrefixCache: make([]report.PrefixCache, len(ws)),
			WorkerBusyMs: make([]float64, len(ws)), WorkerPasses: make([]int64, len(ws)),
			RecomputedTokens: make([]int64, len(ws)), EngineArgs: p.args}
		for i, w := range ws {
			c := w.Counters()
			st := c.KV
			pl.KVBlocks[i] = report.KVBlocks{Allocated: st.Allocated, Reused: st.Reused, Released: st.Released,
				Evicted: st.Evicted, Free: int64(c.KVFree - c.KVCached), Cached: int64(c.KVCached)}
			ps := c.PrefixCache
			pl.PrefixCache[i] = report.PrefixCache{Requests: ps.Requests, Queries: ps.Queries, Hits: ps.Hits,
				PreemptedRequests: ps.PreemptedRequests, PreemptedQueries: ps.PreemptedQueries, PreemptedHits: ps.PreemptedHits}
			pl.WorkerBusyMs[i] = float64(c.BusyNs) / 1e6
			pl.WorkerPasses[i] = c.Passes
			pl.RecomputedTokens[i] = c.RecomputedTokens
		}
		if p.dp > 1 || p.ep {
			dp, ep := p.dp, p.ep
			pl.DataParallelSize, pl.EnableExpertParallel = &dp, &ep
		}
		pools[pi] = pl
	}
	first := d.pools[0]
	out := report.Metadata{
		AisimulateVersion: version.String(), Pools: pools, Disaggregated: d.disagg, PerfModel: first.perf.Name(),
		Model: d.arch.Name, System: d.sys.Name, GPUs: d.gpus(), BlockSize: first.cfg.BlockSize,
		MaxModelLen: first.cfg.MaxModelLen, KVCacheDtype: string(d.kvDtype), WeightDtype: string(d.arch.WeightDtype),
		Spec: s.JSON(), Benchmark: m.bench,
	}
	if ed := d.arch.ExpertDtype(); ed != "" && ed != d.arch.WeightDtype {
		out.ExpertDtype = string(ed)
	}
	if m.bench != nil { // the spec as given: its benchmark, not the traffic it made
		g := *s
		g.Traffic = m.given
		out.Spec = g.JSON()
	}
	if !d.disagg { // the aggregated pool's figures at the top level, as before
		p := pools[0]
		out.KVBlocks, out.PrefixCache, out.RecomputedTokens = p.KVBlocks, p.PrefixCache, p.RecomputedTokens
		out.WorkerBusyMs, out.WorkerPasses = p.WorkerBusyMs, p.WorkerPasses
		out.NumGPUBlocks, out.Workers, out.TP = &p.NumGPUBlocks, &p.Workers, &p.TP
		kvb := d.arch.KVBytesPerToken(first.tp, d.kvDtype.Bytes())
		if first.memory != nil && s.Engine.Backend == config.BackendTRTLLM {
			kvb = first.memory.KVBytesPerToken // TensorRT-LLM's layout (trtllmWindows)
		}
		out.KVBytesPerToken = &kvb
		out.DataParallelSize, out.EnableExpertParallel = p.DataParallelSize, p.EnableExpertParallel
	} else {
		out.KVTransferBytesPerToken = &d.transferBytesTok
	}
	// the measured window's start (summary.duration_ms runs from it), and the
	// trace's time origin: the offset removed from its timestamps
	out.WindowStartMs = float64(m.acc.FirstSendNs()) / 1e6
	if o, ok := m.tr.src.(workload.TimeOriginer); ok {
		if ms, text, ok := o.TimeOrigin(); ok {
			out.TraceTimeOriginMs, out.TraceTimeOrigin = json.Number(ms), text
		}
	}
	if n, ok := m.tr.src.(workload.SessionNamer); ok && n.SessionNames() != nil {
		out.TraceSessionIDs = n.SessionNames()
	}
	if n := m.tr.warmSent; n > 0 {
		end := float64(m.tr.warmEndNs) / 1e6
		out.WarmupRequests, out.WarmupEndMs = n, &end
	}
	if v := s.Engine.BackendVersion; v != "" {
		out.BackendVersion = backendVersionMetadata(v, s.Engine.Backend)
	}
	// perf models with provenance (aic: the tables read, versions, stand-ins)
	if pm, ok := first.perf.(interface{ Metadata() map[string]any }); ok {
		out.PerfMetadata = pm.Metadata()
	}
	return out
}

// vllmCUDAGraphs is vLLM's default CUDA graphs for a pool of these limits
// on a GPU of compute capability sm: with engine.backend_version, the
// release's capture rule (perf.VLLMGraphs from config.VersionDefaults, with
// speculative_config's 1 + num_speculative_tokens per decode) and its
// largest graph; without one, the largest size min(2 × max_num_seqs × q,
// 512, max_num_batched_tokens), q = 1 + num_speculative_tokens as in every
// release from 0.13.0, and the zero rule (perf.CUDAGraphTokens' padding, as
// before the rules depended on the release).
func vllmCUDAGraphs(e *config.Engine, sm, maxSeqs, maxTokens int) (top int, graphs perf.VLLMGraphs) {
	q := 1
	if sp := e.Scheduler.SpeculativeConfig; sp != nil {
		q += sp.NumSpeculativeTokens
	}
	d, ok := e.VLLMReleaseDefaults()
	if !ok {
		return perf.CUDAGraphMaxTokensUpTo(maxSeqs*q, maxTokens, perf.DefaultCUDAGraphCeiling), graphs
	}
	graphs = perf.VLLMGraphs{MaxNumSeqs: maxSeqs, MaxNumBatchedTokens: maxTokens, QueryLen: q,
		Ceiling: d.MaxCUDAGraphSize(sm), SpecCeiling: d.SpecCUDAGraphCeiling, CaptureTokenBudget: d.CaptureTokenBudget,
		UniformDecodeSizes: d.UniformDecodeGraphs, CaptureMaxNumSeqs: d.CaptureMaxNumSeqs, RunnerV2: d.ModelRunnerV2,
		SplitSizes: d.SplitCUDAGraphs, WideGrids: d.SplitCUDAGraphs && sm/10 == 10}
	sizes := graphs.Sizes()
	return sizes.Max(), graphs
}

// backendVersionMetadata describes engine.backend_version v (which Validate
// resolved) of backend: the release and the notes on it and its defaults.
func backendVersionMetadata(v, backend string) *report.BackendVersion {
	rel, note, _ := config.ResolveEngineVersion(v, backend)
	out := &report.BackendVersion{Given: v, Release: rel.String()}
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	switch backend {
	case config.BackendTRTLLM:
		out.Notes = append(out.Notes, config.TRTLLMDefaults(rel).Notes...)
	case config.BackendSGLang:
		// SGLang's defaults by release are the pools' resolved arguments
		// (metadata.pools[].engine_args, "defaults_rule")
	default:
		out.Notes = append(out.Notes, config.VLLMDefaults(rel).Notes...)
	}
	return out
}
