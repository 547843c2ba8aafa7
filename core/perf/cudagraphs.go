package perf

import (
	"math"
	"slices"
)

// VLLMGraphs is what decides vLLM's default CUDA-graph capture sizes (no
// compilation_config given, cudagraph_mode FULL_AND_PIECEWISE) for one
// engine: its limits and the rules of its release, which
// config.VersionDefaults names. It is comparable (a perf model's cache key);
// Sizes derives the captured token counts. The zero value is no rule: the
// perf sources then pad as CUDAGraphTokens (the rule before
// engine.backend_version was read here).
type VLLMGraphs struct {
	// MaxNumSeqs and MaxNumBatchedTokens are the scheduler's limits.
	MaxNumSeqs, MaxNumBatchedTokens int
	// QueryLen is a decode's tokens per step: 1 + num_speculative_tokens.
	QueryLen int
	// Ceiling is the platform's default largest size, 512 (1,024 on compute
	// capability 10.x from 0.28.0: config.VersionDefaults.MaxCUDAGraphSize).
	Ceiling int
	// SpecCeiling: the largest size is max_num_seqs × QueryLen × 2, not
	// max_num_seqs × 2, under the ceiling (from 0.13.0: _set_cudagraph_sizes'
	// decode_query_len in vllm/config/vllm.py; 0.12.0 has none).
	SpecCeiling bool
	// CaptureTokenBudget: max_num_batched_tokens is captured when it is the
	// largest size (from 0.21.0: "ensure max_num_tokens is captured if
	// within max capture size").
	CaptureTokenBudget bool
	// UniformDecodeSizes: with QueryLen > 1 the sizes n × QueryLen for n on
	// the request grid up to max_num_seqs are captured (from 0.29.0:
	// uniform_decode_sizes, request_counts); with CaptureMaxNumSeqs and
	// QueryLen 1, max_num_seqs is (from 0.31.0: uniform_decode_sizes =
	// [max_num_seqs]).
	UniformDecodeSizes, CaptureMaxNumSeqs bool
	// RunnerV2: the V2 model runner (vllm/v1/worker/gpu, the default from
	// 0.29.0) captures the uniform-decode graphs at the sizes rounded up to
	// multiples of QueryLen and the mixed graphs at the sizes themselves
	// (CudaGraphManager._init_candidates, cudagraph_utils.py); the V1 runner
	// rounds every size (CompilationConfig.adjust_cudagraph_sizes_for_spec_decode).
	RunnerV2 bool
	// SplitSizes: from 0.34.0 decode graphs are keyed on request counts
	// (VllmConfig._split_cudagraph_capture_sizes, vllm/config/vllm.py);
	// WideGrids, on compute capability 10.x, gives mixed passes the prefill
	// grid up to min(8192, max_num_batched_tokens) tokens and decodes the
	// request grid up to max_num_seqs (prefill_cudagraph_capture_grid,
	// decode_cudagraph_capture_grid in vllm/config/compilation.py).
	SplitSizes, WideGrids bool
}

// CUDAGraphs is the token counts of the CUDA graphs an engine captured, as
// a pass is padded to them.
type CUDAGraphs struct {
	// Mixed is the graphs any pass may replay, ascending.
	Mixed []int
	// Decode is the graphs only a uniform decode (every request QueryLen
	// tokens, no prefill) replays, ascending, tried first; nil: Mixed serve
	// decodes as any pass.
	Decode   []int
	QueryLen int
}

// Max is the largest graph, tokens: a larger pass runs eagerly. 0 without
// graphs.
func (g CUDAGraphs) Max() int {
	m := 0
	if n := len(g.Mixed); n > 0 {
		m = g.Mixed[n-1]
	}
	if n := len(g.Decode); n > 0 {
		m = max(m, g.Decode[n-1])
	}
	return m
}

// Pad is the token count a pass of x tokens runs at: the smallest graph
// holding it, a uniform decode's first (Decode), else x (eager). Both
// dispatchers pick so: vllm/v1/cudagraph_dispatcher.py's
// bs_to_padded_graph_size, and the V2 runner's candidates for x
// (CudaGraphManager.dispatch), FULL decode graphs before PIECEWISE ones.
func (g CUDAGraphs) Pad(x int, uniformDecode bool) int {
	if x <= 0 {
		return x
	}
	if uniformDecode {
		if i, _ := slices.BinarySearch(g.Decode, x); i < len(g.Decode) {
			return g.Decode[i]
		}
	}
	if i, _ := slices.BinarySearch(g.Mixed, x); i < len(g.Mixed) {
		return g.Mixed[i]
	}
	return x
}

