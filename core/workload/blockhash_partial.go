package workload

import "math"

// PartialBlockHash is the hash of the partial engine block that follows the
// full ones BlockHashes gave (hashes, for the same request and blockSize),
// and its tokens: the block of the known content's last tokens, for an
// engine that matches prefixes token by token (SGLang's radix cache). ok is
// false when the known content ends on a block boundary (or there is none).
//
// Its hash is the one that block would have if it were full, where the full
// block's hash depends only on where it starts (a block inside one source
// block: BlockHashes' h_j = mix64(h_{s_j−1} ⊕ mix64(id + γ)) + o_j·C_o·C_i,
// fixed by the run, the source id and the offset; a session's stream block: combine(h_{j−1}, j)); so a
// request whose known content ends inside block j shares that block's hash
// with any request that holds more of the same content, and the two agree on
// the partial block's tokens. A partial block that straddles two source
// blocks folds only the ids it covers, so it agrees only with requests that
// end at the same token.
func PartialBlockHash(r *Request, blockSize int, hashes []uint64) (h uint64, tokens int, ok bool) {
	bs := blockSize
	if bs <= 0 {
		return 0, 0, false
	}
	if r.ContentKey != 0 {
		known := addTokens(r.InputTokens, max(r.OutputTokens-1, 0))
		n, rem := known/bs, known%bs
		if rem == 0 || n != len(hashes) {
			return 0, 0, false
		}
		prev := mix64(r.ContentKey)
		if n > 0 {
			prev = hashes[n-1]
		}
		return combine(prev, uint64(n)), rem, true
	}
	S := r.HashBlockTokens
	if len(r.HashIDs) == 0 || S <= 0 {
		return 0, 0, false
	}
	known := r.InputTokens
	if len(r.HashIDs) <= math.MaxInt/S {
		known = min(known, len(r.HashIDs)*S)
	}
	n, rem := known/bs, known%bs
	if rem == 0 || n != len(hashes) {
		return 0, 0, false
	}
	start := n * bs
	a, o := start/S, start%S
	before := func(j int) uint64 { // the chain before block j
		if j == 0 {
			return mix64(uint64(S))
		}
		return hashes[j-1]
	}
	idMix := func(k int) uint64 { return mix64(uint64(r.HashIDs[k]) + goldenGamma) }
	if o+rem <= S { // inside source block a: the run of a's blocks starts at s
		s := (a*S + bs - 1) / bs
		if s > n {
			s = n
		}
		oMul := uint64(offsetMul)
		oMul *= idMul
		return mix64(before(s)^idMix(a)) + uint64(o)*oMul, rem, true
	}
	v := uint64(o) * offsetMul
	for k := a; k <= (o+rem-1)/S+a && k < len(r.HashIDs); k++ {
		v = v*idMul ^ idMix(k)
	}
	return mix64(before(n) ^ v), rem, true
}
