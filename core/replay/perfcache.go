package replay

import (
	"sync"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf/aic"
)

// PerfCache shares the measured perf models (aic) of the deployments built
// through it (WithPerfCache, Pricing): capacity planning replays hundreds
// of deployments of one model, and building an aic model (its GEMM grids,
// its per-token-count tabulation) costs a hundred times one small replay.
// An aic.Model is immutable once built (its lookups read tables tabulated
// up front), so one model serves every replay that would build the same,
// on any goroutine. The roofline is not shared: it memoises per token count
// as it prices, and is cheap to build. Safe for concurrent use.
type PerfCache struct {
	mu     sync.Mutex
	models map[perfKey]*perfEntry
}

// perfKey is what an aic model is built from: the model as the spec names
// it (with its weight format: engine.quantization), the system, the options.
type perfKey struct {
	model, configDir, system, weights string
	opts                              aic.Options
}

type perfEntry struct {
	once sync.Once
	m    *aic.Model
	err  error
}

// NewPerfCache returns an empty cache.
func NewPerfCache() *PerfCache { return &PerfCache{models: map[perfKey]*perfEntry{}} }

// WithPerfCache builds the run's measured perf models through c.
func WithPerfCache(c *PerfCache) Option { return func(o *runOptions) { o.cache = c } }

// aicModel is aic.New(arch, sys, opts), from c when it holds the same; c may
// be nil (aic.New itself). arch must be the one the spec's engine e loads
// (its weight format applied).
func (c *PerfCache) aicModel(e *config.Engine, arch *model.Arch, sys *hardware.System, opts aic.Options) (*aic.Model, error) {
	if c == nil {
		return aic.New(arch, sys, opts)
	}
	k := perfKey{model: e.Model, configDir: e.ModelConfigDir, system: sys.Name, weights: string(arch.WeightDtype), opts: opts}
	if q := e.Quantization; q != nil {
		k.weights += "|" + q.Weights
	}
	c.mu.Lock()
	en, ok := c.models[k]
	if !ok {
		en = &perfEntry{}
		c.models[k] = en
	}
	c.mu.Unlock()
	en.once.Do(func() { en.m, en.err = aic.New(arch, sys, opts) })
	return en.m, en.err
}
