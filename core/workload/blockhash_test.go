package workload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedPrefix returns how many leading hashes a and b have in common.
func sharedPrefix(a, b []uint64) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func mooncakeReq(input int, ids ...int64) *Request {
	return &Request{InputTokens: input, HashIDs: ids, HashBlockTokens: 512, SessionID: -1}
}

func TestBlockHashes_WorkedExamples(t *testing.T) {
	cases := []struct {
		name              string
		a, b              *Request
		bs                int
		wantA, wantB      int // number of hashes
		wantShared        int // leading hashes in common
		explainArithmetic string
	}{
		{"bs 16 divides 512: ids agree on the first 512 tokens",
			mooncakeReq(1024, 1, 2), mooncakeReq(1024, 1, 3), 16, 64, 64, 32,
			"1024/16 = 64 blocks; tokens [0,512) have id 1 in both → 512/16 = 32 shared"},
		{"partial last engine block is dropped",
			mooncakeReq(1000, 7, 8), mooncakeReq(1000, 7, 8), 16, 62, 62, 62,
			"⌊1000/16⌋ = 62 (62·16 = 992 ≤ 1000 < 1008)"},
		{"bs 48 does not divide 512",
			mooncakeReq(1024, 1, 2), mooncakeReq(1024, 1, 3), 48, 21, 21, 10,
			"⌊1024/48⌋ = 21; block j shared iff 48(j+1) ≤ 512 → j ≤ 9 → 10 (block 10 = [480,528) touches id 2 vs 3)"},
		{"bs 1024 larger than a source block, ids agree on [0,1024)",
			mooncakeReq(1536, 1, 2, 3), mooncakeReq(1536, 1, 2, 4), 1024, 1, 1, 1,
			"⌊1536/1024⌋ = 1 block covering ids 1,2 in both"},
		{"bs 1024, second source block differs",
			mooncakeReq(1024, 1, 2), mooncakeReq(1024, 1, 3), 1024, 1, 1, 0,
			"the only block covers ids (1,2) vs (1,3)"},
		{"ids limit the blocks, not the input",
			mooncakeReq(2000, 1, 2), mooncakeReq(1024, 1, 2), 16, 64, 64, 64,
			"min(2000, 2·512)/16 = 64; tokens past the ids cannot be matched"},
		{"shorter prompt is a prefix",
			mooncakeReq(1536, 5, 6, 7), mooncakeReq(1500, 5, 6, 7), 512, 3, 2, 2,
			"1536/512 = 3; ⌊1500/512⌋ = 2"},
		{"prompt shorter than one engine block",
			mooncakeReq(10, 1), mooncakeReq(10, 1), 16, 0, 0, 0,
			"⌊10/16⌋ = 0"},
		{"different first id shares nothing",
			mooncakeReq(512, 1), mooncakeReq(512, 2), 16, 32, 32, 0,
			"512/16 = 32 each, id differs from token 0"},
		{"same ids but different source block size share nothing",
			mooncakeReq(512, 1, 2), &Request{InputTokens: 512, HashIDs: []int64{1, 2}, HashBlockTokens: 256}, 16, 32, 32, 0,
			"tokens [256,512) are id 1 in a but id 2 in b; block 0 already differs via the chain seed mix64(S)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ha := BlockHashes(tc.a, tc.bs, nil)
			hb := BlockHashes(tc.b, tc.bs, nil)
			assert.Len(t, ha, tc.wantA, tc.explainArithmetic)
			assert.Len(t, hb, tc.wantB, tc.explainArithmetic)
			s := sharedPrefix(ha, hb)
			assert.Equal(t, tc.wantShared, s, tc.explainArithmetic)
			// Chain: once a block differs, no later block matches.
			for j := s; j < min(len(ha), len(hb)); j++ {
				assert.NotEqual(t, ha[j], hb[j], "block %d", j)
			}
		})
	}
}

