package workload

import (
	"math"
	"slices"
)

// goldenGamma is 2^64 / φ, the splitmix64 increment; it spreads small
// integers over the 64-bit space before mixing.
const goldenGamma = 0x9e3779b97f4a7c15

// offsetMul and idMul are odd 64-bit constants (from splitmix64's and
// murmur3's finalizers) that spread a block's offset and fold several source
// ids in order before the block's single mix64.
const (
	offsetMul = 0xbf58476d1ce4e5b9
	idMul     = 0xff51afd7ed558ccd
)

// mix64 is the splitmix64 finalizer (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014; constants of Stafford's
// variant 13): a bijection on uint64 in which every input bit affects every
// output bit. Not cryptographic.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// combine folds v into the running hash h. Order matters:
// combine(combine(h, a), b) ≠ combine(combine(h, b), a) in general.
func combine(h, v uint64) uint64 {
	return mix64(h ^ mix64(v+goldenGamma))
}

// BlockHashes re-blocks a request's source prefix-block ids into the hash
// chain of its full engine blocks of blockSize tokens, for prefix caching.
// It appends to dst[:0] and returns the result; it allocates only when dst
// lacks capacity for the result.
//
// With S = r.HashBlockTokens (tokens per source id), bs = blockSize, and
// L = min(r.InputTokens, len(r.HashIDs)·S), engine block j covers prompt
// tokens [j·bs, (j+1)·bs) and is included iff (j+1)·bs ≤ L, so the result has
// ⌊L / bs⌋ entries: partial engine blocks are never hashed, and tokens beyond
// the source ids cannot be matched. Its hash is
//
//	h_j = mix64(h_{s_j−1} ⊕ mix64(id[a_j] + γ)) + o_j·C_o·C_i  (mod 2^64)   if a_j = b_j
//	h_j = mix64(h_{s_j−1} ⊕ v_j)                                         if a_j < b_j
//	h_{−1} = mix64(S),  v_j = fold(o_j·C_o, id[a_j], …, id[b_j]),  fold(v, id) = v·C_i ⊕ mix64(id + γ)
//
// where a_j = ⌊j·bs / S⌋ and b_j = ⌊((j+1)·bs − 1) / S⌋ are the first and last
// source blocks the range touches, o_j = j·bs − a_j·S is the range's start
// offset in source block a_j, and s_j is the first block of j's run: the
// consecutive blocks that lie inside one source block (a = b) form a run, and
// a block that straddles two source blocks is a run of its own. The chain
// thus advances once per run: h_{s_j−1} fixes tokens [0, s_j·bs), and o_j with
// id[a_j] the tokens from there to the end of block j, so two requests with
// the same S share h_j iff their source ids over tokens [0, (j+1)·bs) agree
// (up to 64-bit hash collisions: two blocks of different runs collide only
// when their runs' mixes differ by a multiple of the odd C_o·C_i of at most
// the offsets' range), and a run costs one mix64, its blocks one add each.
// This holds whether or not bs divides S: with S = 512 and bs = 48, engine
// block 10 covers tokens [480, 528) and mixes ids 0 and 1.
//
// Returns dst[:0] (nil when dst is nil) when r.HashIDs is empty,
// r.HashBlockTokens ≤ 0 or blockSize ≤ 0. The hashes are the same on every
// run and machine.
func BlockHashes(r *Request, blockSize int, dst []uint64) []uint64 {
	dst = dst[:0]
	if r.ContentKey != 0 {
		return streamHashes(r, blockSize, dst)
	}
	dst, _ = sourceHashes(r, blockSize, dst, nil)
	return dst
}

// BlockHashesGroups is BlockHashes of a request and block size, appended to
// dst[:0], with, appended to keys[:0] in the same pass over its blocks, the key
// of each block's prefix group. A group is a run of at most GroupSize
// consecutive engine blocks whose content is fixed by the same key: the blocks
// inside one source block (a Mooncake 512-token id), or one stretch of a
// session's token stream. So two requests that share a group key share every
// block of the run that both have, and a prefix cache can index groups instead
// of blocks:
//
//	key = mix64(h_{g0−1} ⊕ mix64(id_a + γ) ⊕ salt)   (source block a; run starts at g0)
//	key = mix64(ContentKey ⊕ ⌊j / GroupSize⌋·C ⊕ salt) (session stream)
//
// An engine block that straddles two source blocks is a group of its own,
// keyed by its hash (h_j ⊕ salt'). Groups restart every GroupSize blocks.
func BlockHashesGroups(r *Request, blockSize int, dst, keys []uint64) ([]uint64, []uint64) {
	dst, keys = dst[:0], keys[:0]
	if r.ContentKey != 0 {
		dst = streamHashes(r, blockSize, dst)
		return dst, streamGroups(r, len(dst), keys)
	}
	if keys == nil {
		keys = make([]uint64, 0) // non-nil, so sourceHashes writes keys (a zero-length make does not allocate)
	}
	return sourceHashes(r, blockSize, dst, keys)
}

