package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A later turn's prompt holds the previous turn's pieces and reply: its first
// blocks are the previous turn's, reply included, as vLLM finds them cached.
// Turn 0: hash ids [1 2] of 16 tokens and 8 tokens of its own (40 tokens),
// then a 20-token reply; with 16-token blocks it writes 40 + 19 tokens of KV,
// 3 full blocks. Turn 1's prompt: those 40, the reply's 20, 30 new tokens of
// id 3: 5 full blocks, its first 3 the previous turn's.
func TestPieceHashesShareTheConversation(t *testing.T) {
	row0 := RowPieces(nil, []int64{1, 2}, 16, 40, 100)
	assert.Len(t, row0, 3)
	prev := PieceHashes(append(append([]Piece(nil), row0...), OwnPiece(7, 19)), 16, nil)
	assert.Len(t, prev, 3)
	next := PieceHashes(RowPieces(append(append([]Piece(nil), row0...), OwnPiece(7, 20)), []int64{3}, 16, 30, 101), 16, nil)
	assert.Len(t, next, 5)
	assert.Equal(t, prev, next[:3])
	// another reply (another session's) diverges where the reply starts: block 2
	// holds the own tokens 32..39 and the reply's first 8
	other := PieceHashes(RowPieces(append(append([]Piece(nil), row0...), OwnPiece(8, 20)), []int64{3}, 16, 30, 101), 16, nil)
	assert.Equal(t, next[:2], other[:2])
	assert.NotEqual(t, next[2], other[2])
	// the same first row in another session: the same first blocks
	assert.Equal(t, prev[:2], PieceHashes(RowPieces(nil, []int64{1, 2, 9}, 16, 48, 200), 16, nil)[:2])
	// a block size that does not divide the ids' 16: 24-token blocks, the
	// first over ids 1 and 2, the second over 2 and the own tokens
	a := PieceHashes(row0, 24, nil)
	b := PieceHashes(RowPieces(nil, []int64{1, 2}, 16, 48, 300), 24, nil)
	assert.Len(t, a, 1)
	assert.Equal(t, a[0], b[0])
	assert.Len(t, b, 2)
	assert.Empty(t, PieceHashes([]Piece{OwnPiece(1, 15)}, 16, nil), "no full block")
}