func TestBlockHashes_OffsetDistinguishesBlocksOfOneSourceBlock(t *testing.T) {
	// Engine blocks 0 and 1 (bs 16) both lie inside source block 0 (id 9);
	// the start offsets 0 and 16 keep their hashes apart.
	h := BlockHashes(mooncakeReq(512, 9), 16, nil)
	require.Len(t, h, 32)
	seen := map[uint64]bool{}
	for _, v := range h {
		assert.False(t, seen[v])
		seen[v] = true
	}
}

func TestBlockHashes_Empty(t *testing.T) {
	dst := make([]uint64, 3, 8)
	cases := []struct {
		name string
		r    *Request
		bs   int
	}{
		{"nil ids", &Request{InputTokens: 1024}, 16},
		{"zero block tokens", &Request{InputTokens: 1024, HashIDs: []int64{1, 2}}, 16},
		{"zero block size", mooncakeReq(1024, 1, 2), 0},
		{"negative block size", mooncakeReq(1024, 1, 2), -16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, BlockHashes(tc.r, tc.bs, dst))
			assert.Nil(t, BlockHashes(tc.r, tc.bs, nil))
		})
	}
}

func TestBlockHashes_NoAllocWithCapacity(t *testing.T) {
	r := mooncakeReq(8192, seq(0, 15)...)
	dst := make([]uint64, 0, 512)
	allocs := testing.AllocsPerRun(100, func() { dst = BlockHashes(r, 16, dst) })
	assert.Zero(t, allocs)
	assert.Len(t, dst, 512) // 8192/16
}

func TestBlockHashes_DeterministicPin(t *testing.T) {
	// Regression pin: h_0 = mix64(mix64(512) ⊕ (0·C_o·C_i ⊕ mix64(1 + γ))) for
	// ids [1], bs 512. The engine's prefix cache keys depend on it; change it
	// only on purpose.
	h := BlockHashes(mooncakeReq(512, 1), 512, nil)
	require.Len(t, h, 1)
	assert.Equal(t, mix64(mix64(512)^mix64(1+goldenGamma)), h[0])
	assert.Equal(t, uint64(0x804d2eed68c98e5f), h[0])
	// bs 256: block 1 is the same run at offset 256, its mix plus 256·C_o·C_i
	h2 := BlockHashes(mooncakeReq(512, 1), 256, nil)
	require.Len(t, h2, 2)
	assert.Equal(t, h[0], h2[0])
	cOff, cID := uint64(offsetMul), uint64(idMul) // variables: the product wraps mod 2^64
	assert.Equal(t, h[0]+256*cOff*cID, h2[1])
}

func TestMix64_SplitMixVector(t *testing.T) {
	// splitmix64 seeded with 0 first returns mix64(0 + 0x9e3779b97f4a7c15) =
	// 0xe220a8397b1dcdaf (the published first output of SplitMix64(0)).
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), mix64(goldenGamma))
}

// Metamorphic: a request whose prompt is a prefix of another's (same leading
// ids, shorter input) gets a prefix of the other's hash chain, for block
// sizes that divide 512 and that do not.
func TestBlockHashes_PrefixMetamorphic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 300; trial++ {
		nIDs := 1 + rng.IntN(12)
		ids := make([]int64, nIDs)
		for i := range ids {
			ids[i] = rng.Int64N(1000)
		}
		long := mooncakeReq(1+rng.IntN(nIDs*512), ids...)
		cut := 1 + rng.IntN(nIDs)
		short := mooncakeReq(1+rng.IntN(min(long.InputTokens, cut*512)), ids[:cut]...)
		for _, bs := range []int{1, 7, 16, 48, 64, 512, 700, 1024} {
			hl := BlockHashes(long, bs, nil)
			hs := BlockHashes(short, bs, nil)
			require.LessOrEqual(t, len(hs), len(hl))
			for j := range hs {
				require.Equal(t, hl[j], hs[j], "trial %d bs %d block %d", trial, bs, j)
			}
		}
	}
}

// tokenID is the oracle: the source id of prompt token t.
func tokenID(r *Request, t int) int64 { return r.HashIDs[t/r.HashBlockTokens] }

