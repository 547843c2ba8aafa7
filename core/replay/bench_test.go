package replay

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// clientPathOn adds the reference client path of docs/design.md (AIPerf
// calibration: send leg 0.255 ms, overhead 1.40 ms + 3.65 µs/token) and a
// detokenizer of 150 µs + 2 µs/token.
func clientPathOn(yml string) string {
	yml = replaceOnce(yml, "  scheduler:", "  tokenization: {send_ms: 0.255}\n  detokenization: {base_us: 150, per_token_us: 2.0}\n  scheduler:")
	return replaceOnce(yml, "  load: {", "  load: {response_overhead: {base_ms: 1.40, per_output_token_us: 3.65}, ")
}

const benchMooncake = `
engine:
  model: Qwen/Qwen3-32B
  system: h100_sxm
  workers:
    aggregated: {count: 4, tp: 2}
  scheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192, block_size: 16}
traffic:
  source: {type: mooncake, path: ` + mooncakeTrace + `}
  load: {mode: trace}
`

const benchClosedLoop = `
engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  system: h100_sxm
  workers:
    aggregated: {count: 8, tp: 1}
  scheduler: {max_num_seqs: 512, max_num_batched_tokens: 8192, block_size: 16}
traffic:
  source: {type: synthetic, num_requests: %d, isl: 512, osl: 128}
  load: {mode: concurrency, concurrency: %d}
`

// benchRuns decodes the spec yml and replays it b.N times, handing each
// report to each: the set-up and loop every replay benchmark shares.
func benchRuns(b *testing.B, yml string, each func(*report.Report)) {
	s, err := config.DecodeYAML([]byte(yml))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		rep, err := Run(s)
		if err != nil {
			b.Fatal(err)
		}
		each(rep)
	}
}

// benchReplay runs a replay per iteration and reports host µs per simulated
// output token and simulated requests per second of host time.
func benchReplay(b *testing.B, yml string) {
	b.ReportAllocs()
	var tokens, reqs int64
	benchRuns(b, yml, func(rep *report.Report) {
		tokens += rep.Summary.TotalOutputTokens
		reqs += int64(len(rep.Records))
	})
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec*1e6/float64(tokens), "µs/out_token")
	b.ReportMetric(float64(reqs)/sec, "sim_req/s")
}

func BenchmarkReplay(b *testing.B) {
	if _, err := os.Stat(mooncakeTrace); err == nil {
		b.Run("mooncake/client=off", func(b *testing.B) { benchReplay(b, benchMooncake) })
		b.Run("mooncake/client=on", func(b *testing.B) { benchReplay(b, clientPathOn(benchMooncake)) })
	}
	loop := fmt.Sprintf(benchClosedLoop, 4096*20, 4096)
	b.Run("closed4096/client=off", func(b *testing.B) { benchReplay(b, loop) })
	b.Run("closed4096/client=on", func(b *testing.B) { benchReplay(b, clientPathOn(loop)) })
}

// benchMoEModel is Qwen3-30B-A3B (48 layers, 128 experts of 768, top 8);
// its dense twin has the same attention and one dense FFN of the active
// experts' width, 8 × 768 = 6144 (the dense model of the same active size).
const benchMoEModel = sharedModelConfigs + "/Qwen--Qwen3-30B-A3B_config.json"

const benchDenseTwin = `{"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 48, "hidden_size": 2048,
 "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
 "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": false}`

const benchMoEMooncake = `
engine:
  model: %s
  system: h100_sxm
  workers:
    aggregated: {count: %d, tp: 2%s}
  scheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192, block_size: 16}
traffic:
  source: {type: mooncake, path: ` + mooncakeTrace + `}
  load: {mode: trace}
`

// BenchmarkReplayMoE: the Mooncake trace on a MoE model against its dense
// twin (docs/benchmarks.md), and the MoE model with data-parallel ranks in
// lockstep and expert parallelism.
func BenchmarkReplayMoE(b *testing.B) {
	if _, err := os.Stat(mooncakeTrace); err != nil {
		b.Skip("shared Mooncake trace not present")
	}
	if _, err := os.Stat(benchMoEModel); err != nil {
		b.Skip("shared model configs not present")
	}
	twin := b.TempDir() + "/config.json"
	if err := os.WriteFile(twin, []byte(benchDenseTwin), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("moe", func(b *testing.B) { benchReplay(b, fmt.Sprintf(benchMoEMooncake, benchMoEModel, 4, "")) })
	b.Run("dense-twin", func(b *testing.B) { benchReplay(b, fmt.Sprintf(benchMoEMooncake, twin, 4, "")) })
	b.Run("moe-dp2-ep", func(b *testing.B) {
		benchReplay(b, fmt.Sprintf(benchMoEMooncake, benchMoEModel, 2, ", data_parallel_size: 2, enable_expert_parallel: true"))
	})
	b.Run("sliding-window", func(b *testing.B) { benchReplay(b, fmt.Sprintf(benchMoEMooncake, benchSlidingModel, 4, "")) })
}

// benchSlidingModel is gpt-oss-20b (24 layers, every other one with a
// sliding window of 128; 32 experts of 2880, top 4): its decodes need
// Σ min(kv+1, 128), kept in aggregate like the KV sum (core/engine/vllm/steady.go).
const benchSlidingModel = sharedModelConfigs + "/openai--gpt-oss-20b_config.json"
