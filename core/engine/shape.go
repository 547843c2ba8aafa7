package engine

import "github.com/aisimulate/aisimulate/core/perf"

// PassShaper is a family's Options (Config.Options) that completes a pass's
// batch with what the engine itself decides for it, whatever its requests
// (SGLang: the host's launch of an eager pass's kernels, perf.Batch.HostLaunchNs).
// The family's worker applies it to each pass it forms, and the step API
// (replay.PoolPricing.ShapePass) to a pass priced outside a replay, so that
// both price the same pass alike.
type PassShaper interface {
	ShapePass(b *perf.Batch)
}
