package workload

import "slices"

// A session turn's prompt as AIPerf sends it in its deltas_without_responses
// context mode (docs/reference/conversation-context-mode.md, the default for
// a Mooncake trace with hash_ids): the earlier turns' inputs and the replies
// the client received, then this turn's own input. Its content is a run of
// pieces, each one content id over some tokens: a trace's hash id over its
// isl_block_size tokens (a row's last id over what is left of the row), a
// received reply as one piece of its own, and a row's tokens that no id names
// as one piece of its own.

// Piece is a run of a prompt's tokens whose content one id fixes. Mix is the
// id as it enters the hash (IDPiece, OwnPiece).
type Piece struct {
	Mix    uint64
	Tokens int
}

// IDPiece is the piece of a trace's hash id: equal ids, equal content.
func IDPiece(id int64, tokens int) Piece {
	return Piece{Mix: mix64(uint64(id) + goldenGamma), Tokens: tokens}
}

// ownSalt keeps the ids of content only one request has (OwnPiece) apart
// from a trace's hash ids.
const ownSalt = 0x3c6ef372fe94f82b

// OwnPiece is content no trace id names, told apart by key: a session
// turn's reply (its session and turn) or a row's tokens past its hash ids.
func OwnPiece(key uint64, tokens int) Piece {
	return Piece{Mix: mix64(mix64(key) ^ ownSalt), Tokens: tokens}
}

// RowPieces appends the pieces of a trace row's own input of tokens tokens:
// one per hash id of s tokens (the last one over what is left), then, past
// the ids, one OwnPiece of the rest keyed by own.
func RowPieces(dst []Piece, ids []int64, s, tokens int, own uint64) []Piece {
	for _, id := range ids {
		if tokens <= 0 {
			break
		}
		n := min(s, tokens)
		dst = append(dst, IDPiece(id, n))
		tokens -= n
	}
	if tokens > 0 {
		dst = append(dst, OwnPiece(own, tokens))
	}
	return dst
}

// PieceHashes is BlockHashes for a prompt given as pieces: the hash chain of
// its full engine blocks of blockSize tokens, appended to dst[:0]. With the
// pieces' tokens laid end to end, engine block j covers tokens [j·bs,
// (j+1)·bs) and
//
//	h_j = mix64(h_{s_j−1} ⊕ Mix[a_j]) + o_j·C_o·C_i  (mod 2^64)   if a_j = b_j
//	h_j = mix64(h_{s_j−1} ⊕ v_j)                                if a_j < b_j
//	h_{−1} = mix64(pieceSalt),  v_j = fold(o_j·C_o, Mix[a_j], …, Mix[b_j])
//
// as in BlockHashes, where a_j and b_j are the first and last pieces the
// block touches, o_j its start's offset in piece a_j, and s_j the first
// block of its run (the consecutive blocks inside one piece; a block over
// two pieces is a run of its own). So two prompts share h_j iff their pieces
// over tokens [0, (j+1)·bs) agree: a later turn's prompt holds the previous
// turn's pieces and reply, and finds every block they filled.
func PieceHashes(pieces []Piece, blockSize int, dst []uint64) []uint64 {
	dst = dst[:0]
	bs := blockSize
	total := 0
	for _, p := range pieces {
		total = addTokens(total, p.Tokens)
	}
	n := total / max(bs, 1)
	if bs <= 0 || n == 0 {
		return dst
	}
	h := mix64(pieceSalt)
	oMul := uint64(offsetMul)
	oMul *= idMul // o·C_o·C_i: v_j of a block inside one piece
	dst = slices.Grow(dst, n)[:n]
	a, o := 0, 0 // block j starts at token o of piece a
	for j := 0; j < n; {
		for pieces[a].Tokens == o { // past an empty or finished piece
			a, o = a+1, 0
		}
		p := pieces[a]
		if o+bs <= p.Tokens { // blocks j… inside piece a: a run
			end := min(n, j+(p.Tokens-o)/bs)
			hashRun(dst[j:end], nil, 0, h^p.Mix, uint64(o)*oMul, uint64(bs)*oMul)
			o += (end - j) * bs
			j = end
			h = dst[j-1]
			continue
		}
		v := uint64(o) * offsetMul
		for left := bs; left > 0; { // the pieces the block touches
			q := pieces[a]
			take := min(left, q.Tokens-o)
			if take > 0 {
				v = v*idMul ^ q.Mix
			}
			left -= take
			if o += take; o == q.Tokens && left > 0 {
				a, o = a+1, 0
			}
		}
		h = mix64(h ^ v)
		dst[j] = h
		j++
	}
	return dst
}

// pieceSalt starts the chain of a prompt given as pieces.
const pieceSalt = 0x510e527fade682d1
