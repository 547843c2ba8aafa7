package workload

import "math/rand/v2"

// Names of the random streams this package draws from. Each subsystem has its
// own stream so that adding a draw to one never shifts the values of another.
const (
	StreamISL     = "isl"     // synthetic prompt lengths (NewSynthetic)
	StreamOSL     = "osl"     // synthetic output lengths (NewSynthetic)
	StreamArrival = "arrival" // arrival gaps: pass Get(StreamArrival) to NewPoisson / NewGamma
	StreamDataset = "dataset" // a synthetic dataset's random and shuffle sampling (NewSynthetic)
)

// Streams hands out one deterministic random generator per named subsystem,
// all derived from one run seed (docs/design.md, "Time and determinism").
//
// Derivation, fixed so that a seed means the same draws on every machine and
// release: with h = FNV-1a-64(name),
//
//	Get(name) = rand.New(rand.NewPCG(mix64(seed ^ mix64(h)), mix64(h ^ 0x9e3779b97f4a7c15)))
//
// where mix64 is the splitmix64 finalizer (see blockhash.go). The generator is
// created on the first Get of a name and cached: later Gets return the same
// *rand.Rand, which continues where the previous user stopped.
//
// A Streams and its generators are for one goroutine only; they do no locking.
type Streams struct {
	seed  uint64
	cache map[string]*rand.Rand
}

// NewStreams returns the stream set of a run with the given seed.
func NewStreams(seed uint64) *Streams {
	return &Streams{seed: seed, cache: make(map[string]*rand.Rand)}
}

// Seed returns the run seed the streams derive from.
func (s *Streams) Seed() uint64 { return s.seed }

// Get returns the generator of the named subsystem, creating it on first use.
func (s *Streams) Get(name string) *rand.Rand {
	if r, ok := s.cache[name]; ok {
		return r
	}
	h := fnv1a64(name)
	r := rand.New(rand.NewPCG(mix64(s.seed^mix64(h)), mix64(h^goldenGamma)))
	s.cache[name] = r
	return r
}

// fnv1a64 is the 64-bit FNV-1a hash of name (offset basis 14695981039346656037,
// prime 1099511628211).
func fnv1a64(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}
