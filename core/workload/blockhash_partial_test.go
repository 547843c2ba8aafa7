package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A prompt whose known content ends inside an engine block has, for that
// partial block, the hash BlockHashes gives the full block of a longer
// prompt with the same source ids: the two agree on its tokens. 1,000
// tokens of ids [7, 9] (512-token source blocks) in 16-token blocks: 62 full
// blocks and 8 tokens of block 62, inside source block 1 (tokens 992…999 of
// 512…1023); a 1,100-token prompt of ids [7, 9, 11] has block 62 full.
func TestPartialBlockHashIsTheFullBlocksHash(t *testing.T) {
	short := &Request{InputTokens: 1000, HashIDs: []int64{7, 9}, HashBlockTokens: 512}
	long := &Request{InputTokens: 1100, HashIDs: []int64{7, 9, 11}, HashBlockTokens: 512}
	hs := BlockHashes(short, 16, nil)
	hl := BlockHashes(long, 16, nil)
	require.Len(t, hs, 62)
	h, n, ok := PartialBlockHash(short, 16, hs)
	require.True(t, ok)
	assert.Equal(t, 8, n)
	assert.Equal(t, hl[62], h)
	other := &Request{InputTokens: 1100, HashIDs: []int64{7, 10, 11}, HashBlockTokens: 512}
	assert.NotEqual(t, BlockHashes(other, 16, nil)[62], h, "another id in source block 1")

	// at the start of a source block (block 32 starts at token 512: s = n)
	at := &Request{InputTokens: 520, HashIDs: []int64{7, 9}, HashBlockTokens: 512}
	ha := BlockHashes(at, 16, nil)
	h, n, ok = PartialBlockHash(at, 16, ha)
	require.True(t, ok)
	assert.Equal(t, 8, n)
	assert.Equal(t, hl[32], h)

	// a session's stream: prompt 30 + output 5 writes 34 tokens (2 blocks + 2)
	s1 := &Request{InputTokens: 30, OutputTokens: 5, ContentKey: 42}
	s2 := &Request{InputTokens: 60, OutputTokens: 5, ContentKey: 42}
	h1 := BlockHashes(s1, 16, nil)
	h, n, ok = PartialBlockHash(s1, 16, h1)
	require.True(t, ok)
	assert.Equal(t, 2, n)
	assert.Equal(t, BlockHashes(s2, 16, nil)[2], h)

	// content ending on a block boundary has no partial block
	_, _, ok = PartialBlockHash(&Request{InputTokens: 1024, HashIDs: []int64{7, 9}, HashBlockTokens: 512}, 16,
		BlockHashes(&Request{InputTokens: 1024, HashIDs: []int64{7, 9}, HashBlockTokens: 512}, 16, nil))
	assert.False(t, ok)
}
