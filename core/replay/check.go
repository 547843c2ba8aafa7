package replay

import (
	"context"
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

// Check does everything Run does before the first request is sent — validate
// the spec, build the model, GPU system, perf model and KV capacity of every
// pool, the client path, hold the estimate to the memory budget, and open the
// workload — then reads it as the replay would (readAll): the starts the
// replay reads before any turn can end, through its feed (the later turns of
// open sessions read ahead meet the budget as in the replay), and a trace to
// its end through the replay's reader (the first bad row is the error a
// replay would meet, file:line). It returns the deployment's metadata as Run
// would report it before any request (zero busy time and KV counters), or the
// first error, with Run's error types. It simulates nothing and, like Run,
// leaves spec unchanged.
func Check(spec *config.Spec, opts ...Option) (report.Metadata, error) {
	return CheckContext(context.Background(), spec, opts...)
}

// CheckContext is Check that stops when ctx is done: the workload's reads
// look at ctx every pollRows rows (a few ms of reading) and return an error
// for which errors.Is(err, ctx.Err()) holds (context.Canceled for a cancel),
// naming how far the read got.
func CheckContext(ctx context.Context, spec *config.Spec, opts ...Option) (report.Metadata, error) {
	m, err := prepare(spec, opts)
	if err != nil {
		return report.Metadata{}, err
	}
	defer m.tr.close()
	meta := m.dep.metadata(m.spec, m)
	if err := m.tr.readAll(ctx); err != nil {
		return report.Metadata{}, err
	}
	return meta, nil
}

// pollRows is how many rows a check reads between two looks at its context:
// at ~0.3 µs a trace row, about 5 ms.
const pollRows = 1 << 14

// polledSource is a workload source that looks at ctx before every pollRows
// rows (the first included) and then returns the context's error instead of
// a row.
type polledSource struct {
	workload.Source
	ctx  context.Context
	path string // the trace, for the error ("" for a generator)
	rows int
}

func (s *polledSource) Next(r *workload.Request) error {
	if s.rows%pollRows == 0 {
		if err := s.ctx.Err(); err != nil {
			what := "the workload"
			if s.path != "" {
				what = s.path
			}
			return fmt.Errorf("check stopped after reading %d rows of %s: %w", s.rows, what, err)
		}
	}
	s.rows++
	return s.Source.Next(r)
}