// UniformDecode reports whether b is a uniform decode for graphs of
// QueryLen q: decodes only, each verifying q − 1 drafts.
func (b *Batch) UniformDecode(q int) bool {
	return b.Decodes > 0 && b.SpecTokens == b.Decodes*(q-1) && b.PrefillTokens() == 0
}

// strideSizes is vLLM's default size list up to top: 1, 2, 4, the
// multiples of 8 below 256 and of 16 from 256 (_set_cudagraph_sizes).
func strideSizes(top int) []int {
	var s []int
	for _, n := range []int{1, 2, 4} {
		if n <= top {
			s = append(s, n)
		}
	}
	for n := 8; n < min(top+1, 256); n += 8 {
		s = append(s, n)
	}
	for n := 256; n <= top; n += 16 {
		s = append(s, n)
	}
	return s
}

// Sizes derives the captured graphs (nil lists: none):
//
//	top₀ = min(max_num_seqs × q × 2, ceiling)   (q = 1 without SpecCeiling)
//	top  = min(top₀, max_num_batched_tokens)
//	S    = strideSizes(top) ∪ {max_num_batched_tokens if ≤ top}   (CaptureTokenBudget)
//	       ∪ {n·q ≤ top₀, ≤ max_num_batched_tokens: n on strideSizes(m) ∪ {m}},
//	         m = min(max_num_seqs, ceiling)   (UniformDecodeSizes, q > 1)
//	       ∪ {max_num_seqs if ≤ top₀, ≤ max_num_batched_tokens}   (CaptureMaxNumSeqs, q = 1)
//
// the largest of S the largest graph (valid_max_size). With q > 1 the V1
// runner replays the sizes of S rounded up to multiples of q, those not
// above max S (or [q]); the V2 runner mixed passes at S and decodes at those
// rounded sizes at most q × max_num_seqs; from 0.34.0 decodes at n·q for
// the request counts n = min(⌈s/q⌉, max_num_seqs) of S within max S (with
// WideGrids the request grid and the prefill grid), each at most
// min(max_num_seqs, max_num_batched_tokens / q) (decode_cudagraph_capture_shapes).
func (v VLLMGraphs) Sizes() CUDAGraphs {
	q := max(v.QueryLen, 1)
	out := CUDAGraphs{QueryLen: q}
	if v.MaxNumSeqs <= 0 || v.MaxNumBatchedTokens <= 0 || v.Ceiling <= 0 {
		return out
	}
	mbt := v.MaxNumBatchedTokens
	qTop := 1
	if v.SpecCeiling {
		qTop = q
	}
	top0 := min(v.MaxNumSeqs*qTop*2, v.Ceiling)
	top := min(top0, mbt)
	s := strideSizes(top)
	if v.CaptureTokenBudget && mbt <= top {
		s = append(s, mbt)
	}
	switch {
	case v.UniformDecodeSizes && q > 1:
		m := min(v.MaxNumSeqs, v.Ceiling)
		for _, n := range append(strideSizes(m), m) {
			if u := n * q; u <= top0 && u <= mbt {
				s = append(s, u)
			}
		}
	case v.CaptureMaxNumSeqs && q == 1 && v.MaxNumSeqs <= top0 && v.MaxNumSeqs <= mbt:
		s = append(s, v.MaxNumSeqs)
	}
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 {
		return out
	}
	smax := s[len(s)-1]
	switch {
	case v.SplitSizes:
		out.Mixed, out.Decode = v.splitSizes(s, q)
	case q == 1:
		out.Mixed = s
	case v.RunnerV2:
		out.Mixed = s
		out.Decode = roundedSizes(s, q, min(smax, q*v.MaxNumSeqs))
	default: // V1: adjust_cudagraph_sizes_for_spec_decode
		out.Mixed = roundedSizes(s, q, smax)
		if len(out.Mixed) == 0 && q <= smax {
			out.Mixed = []int{q}
		}
	}
	return out
}

// roundedSizes is {⌈s/q⌉·q ≤ limit : s ∈ sizes}, ascending.
func roundedSizes(sizes []int, q, limit int) []int {
	var r []int
	for _, s := range sizes {
		if u := (s + q - 1) / q * q; u <= limit {
			r = append(r, u)
		}
	}
	return slices.Compact(r) // sizes ascending: so are the rounded
}

