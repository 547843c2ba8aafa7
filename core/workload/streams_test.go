package workload

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStreams_CachedPerName(t *testing.T) {
	s := NewStreams(1)
	assert.Same(t, s.Get(StreamISL), s.Get(StreamISL))
	assert.NotSame(t, s.Get(StreamISL), s.Get(StreamOSL))
	assert.Equal(t, uint64(1), s.Seed())
}

func TestStreams_DeterministicAndIndependent(t *testing.T) {
	first := func(seed uint64, name string) uint64 { return NewStreams(seed).Get(name).Uint64() }
	assert.Equal(t, first(1, "isl"), first(1, "isl"), "same seed and name, same draws")
	assert.NotEqual(t, first(1, "isl"), first(1, "osl"), "names give different streams")
	assert.NotEqual(t, first(1, "isl"), first(2, "isl"), "seeds give different streams")

	// Drawing from "osl" does not move "isl".
	a, b := NewStreams(5), NewStreams(5)
	for range 100 {
		b.Get(StreamOSL).Uint64()
	}
	assert.Equal(t, a.Get(StreamISL).Uint64(), b.Get(StreamISL).Uint64())
}

func TestFNV1a64_MatchesStandardLibrary(t *testing.T) {
	// Published vectors: FNV-1a-64("") = 0xcbf29ce484222325 (the offset
	// basis), FNV-1a-64("a") = 0xaf63dc4c8601ec8c.
	assert.Equal(t, uint64(0xcbf29ce484222325), fnv1a64(""))
	assert.Equal(t, uint64(0xaf63dc4c8601ec8c), fnv1a64("a"))
	for _, name := range []string{StreamISL, StreamOSL, StreamArrival, "inter_turn_delay"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		assert.Equal(t, h.Sum64(), fnv1a64(name), name)
	}
}
