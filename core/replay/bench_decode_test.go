package replay

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisimulate/aisimulate/core/report"
)

// benchMooncakeLlama is the Mooncake workload on small workers: the whole
// conversation trace on 4 × Llama-3.1-8B TP1 (roofline, defaults).
const benchMooncakeLlama = `
engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  system: h100_sxm
  workers:
    aggregated: {count: 4, tp: 1}
traffic:
  source: {type: mooncake, path: ` + mooncakeTrace + `}
  load: {mode: trace}
`

// benchDecodeHeavy: 128-token prompts, 8,192-token outputs, one request per
// client on one worker that holds them all (TP 8: 16 KB of KV per token per
// GPU), so the batch is the client count for 8,192 passes.
const benchDecodeHeavy = `
engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  system: h100_sxm
  workers:
    aggregated: {count: 1, tp: 8}
  scheduler: {max_num_seqs: 256}
traffic:
  source: {type: synthetic, num_requests: %d, isl: 128, osl: 8192}
  load: {mode: concurrency, concurrency: %d}
`

func BenchmarkReplayLlama8B(b *testing.B) {
	if _, err := os.Stat(mooncakeTrace); err == nil {
		b.Run("mooncake-llama8b-tp1", func(b *testing.B) { benchReplay(b, benchMooncakeLlama) })
		// the same without prefix caching: what the cache's bookkeeping adds
		b.Run("mooncake-llama8b-tp1-nocache", func(b *testing.B) {
			benchReplay(b, strings.Replace(benchMooncakeLlama, "traffic:", "  scheduler: {enable_prefix_caching: false}\ntraffic:", 1))
		})
	}
	b.Run("closed1024x20", func(b *testing.B) { benchReplay(b, fmt.Sprintf(benchClosedLoop, 1024*20, 1024)) })
}

// BenchmarkDecodeHeavy reports host µs per engine pass at a steady batch: of
// wall time, and of the process's CPU time (user + sys, all threads: less
// sensitive than wall time to other processes on a shared machine).
func BenchmarkDecodeHeavy(b *testing.B) {
	for _, batch := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			var passes int64
			cpu0 := cpuTime()
			benchRuns(b, fmt.Sprintf(benchDecodeHeavy, batch, batch), func(rep *report.Report) {
				for _, p := range rep.Metadata.WorkerPasses {
					passes += p
				}
			})
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(passes), "µs/pass")
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1e6/float64(passes), "cpu_µs/pass")
		})
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