// splitSizes is 0.34.0's mixed and decode graphs for the shared sizes s
// (VllmConfig._split_cudagraph_capture_sizes).
func (v VLLMGraphs) splitSizes(s []int, q int) (mixed, decode []int) {
	mbt, seqs := v.MaxNumBatchedTokens, v.MaxNumSeqs
	var reqs []int
	decodeTokens := mbt
	if v.WideGrids {
		mixed = prefillGrid(min(8192, mbt))
		reqs = decodeGrid(seqs)
		decodeTokens = min(mbt, 8192) // max_decode_cudagraph_capture_tokens
	} else {
		mixed = s
		smax := s[len(s)-1]
		for _, x := range s {
			if n := (x + q - 1) / q; n*q <= smax {
				reqs = append(reqs, min(n, seqs))
			}
		}
		slices.Sort(reqs)
		reqs = slices.Compact(reqs)
	}
	// decode_cudagraph_capture_shapes: the first count above the limit is
	// captured at the limit, larger ones are unreachable
	limit := min(seqs, decodeTokens/q)
	if limit < 1 {
		return mixed, nil
	}
	for _, n := range reqs {
		decode = append(decode, min(n, limit)*q)
		if n >= limit {
			break
		}
	}
	decode = slices.Compact(decode)
	if q == 1 && !v.WideGrids {
		// every decode graph is a mixed size too, and the mixed graphs
		// pad a decode to the same size: one list
		return mixed, nil
	}
	return mixed, decode
}

// walkGrid is vLLM's _walk_grid (vllm/config/compilation.py of 0.34.0):
// 1 and then each next multiple of the largest power of two not above
// step(size), below limit, and limit.
func walkGrid(limit int, step func(float64) float64) []int {
	if limit <= 0 {
		return nil
	}
	var g []int
	for size := 1; size < limit; {
		g = append(g, size)
		stride, v := 1, max(1, step(float64(size)))
		for float64(stride*2) <= v {
			stride *= 2
		}
		size = (size/stride + 1) * stride
	}
	return append(g, limit)
}

// prefillGrid is prefill_cudagraph_capture_grid(maxTokens) (not
// interactivity): step min(t, max(8, t/4), 0.07 × max(t, 4096)).
func prefillGrid(maxTokens int) []int {
	return walkGrid(maxTokens, func(t float64) float64 { return min(t, max(8, t/4), 0.07*max(t, 4096)) })
}

// decodeGrid is decode_cudagraph_capture_grid(maxRequests): step
// 0.65 × n^(2/3).
func decodeGrid(maxRequests int) []int {
	return walkGrid(maxRequests, func(n float64) float64 { return 0.65 * math.Pow(n, 2.0/3) })
}

// IsZero reports whether v names no rule (the legacy CUDAGraphTokens padding).
func (v VLLMGraphs) IsZero() bool { return v == VLLMGraphs{} }

// GraphsOf is the sizes of rule v, nil for the zero rule.
func GraphsOf(v VLLMGraphs) *CUDAGraphs {
	if v.IsZero() {
		return nil
	}
	g := v.Sizes()
	return &g
}

// PadBatch is the tokens b's MoE layers compute: b.Tokens() padded to the
// graphs cg (nil: CUDAGraphTokens under top).
func PadBatch(cg *CUDAGraphs, b *Batch, top int) int {
	if cg == nil {
		return CUDAGraphTokens(b.Tokens(), top)
	}
	return cg.Pad(b.Tokens(), b.UniformDecode(cg.QueryLen))
}

// PadGroup is PadBatch for the lockstep DP ranks bs whose largest pass is
// maxX tokens: a uniform decode when every rank that runs one is (vLLM
// coordinates the uniform-decode flag across the DP ranks, an idle rank's
// dummy batch following it).
func PadGroup(cg *CUDAGraphs, bs []Batch, maxX, top int) int {
	if cg == nil {
		return CUDAGraphTokens(maxX, top)
	}
	uniform := false
	for i := range bs {
		if bs[i].Tokens() == 0 {
			continue
		}
		if !bs[i].UniformDecode(cg.QueryLen) {
			uniform = false
			break
		}
		uniform = true
	}
	return cg.Pad(maxX, uniform)
}