// sourceHashes is BlockHashes for a request with source block ids (into
// dst, empty); unless keys is nil, it also writes BlockHashesGroups' keys
// into keys (empty).
func sourceHashes(r *Request, blockSize int, dst, keys []uint64) ([]uint64, []uint64) {
	S, bs := r.HashBlockTokens, blockSize
	if len(r.HashIDs) == 0 || S <= 0 || bs <= 0 {
		return dst, keys
	}
	limit := r.InputTokens
	if len(r.HashIDs) <= math.MaxInt/S { // otherwise the ids cover more than any int
		limit = min(limit, len(r.HashIDs)*S)
	}
	n := limit / bs
	if n <= 0 {
		return dst, keys
	}
	// Hot path (every prompt block of every request): the mixed id of a source
	// block is computed once and reused by each engine block inside it, and a
	// run of engine blocks inside one source block costs one mix64 (see the
	// formula above), its blocks an add each. Whether keys are written is
	// asked of len(keys) (0 without keys, n with them), which the loop holds
	// in a register anyway: a flag of its own cost a spill (cachegrind).
	h := mix64(uint64(S))
	lastK, idMix := -1, uint64(0)
	a, o := 0, 0 // block j starts at token a·S + o of source block a (no division per block)
	dst = slices.Grow(dst, n)[:n]
	if keys != nil {
		keys = slices.Grow(keys, n)[:n]
	}
	oMul := uint64(offsetMul)
	oMul *= idMul // o·C_o·C_i: v_j of a block inside one source block
	for j := 0; j < n; {
		if o+bs <= S { // blocks j… lie inside source block a (b = a): a run of them
			if a != lastK {
				lastK, idMix = a, mix64(uint64(r.HashIDs[a])+goldenGamma)
			}
			end := min(n, j+(S-o)/bs) // the run: every block of a from j on
			v, step := uint64(o)*oMul, uint64(bs)*oMul
			if len(keys) == 0 {
				hashRun(dst[j:end], nil, 0, h^idMix, v, step)
			} else { // a group every GroupSize blocks of the run, keyed by the hash before it
				for g := j; g < end; {
					e := min(end, g+GroupSize)
					prev := h
					if g > j {
						prev = dst[g-1]
					}
					hashRun(dst[g:e], keys[g:e], mix64(prev^idMix^groupSalt), h^idMix, v, step)
					v += uint64(e-g) * step
					g = e
				}
			}
			j, o = end, o+(end-j)*bs
			h = dst[j-1]
		} else {
			v := uint64(o) * offsetMul
			b := a + (o+bs-1)/S // the last source block the range touches
			for k := a; k <= b; k++ {
				if k != lastK {
					lastK, idMix = k, mix64(uint64(r.HashIDs[k])+goldenGamma)
				}
				v = v*idMul ^ idMix
			}
			h = mix64(h ^ v)
			dst[j] = h
			if len(keys) != 0 { // a group of its own, keyed by its hash
				keys[j] = h ^ singletonSalt
			}
			j++
			o += bs
		}
		if o >= S {
			a, o = a+o/S, o%S
		}
	}
	return dst, keys
}

// hashRun writes the hashes of a run of blocks inside one source block:
// run[i] = mix64(hv) + v + i·step (mod 2^64), hv = h_{s−1} ⊕ mix64(id + γ),
// v + i·step = o_j·C_o·C_i; and, unless keys is empty, key beside each one
// (keys[i], the key of the group the run is). A call of its own,
// not inlined: its loop then keeps its state in registers.
//
//go:noinline
func hashRun(run, keys []uint64, key, hv, v, step uint64) {
	v += mix64(hv)
	if len(keys) == 0 {
		for i := range run {
			run[i] = v
			v += step
		}
		return
	}
	keys = keys[:len(run)]
	for i := range run {
		run[i], keys[i] = v, key
		v += step
	}
}

// streamHashes is BlockHashes for a request whose prompt is a prefix of the token
// stream r.ContentKey (a session's conversation). Engine block j covers stream
// tokens [j·bs, (j+1)·bs), the same content in every turn, so
//
//	h_j = combine(h_{j−1}, j),  h_{−1} = mix64(ContentKey)
//
// for every full block of the tokens whose KV the request writes: its prompt and
// all output tokens but the last (sampled, never written). The blocks of one
// turn's output are thus the next turn's prompt blocks.
func streamHashes(r *Request, bs int, dst []uint64) []uint64 {
	if bs <= 0 {
		return dst
	}
	n := addTokens(r.InputTokens, max(r.OutputTokens-1, 0)) / bs
	h := mix64(r.ContentKey)
	for j := 0; j < n; j++ {
		h = combine(h, uint64(j))
		dst = append(dst, h)
	}
	return dst
}

// GroupSize is the most engine blocks one prefix group holds (see
// BlockHashesGroups).
const GroupSize = 32

// groupSalt and singletonSalt keep group keys apart from block hashes.
const (
	groupSalt     = 0x6a09e667f3bcc908
	singletonSalt = 0xbb67ae8584caa73b
)

// streamGroups appends the group keys of the first n blocks of a session's
// token stream r.ContentKey to dst (BlockHashesGroups).
func streamGroups(r *Request, n int, dst []uint64) []uint64 {
	for j := 0; j < n; j++ {
		dst = append(dst, mix64(r.ContentKey^uint64(j/GroupSize)*offsetMul^groupSalt))
	}
	return dst
}
