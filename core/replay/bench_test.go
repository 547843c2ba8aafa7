package replay

import (
	"fmt"
	"os"
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
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

// benchReplay runs a replay per iteration and reports host µs per simulated
// output token and simulated requests per second of host time.
func benchReplay(b *testing.B, yml string) {
	s, err := config.DecodeYAML([]byte(yml))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var tokens, reqs int64
	for i := 0; i < b.N; i++ {
		rep, err := Run(s)
		if err != nil {
			b.Fatal(err)
		}
		tokens += rep.Summary.TotalOutputTokens
		reqs += int64(len(rep.Records))
	}
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
