package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<test name>.golden.json byte for byte
// (rewritten with `go test -run NAME -update`; review the diff).
func golden(t *testing.T, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

// exampleMetadata is an aggregated run's metadata with every key set, with
// hand-made values consistent with INV-2 (allocated 70 + reused 2 = released
// 72; free 930 + cached 70 = the 1,000 blocks), so that the golden pins the
// metadata's keys and their order.
func exampleMetadata() Metadata {
	one, blocks, kvBytes := 1, 1000, int64(262144)
	kv := []KVBlocks{{Allocated: 70, Reused: 2, Released: 72, Evicted: 0, Free: 930, Cached: 70}}
	prefix := []PrefixCache{{Requests: 3, Queries: 2100, Hits: 32}}
	recomputed := []int64{0}
	return Metadata{AisimulateVersion: "0.1.0", BlockSize: 16, GPUs: 1, KVBlocks: kv, KVBytesPerToken: &kvBytes,
		KVCacheDtype: "bfloat16", MaxModelLen: 40960, Model: "Qwen/Qwen3-32B", NumGPUBlocks: &blocks,
		PerfModel: "linear", Pools: []Pool{{GPUHours: 22.5 / 3.6e6, GPUs: 1, KVBlocks: kv, Name: "aggregated",
			NumGPUBlocks: blocks, PerfModel: "linear", PrefixCache: prefix, RecomputedTokens: recomputed, TP: 1,
			WorkerBusyMs: []float64{19.3}, WorkerPasses: []int64{8}, Workers: 1}},
		PrefixCache: prefix, RecomputedTokens: recomputed,
		Spec: []byte(`{"engine":{"model":"Qwen/Qwen3-32B"}}`), System: "h100_sxm", TP: &one, WeightDtype: "bfloat16",
		WorkerBusyMs: []float64{19.3}, WorkerPasses: []int64{8}, Workers: &one}
}

// The report JSON of worked example 1 (docs/design.md): two completed
// requests, plus a rejected one and a P/D record, so every key and null rule of
// the record schema (fields.go) is pinned.
func TestReportJSON(t *testing.T) {
	recs := []Record{
		{RequestID: 0, Status: StatusCompleted, InputTokens: 1000, OutputTokens: 3, SendNs: 0, ArrivalNs: 0,
			FirstTokenNs: 14_000_000, SecondTokenNs: 17_100_000, EndNs: 19_300_000, ReleaseNs: 19_300_000, Worker: 0,
			PrefillWorker: -1, DecodeWorker: -1, SessionID: -1},
		{RequestID: 1, Status: StatusCompleted, InputTokens: 100, OutputTokens: 2, SendNs: 10_000_000,
			ArrivalNs: 10_000_000, FirstTokenNs: 17_100_000, SecondTokenNs: 19_300_000, EndNs: 19_300_000, ReleaseNs: 19_300_000,
			Worker: 0, PrefillWorker: -1, DecodeWorker: -1, SessionID: 3, Turn: 1},
		{RequestID: 2, Status: StatusRejected, Reason: "prompt (50000) + output (10) tokens exceed max_model_len (40960)",
			InputTokens: 50000, SendNs: 20_000_000, ArrivalNs: 20_000_000, FirstTokenNs: NoTime, SecondTokenNs: NoTime,
			EndNs: 20_000_000, ReleaseNs: 21_000_000, Worker: 0, PrefillWorker: -1, DecodeWorker: -1, SessionID: -1},
		{RequestID: 3, Status: StatusCompleted, InputTokens: 1000, OutputTokens: 3, FirstTokenNs: 18_300_000, SecondTokenNs: 20_400_000,
			EndNs: 22_500_000, ReleaseNs: 22_500_000, Worker: 0, PrefillWorker: 0, DecodeWorker: 0,
			TransferNs: 2_200_000, SessionID: -1},
	}
	var acc Accumulator
	for _, g := range []int64{3_100_000, 2_200_000, 2_200_000, 2_100_000, 2_100_000} {
		acc.AddGap(g)
	}
	for i := range recs {
		acc.Add(&recs[i])
	}
	rep := Report{Metadata: exampleMetadata(), Summary: acc.Close(1), Records: recs}
	b, err := rep.JSON()
	require.NoError(t, err)
	golden(t, b)
}
