package workload

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entriesOf returns each request's dataset entry (its single hash id).
func entriesOf(t *testing.T, reqs []Request) []int64 {
	t.Helper()
	out := make([]int64, len(reqs))
	for i, r := range reqs {
		require.Len(t, r.HashIDs, 1, "request %d", i)
		require.Equal(t, r.InputTokens, r.HashBlockTokens, "request %d: one source block covers the prompt", i)
		out[i] = r.HashIDs[0]
	}
	return out
}

func TestDataset_SequentialWorkedValues(t *testing.T) {
	// 3 entries, 7 requests: entries 0 1 2 0 1 2 0, and each entry keeps the
	// lengths it was drawn with.
	got := synthAll(t, config.SyntheticSource{
		NumRequests: 7,
		ISL:         config.Length{Kind: config.UniformLength{Min: 10, Max: 1000}},
		OSL:         config.Length{Kind: config.UniformLength{Min: 1, Max: 50}},
		Dataset:     &config.Dataset{Entries: 3, Sampling: config.SamplingSequential},
	}, NewStreams(5))
	assert.Equal(t, []int64{0, 1, 2, 0, 1, 2, 0}, entriesOf(t, got))
	for i, r := range got {
		first := got[i%3]
		assert.Equal(t, first.InputTokens, r.InputTokens, "request %d", i)
		assert.Equal(t, first.OutputTokens, r.OutputTokens, "request %d", i)
		assert.Equal(t, int64(i), r.ID)
		assert.Equal(t, int64(-1), r.SessionID)
	}
}

// The entries' lengths are the streams' first draws, entry by entry: a
// sequential dataset with one entry per request has exactly the lengths of the
// same source without a dataset.
func TestDataset_EntryLengthsAreTheSourceDraws(t *testing.T) {
	spec := config.SyntheticSource{
		NumRequests: 50,
		ISL:         config.Length{Kind: config.NormalLength{Mean: 2000, Std: 500, Min: 1, Max: 8000}},
		OSL:         config.Length{Kind: config.UniformLength{Min: 1, Max: 500}},
	}
	plain := synthAll(t, spec, NewStreams(9))
	spec.Dataset = &config.Dataset{Entries: 50, Sampling: config.SamplingSequential}
	pooled := synthAll(t, spec, NewStreams(9))
	for i := range plain {
		assert.Equal(t, plain[i].InputTokens, pooled[i].InputTokens, "request %d", i)
		assert.Equal(t, plain[i].OutputTokens, pooled[i].OutputTokens, "request %d", i)
	}
}

func TestDataset_ShuffleSendsEveryEntryOncePerPass(t *testing.T) {
	const n = 10
	got := entriesOf(t, synthAll(t, config.SyntheticSource{
		NumRequests: 3*n + 4,
		ISL:         fixedLen(64),
		OSL:         fixedLen(8),
		Dataset:     &config.Dataset{Entries: n, Sampling: config.SamplingShuffle},
	}, NewStreams(3)))
	passes := [][]int64{got[:n], got[n : 2*n], got[2*n : 3*n]}
	for p, pass := range passes {
		assert.ElementsMatch(t, seq(0, n-1), pass, "pass %d is a permutation", p)
	}
	assert.NotEqual(t, passes[0], passes[1], "each pass is reshuffled")
	assert.NotEqual(t, seq(0, n-1), passes[0], "not the sequential order")
	for _, e := range got[3*n:] {
		assert.True(t, e >= 0 && e < n)
	}
}

func TestDataset_RandomDrawsWithReplacement(t *testing.T) {
	// 2000 uniform draws over 4 entries: each count is 500 ± 4σ (σ = √(2000·¼·¾) ≈ 19.4),
	// and some entry repeats within the first 5 requests (pigeonhole).
	const n, reqs = 4, 2000
	got := entriesOf(t, synthAll(t, config.SyntheticSource{
		NumRequests: reqs,
		ISL:         fixedLen(16),
		OSL:         fixedLen(2),
		Dataset:     &config.Dataset{Entries: n, Sampling: config.SamplingRandom},
	}, NewStreams(11)))
	counts := make([]int, n)
	for _, e := range got {
		counts[e]++
	}
	for e, c := range counts {
		assert.InDelta(t, 500, c, 78, "entry %d", e)
	}
}

// Same entry, same engine blocks; other entries share none, even at the same
// length (W5 through BlockHashes).
func TestDataset_PromptBlocksShareOnlyWithinAnEntry(t *testing.T) {
	got := synthAll(t, config.SyntheticSource{
		NumRequests: 4,
		ISL:         fixedLen(100),
		OSL:         fixedLen(1),
		Dataset:     &config.Dataset{Entries: 2, Sampling: config.SamplingSequential},
	}, NewStreams(1))
	h := make([][]uint64, len(got))
	for i := range got {
		h[i] = BlockHashes(&got[i], 16, nil)
		require.Len(t, h[i], 6, "⌊100 / 16⌋ full blocks")
	}
	assert.Equal(t, h[0], h[2])
	assert.Equal(t, h[1], h[3])
	for j := range h[0] {
		assert.NotEqual(t, h[0][j], h[1][j], "block %d", j)
	}
}

