package replay

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aisimulate/aisimulate/core/config"
)

// randomSpec draws a small replay that mixes what changes a decoding
// request's passes: KV caches small enough to preempt and evict, a token
// budget that cuts prompts into chunks, P/D, sessions, Mooncake rows with
// shared prefixes, open and closed loops (with a warm-up phase or not), the
// client path (detokenization jobs, send leg, response overhead, jitter, a
// serial client), async scheduling, both block sizes of the checks, both analytic perf sources, and
// models whose decodes read at most W keys in some layers (sliding-window and
// sparse attention: the window sums the steady set keeps in aggregate).
func randomSpec(t *testing.T, rng *rand.Rand) string {
	var b strings.Builder
	blocks, bs := []int{24, 60, 200, 2000}[rng.IntN(4)], []int{8, 16}[rng.IntN(2)]
	perf := "{source: linear, base_ms: 1, per_prefill_token_ms: 0.01, per_decode_seq_ms: 0.05}"
	if rng.IntN(3) == 0 {
		perf = "{source: roofline}"
	}
	// a model with decode windows (perf.WindowUser) in a third of the
	// trials: gpt-oss-20b (sliding window of 128 on every other layer),
	// alone or as two data-parallel ranks in lockstep, or MiniMax-M3's
	// block-sparse layers (2,176 kept keys) at TP 4
	windowed := ""
	if _, err := os.Stat(sharedModelConfigs); err == nil && rng.IntN(3) == 0 {
		windowed = []string{"gpt-oss", "gpt-oss-dp2", "m3"}[rng.IntN(3)]
	}
	switch windowed {
	case "":
		fmt.Fprintf(&b, "engine:\n  model: Qwen/Qwen3-8B\n  system: h100_sxm\n  perf: %s\n", perf)
	case "m3":
		fmt.Fprintf(&b, "engine:\n  model: nvidia/MiniMax-M3-NVFP4\n  model_config_dir: %s\n  system: b200_sxm\n  perf: {source: roofline}\n", sharedModelConfigs)
	default:
		fmt.Fprintf(&b, "engine:\n  model: openai/gpt-oss-20b\n  model_config_dir: %s\n  system: h100_sxm\n  perf: {source: roofline}\n", sharedModelConfigs)
	}
	switch {
	case windowed == "m3":
		fmt.Fprintf(&b, "  workers: {aggregated: {count: %d, tp: 4}}\n", 1+rng.IntN(2))
	case windowed == "gpt-oss-dp2":
		fmt.Fprintf(&b, "  workers: {aggregated: {count: 1, tp: 1, data_parallel_size: 2, enable_expert_parallel: %v}}\n", rng.IntN(2) == 0)
	case rng.IntN(3) == 0:
		fmt.Fprintf(&b, "  workers: {disaggregated: {prefill: {count: %d}, decode: {count: %d}, kv_transfer: {bandwidth_gb_per_s: %d, latency_ms: 0.2, kv_bytes_per_token: 100000}}}\n",
			1+rng.IntN(2), 1+rng.IntN(2), []int{5, 50}[rng.IntN(2)])
	default:
		fmt.Fprintf(&b, "  workers: {aggregated: {count: %d, placement: %s}}\n", 1+rng.IntN(3),
			[]string{"round_robin", "least_outstanding"}[rng.IntN(2)])
	}
	fmt.Fprintf(&b, "  scheduler: {num_gpu_blocks: %d, block_size: %d, max_model_len: %d, max_num_seqs: %d, max_num_batched_tokens: %d, enable_prefix_caching: %v, async_scheduling: %v}\n",
		blocks, bs, blocks*bs, []int{2, 8, 32}[rng.IntN(3)], []int{64, 256, 2048}[rng.IntN(3)], rng.IntN(4) != 0, rng.IntN(4) == 0)
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "  tokenization: {send_ms: %v}\n", []float64{0, 0.3}[rng.IntN(2)])
	}
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "  detokenization: {base_us: %d, per_token_us: %d}\n", []int{0, 200}[rng.IntN(2)], []int{0, 50, 2000}[rng.IntN(3)])
	}
	maxLen := min(blocks*bs, 3000)
	b.WriteString("traffic:\n")
	load := []string{"{mode: rate, rate_rps: 300, arrival: poisson", "{mode: concurrency, concurrency: 6"}[rng.IntN(2)]
	switch rng.IntN(3) {
	case 0:
		fmt.Fprintf(&b, "  source: {type: synthetic, num_requests: %d, isl: {kind: uniform, min: 1, max: %d}, osl: {kind: uniform, min: 1, max: 120}}\n",
			5+rng.IntN(60), maxLen/2)
		if strings.Contains(load, "concurrency") && rng.IntN(2) == 0 {
			load += fmt.Sprintf(", warmup_requests: %d", 1+rng.IntN(4)) // warm-up tokens are not measured
		}
	case 1:
		fmt.Fprintf(&b, "  source: {type: sessions, num_sessions: %d, turns: {kind: uniform, min: 1, max: 4}, isl: {kind: uniform, min: 1, max: %d}, osl: {kind: uniform, min: 1, max: 80}}\n",
			2+rng.IntN(8), maxLen/8)
	default:
		rows := make([]traceRow, 5+rng.IntN(40))
		ts := 0.0
		for i := range rows {
			ts += float64(rng.IntN(4)) * 3
			in := 1 + rng.IntN(maxLen/2)
			ids := make([]int, rng.IntN((in+511)/512+1))
			for k := range ids {
				ids[k] = rng.IntN(4) // shared prefixes
			}
			rows[i] = traceRow{ts: ts, in: in, out: rng.IntN(120), hashes: ids}
		}
		fmt.Fprintf(&b, "  source: {type: mooncake, path: %s}\n", writeTrace(t, rows))
		if rng.IntN(2) == 0 {
			load = "{mode: trace"
		}
	}
	if rng.IntN(2) == 0 {
		load += ", response_overhead: {base_ms: 1.4, per_output_token_us: 3.65, jitter_ms: " +
			[]string{"0", "0.5"}[rng.IntN(2)] + ", serial: " + []string{"false", "true"}[rng.IntN(2)] + "}"
	}
	if rng.IntN(6) == 0 {
		load += ", request_timeout_ms: 60"
	}
	fmt.Fprintf(&b, "  load: %s}\nexecution: {seed: %d}\n", load, rng.IntN(1000))
	return b.String()
}