// Two routes to the same answer: hash equality of engine block j must agree
// with comparing the source id of every token in [0, (j+1)·bs).
func TestBlockHashes_MatchesTokenOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 400; trial++ {
		S := []int{512, 16, 7}[rng.IntN(3)]
		mk := func(base []int64) *Request {
			ids := append([]int64(nil), base...)
			if rng.IntN(2) == 0 && len(ids) > 0 { // mutate one id from a random position
				ids[rng.IntN(len(ids))] = rng.Int64N(3)
			}
			return &Request{InputTokens: 1 + rng.IntN(len(ids)*S), HashIDs: ids, HashBlockTokens: S}
		}
		base := make([]int64, 1+rng.IntN(6))
		for i := range base {
			base[i] = rng.Int64N(3) // small alphabet: many equal ids
		}
		a, b := mk(base), mk(base)
		for _, bs := range []int{1, 3, 16, 48, 512, 700} {
			ha, hb := BlockHashes(a, bs, nil), BlockHashes(b, bs, nil)
			for j := 0; j < min(len(ha), len(hb)); j++ {
				same := true
				for tok := 0; tok < (j+1)*bs && same; tok++ {
					same = tokenID(a, tok) == tokenID(b, tok)
				}
				require.Equal(t, same, ha[j] == hb[j], "trial %d S %d bs %d block %d", trial, S, bs, j)
			}
		}
	}
}

func BenchmarkBlockHashes(b *testing.B) {
	r := mooncakeReq(32768, seq(0, 63)...)
	dst := make([]uint64, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		dst = BlockHashes(r, 16, dst)
	}
}

// Groups: runs of ≤ GroupSize blocks inside one source block share a key; two
// requests share a group key only where they share the blocks (metamorphic:
// a prefix request's groups are a prefix of the longer one's, and a request
// that differs in its second source block differs from there on).
func TestBlockHashesGroups_RunsAndSharing(t *testing.T) {
	long := mooncakeReq(2048, 1, 2, 3, 4)
	_, g := BlockHashesGroups(long, 16, nil, nil)
	require.Len(t, g, 128)
	for j := range g { // 32 blocks of 16 tokens per 512-token id: one group each
		assert.Equal(t, g[j/32*32], g[j], "block %d", j)
		if j%32 == 0 && j > 0 {
			assert.NotEqual(t, g[j-1], g[j])
		}
	}
	short := mooncakeReq(1000, 1, 2)
	gs := groupsOf(short, 16)
	assert.Equal(t, g[:len(gs)], gs)
	other := mooncakeReq(2048, 1, 9, 3, 4)
	gh := groupsOf(other, 16)
	assert.Equal(t, g[:32], gh[:32])
	assert.NotEqual(t, g[32], gh[32])
	assert.NotEqual(t, g[64], gh[64], "the chain carries the difference into later groups")

	// bs 8: 64 blocks per id, split into two groups of 32
	g8 := groupsOf(long, 8)
	assert.Equal(t, g8[0], g8[31])
	assert.NotEqual(t, g8[31], g8[32])
	// bs 48 does not divide 512: block 10 covers [480, 528) and stands alone
	g48 := groupsOf(long, 48)
	assert.NotEqual(t, g48[9], g48[10])
	assert.NotEqual(t, g48[10], g48[11])
	assert.Equal(t, g48[11], g48[12])
}

// refBlockHashes and refBlockGroups compute BlockHashes' and
// BlockHashesGroups' formulas (their doc comments) block by block, with the divisions written
// out: the fast paths, which walk runs of blocks inside one source block,
// must give exactly these values.
func refBlockHashes(r *Request, bs int) []uint64 {
	S := r.HashBlockTokens
	n := min(r.InputTokens, len(r.HashIDs)*S) / bs
	var out []uint64
	prev := mix64(uint64(S)) // h_{s_j−1}: the hash before j's run
	for j := 0; j < n; j++ {
		a, b := j*bs/S, ((j+1)*bs-1)/S
		if j > 0 && (a != b || (j-1)*bs/S != a || (j*bs-1)/S != a) { // j starts a run
			prev = out[j-1]
		}
		o := uint64(j*bs - a*S)
		if a == b { // inside one source block: the run's mix, plus the offset
			out = append(out, mix64(prev^mix64(uint64(r.HashIDs[a])+goldenGamma))+o*offsetMul*idMul)
			continue
		}
		v := o * offsetMul
		for k := a; k <= b; k++ {
			v = v*idMul ^ mix64(uint64(r.HashIDs[k])+goldenGamma)
		}
		out = append(out, mix64(prev^v))
	}
	return out
}

