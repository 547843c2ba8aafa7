package engine

import "fmt"

// Drafts is a chain of speculative drafts, the acceptance of each position
// known: the drafts a verifying step accepts, an expected value taken
// deterministically (each request carries the fraction it has accepted so
// far, Accept), as TensorRT-LLM's MTP, vLLM's and SGLang's EAGLE are
// simulated.
type Drafts struct {
	// mean[s] is the drafts accepted on average when s drafts are verified:
	// a₁ + a₁a₂ + … + a₁⋯a_s (draft i is kept only with every draft before
	// it, at rate a_i then).
	mean []float64
}

// NewDrafts returns the chain of drafts whose acceptance per position is
// rates (each in [0, 1]); positions past the list, up to n, are never
// accepted.
func NewDrafts(n int, rates []float64) (Drafts, error) {
	if n < 0 || len(rates) > n {
		return Drafts{}, fmt.Errorf("engine: %d acceptance rates for %d drafts", len(rates), n)
	}
	d := Drafts{mean: make([]float64, n+1)}
	p := 1.0 // the chance that drafts 1 … s are all accepted
	for s := 1; s <= n; s++ {
		if s <= len(rates) {
			if a := rates[s-1]; !(a >= 0 && a <= 1) {
				return Drafts{}, fmt.Errorf("engine: acceptance of draft %d is %v, want [0, 1]", s, a)
			}
			p *= rates[s-1]
		} else {
			p = 0
		}
		d.mean[s] = d.mean[s-1] + p
	}
	return d, nil
}

// Mean is the drafts accepted on average when s of the chain are verified.
func (d Drafts) Mean(s int) float64 { return d.mean[s] }

// Accept is the drafts a request accepts in a step verifying s drafts: its
// carried fraction plus Mean(s), the whole part taken and the rest carried.
func (d Drafts) Accept(carry *float64, s int) int {
	*carry += d.mean[s]
	n := int(*carry)
	*carry -= float64(n)
	return n
}