// Every report and every pass of the timeline are the same whether steady
// decoding requests advance in aggregate (the default) or one by one at every
// pass (WithPerTokenDecode, the per-request walk vLLM's scheduler does).
func TestSteadyDecodeEqualsPerTokenProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 18))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	for trial := 0; trial < trials; trial++ {
		yml := randomSpec(t, rng)
		s, err := config.DecodeYAML([]byte(yml))
		require.NoError(t, err, yml)
		a, errA := Run(s, WithTimeline())
		b, errB := Run(s, WithTimeline(), WithPerTokenDecode())
		if errB != nil {
			require.EqualError(t, errA, errB.Error(), "trial %d\n%s", trial, yml)
			continue
		}
		require.NoError(t, errA, "trial %d\n%s", trial, yml)
		for i := range min(len(a.Timeline.Passes), len(b.Timeline.Passes)) {
			require.Equal(t, b.Timeline.Passes[i], a.Timeline.Passes[i], "trial %d: pass %d\n%s", trial, i, yml)
		}
		ja, err := a.JSON()
		require.NoError(t, err)
		jb, err := b.JSON()
		require.NoError(t, err)
		require.Equal(t, string(jb), string(ja), "trial %d\n%s", trial, yml)
		require.Equal(t, b.Timeline, a.Timeline, "trial %d\n%s", trial, yml)
	}
}