func refBlockGroups(r *Request, bs int, hashes []uint64) []uint64 {
	S := r.HashBlockTokens
	out := make([]uint64, len(hashes))
	run, lastA := 0, -1
	for j := range hashes {
		a, b := j*bs/S, ((j+1)*bs-1)/S
		if a != b {
			out[j], lastA = hashes[j]^singletonSalt, -1
			continue
		}
		if a != lastA || run == GroupSize {
			prev := mix64(uint64(S))
			if j > 0 {
				prev = hashes[j-1]
			}
			out[j] = mix64(prev ^ mix64(uint64(r.HashIDs[a])+goldenGamma) ^ groupSalt)
			run, lastA = 0, a
		} else {
			out[j] = out[j-1]
		}
		run++
	}
	return out
}

func TestBlockHashesAndGroups_MatchFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		S := []int{512, 16, 7, 100}[rng.IntN(4)]
		ids := make([]int64, 1+rng.IntN(40))
		for i := range ids {
			ids[i] = rng.Int64N(5)
		}
		r := &Request{InputTokens: 1 + rng.IntN(len(ids)*S+S), HashIDs: ids, HashBlockTokens: S}
		for _, bs := range []int{1, 3, 8, 16, 48, 512, 700} {
			want := refBlockHashes(r, bs)
			got := BlockHashes(r, bs, make([]uint64, 3)) // dst[:0] reused
			require.Equal(t, len(want), len(got), "trial %d S %d bs %d", trial, S, bs)
			if len(want) == 0 {
				continue
			}
			require.Equal(t, want, got, "trial %d S %d bs %d", trial, S, bs)
			wantKeys := refBlockGroups(r, bs, want)
			// the one pass: the same hashes and keys, into reused buffers
			hs, ks := BlockHashesGroups(r, bs, make([]uint64, 5), make([]uint64, 2))
			require.Equal(t, want, hs, "one pass, trial %d S %d bs %d", trial, S, bs)
			require.Equal(t, wantKeys, ks, "one pass, trial %d S %d bs %d", trial, S, bs)
			hs, ks = BlockHashesGroups(r, bs, nil, nil)
			require.Equal(t, want, hs, "one pass, nil buffers, trial %d S %d bs %d", trial, S, bs)
			require.Equal(t, wantKeys, ks, "one pass, nil buffers, trial %d S %d bs %d", trial, S, bs)
		}
	}
}

// A session's stream: the one pass gives BlockHashes' hashes and, for block j,
// the key mix64(ContentKey ⊕ ⌊j / 32⌋·C_o ⊕ salt) (BlockHashesGroups' formula).
func TestBlockHashesGroups_Stream(t *testing.T) {
	r := &Request{InputTokens: 1000, OutputTokens: 300, ContentKey: 77}
	h := BlockHashes(r, 16, nil)
	require.Len(t, h, 81) // (1000 + 299) / 16 = 81.2
	hs, ks := BlockHashesGroups(r, 16, nil, nil)
	assert.Equal(t, h, hs)
	require.Len(t, ks, 81)
	for j, k := range ks {
		assert.Equal(t, mix64(77^uint64(j/32)*offsetMul^groupSalt), k, "block %d", j)
	}
	assert.Equal(t, ks[0], ks[31])
	assert.NotEqual(t, ks[31], ks[32])
	hs, ks = BlockHashesGroups(&Request{InputTokens: 10}, 16, hs, ks) // no ids: empty, buffers reused
	assert.Empty(t, hs)
	assert.Empty(t, ks)
}

// groupsOf is the group keys of BlockHashesGroups.
func groupsOf(r *Request, bs int) []uint64 {
	_, keys := BlockHashesGroups(r, bs, nil, nil)
	return keys
}