func TestDataset_Errors(t *testing.T) {
	ok := fixedLen(1)
	cases := []struct {
		d    config.Dataset
		want string
	}{
		{config.Dataset{Entries: 0, Sampling: config.SamplingShuffle}, "workload: synthetic: dataset.entries: must be ≥ 1, got 0"},
		{config.Dataset{Entries: config.MaxDatasetEntries + 1, Sampling: config.SamplingShuffle}, "workload: synthetic: dataset.entries: must be ≤ 1000000, got 1000001"},
		{config.Dataset{Entries: 5}, "workload: synthetic: dataset.sampling: is required (one of sequential, random, shuffle)"},
		{config.Dataset{Entries: 5, Sampling: "zipf"}, `workload: synthetic: dataset.sampling: "zipf" is not supported (one of sequential, random, shuffle)`},
	}
	for _, tc := range cases {
		_, err := NewSynthetic(config.SyntheticSource{NumRequests: 1, ISL: ok, OSL: ok, Dataset: &tc.d}, NewStreams(1))
		assert.EqualError(t, err, tc.want)
	}
}

// Shared prefixes: 4 entries in 2 groups of a 32-token prefix, isl 40 (so
// 72-token prompts in blocks of 32: the group's, then two of the entry's).
// Entries 0 and 2 (group 0) share exactly the prefix's two 16-token engine
// blocks; entries 0 and 1 (groups 0 and 1) share none.
func TestDatasetSharedPrefix(t *testing.T) {
	spec := config.SyntheticSource{NumRequests: 4, ISL: config.Length{Kind: config.FixedLength{Value: 40}},
		OSL: config.Length{Kind: config.FixedLength{Value: 8}},
		Dataset: &config.Dataset{Entries: 4, Sampling: config.SamplingSequential,
			Prefix: &config.DatasetPrefix{Groups: 2, Tokens: 32}}}
	src, err := NewSynthetic(spec, NewStreams(1))
	require.NoError(t, err)
	var rs []Request
	for {
		var r Request
		if src.Next(&r) != nil {
			break
		}
		rs = append(rs, r)
	}
	require.Len(t, rs, 4)
	assert.Equal(t, 72, rs[0].InputTokens)
	assert.Equal(t, 32, rs[0].HashBlockTokens)
	assert.Equal(t, []int64{0, prefixBase + 1, prefixBase + 2}, rs[0].HashIDs) // B = 3 blocks per entry
	assert.Equal(t, []int64{1, prefixBase + 3 + 1, prefixBase + 3 + 2}, rs[1].HashIDs)
	h := func(r Request) []uint64 { return BlockHashes(&r, 16, nil) }
	h0, h1, h2 := h(rs[0]), h(rs[1]), h(rs[2])
	require.Len(t, h0, 4) // 72 tokens: 4 full 16-token blocks
	assert.Equal(t, h0[:2], h2[:2], "one group: the prefix's blocks")
	assert.NotEqual(t, h0[2], h2[2], "then each entry's own")
	assert.NotEqual(t, h0[0], h1[0], "another group: nothing shared")

	bad := spec
	bad.Dataset = &config.Dataset{Entries: 1, Sampling: config.SamplingSequential, Prefix: &config.DatasetPrefix{Groups: 2, Tokens: 32}}
	_, err = NewSynthetic(bad, NewStreams(1))
	assert.ErrorContains(t, err, "dataset.prefix.groups: 2 groups for 1 entries")
}

// RepeatFirstCapped's copies ask at most the cap (sglang.bench_serving's
// warm-up: min(output_len, 32)); the first request itself keeps its length.
func TestRepeatFirstCapped(t *testing.T) {
	spec := config.SyntheticSource{NumRequests: 2, ISL: config.Length{Kind: config.FixedLength{Value: 40}},
		OSL: config.Length{Kind: config.FixedLength{Value: 100}}}
	src, err := NewSynthetic(spec, NewStreams(1))
	require.NoError(t, err)
	src = RepeatFirstCapped(src, 2, 32)
	var outs, ins []int
	for {
		var r Request
		if src.Next(&r) != nil {
			break
		}
		outs, ins = append(outs, r.OutputTokens), append(ins, r.InputTokens)
	}
	assert.Equal(t, []int{32, 32, 100, 100}, outs)
	assert.Equal(t, []int{40, 40, 40, 40}, ins)
}
