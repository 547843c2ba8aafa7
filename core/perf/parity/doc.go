// Package parity pins the pass times of both perf sources (roofline and
// aic) on a fixed grid, so that any change in a perf formula or lookup shows
// up as a failing test and is re-pinned on purpose.
//
// # Reading order
//
//  1. grid.go: the grid (models × systems × TP × batch shapes: prefill-only,
//     prefill after a cached prefix, decode-only, mixed) and how each point
//     is priced.
//  2. parity_test.go: TestParityGoldens compares against
//     tests/goldens/perf_parity.json (re-pin with `make goldens`), and
//     TestParityMonotone checks the paired invariant on the same points:
//     adding a decode or a prompt token never makes a pass shorter.
//
// The goldens' README is tests/goldens/README.md.
package parity
