package replay

import (
	"math"

	"github.com/aisimulate/aisimulate/core/workload"
)

// Sessions of a Mooncake trace in AIPerf's deltas_without_responses context
// mode (traffic.source.context_mode; AIPerf's default for a Mooncake trace
// with hash_ids, docs/reference/conversation-context-mode.md): a session's
// row is only what its turn adds, and the turn's prompt is the conversation
// so far — every earlier row, each followed by the reply the client received
// (AIPerf threads the live responses into the history) — then the row. The
// prompt's content is a run of pieces (workload.Piece): the rows' hash ids,
// a row's tokens past its ids, and each reply, so that a later turn finds
// cached every block an earlier one wrote, its reply's included, as vLLM's
// prefix cache does (workload.PieceHashes). The record's input_tokens is the
// whole prompt.

// turnPieces completes flight f's pieces at its send: after the conversation
// (f.pieces, f.histTokens tokens) its own row's input, then its reply as it
// will be written (every output token but the last, which is sampled and
// never written), for the hashes of the blocks it fills.
func (m *sim) turnPieces(f *flight) {
	r := &f.req
	own := max(r.InputTokens-f.histTokens, 0)
	f.pieces = workload.RowPieces(f.pieces, r.HashIDs, r.HashBlockTokens, own, ownKey(r.ID))
	f.nPrompt = len(f.pieces)
	f.pieces = append(f.pieces, workload.OwnPiece(replyKey(r.ID), max(r.OutputTokens-1, 0)))
}

// history is the conversation the turn after flight f's continues, in
// m.hist (valid until the next call), and its tokens: f's prompt, then the
// reply f's client received. With deltas it also makes next's prompt that
// conversation followed by next's row (next.InputTokens, saturated).
func (m *sim) history(f *flight, next *workload.Request) ([]workload.Piece, int) {
	if !m.tr.deltas {
		return nil, 0
	}
	hist := append(m.hist[:0], f.pieces[:f.nPrompt]...)
	if f.received > 0 {
		hist = append(hist, workload.OwnPiece(replyKey(f.req.ID), f.received))
	}
	m.hist = hist
	tokens := f.req.InputTokens
	if tokens <= math.MaxInt-f.received {
		tokens += f.received
	} else {
		tokens = math.MaxInt
	}
	if next.InputTokens <= math.MaxInt-tokens {
		next.InputTokens += tokens
	} else {
		next.InputTokens = math.MaxInt
	}
	return hist, tokens
}

// replyKey and ownKey name the content only request id has: its reply, and
// its row's tokens past the row's hash ids.
func replyKey(id int64) uint64 { return uint64(id) << 1 }
func ownKey(id int64) uint64   { return uint64(id)<<1 | 1 }
