package replay

import (
	"github.com/aisimulate/aisimulate/core/client"
	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
)

// Option changes one Run: its spec (for Go users who build a replay without
// YAML; applied to Run's own copy, never the caller's, before validation, so
// a bad value is a *config.Error) or what the run records and reports
// (WithTimeline).
type Option func(*runOptions)

// runOptions is what the Options of one Run set.
type runOptions struct {
	spec     *config.Spec
	timeline bool
	perToken bool
	// noCruise keeps every pass end on the event queue (tests compare the two).
	noCruise bool
	// landed, when set, receives the number of cruising passes the run ended.
	landed   *int64
	progress func(Progress)
	slo      *report.SLO
	pcts     []float64  // WithPercentiles
	chunks   bool       // WithTokenGaps
	watch    Watcher    // WithWatcher
	cache    *PerfCache // WithPerfCache
	columns  bool
	emit     func(report.Chunk, *report.ColumnBuilder) error
	// pageShift is log2 of the records per chunk (pageShift).
	pageShift uint
}

// WithRecordColumns makes the run encode each request's record as columns
// once it is final, in chunks of 65,536 records in send order
// (report.ColumnBuilder), instead of keeping Records: Report.Columns holds
// them. With emit, each chunk goes to emit as soon as its records are all
// final (with the builder, for its reason labels and counts so far) and is
// not kept: the replay then holds only the records of the requests in
// flight. An error from emit stops the run with it.
func WithRecordColumns(emit func(report.Chunk, *report.ColumnBuilder) error) Option {
	return func(o *runOptions) { o.columns, o.emit, o.pageShift = true, emit, pageShift }
}

// WithRecordChunks makes WithRecordColumns' chunks 2^shift records (3 ≤
// shift ≤ 24; default 16, 65,536 records): given after WithRecordColumns.
// Smaller chunks let tests stream many chunks from small replays.
func WithRecordChunks(shift uint) Option {
	return func(o *runOptions) { o.pageShift = min(max(shift, 3), 24) }
}

// WithSLO makes the summary count the completed requests within slo
// (Summary.Goodput: good requests, goodput in requests/s, SLO attainment).
// A bound must be finite and > 0 (a *config.Error names it otherwise).
func WithSLO(slo report.SLO) Option { return func(o *runOptions) { o.slo = &slo } }

// WithPercentiles makes every statistic of the summary also hold the
// percentiles ps (report.Stats.More, JSON keys p99.9 and the like, beside
// the p50, p90, p95 and p99 it always holds) and names them, ascending and
// without repeats, in Metadata.Percentiles (the columns of the report's
// table). Each must be a finite number in (0, 100] (a *config.Error on
// "percentiles" otherwise).
func WithPercentiles(ps []float64) Option {
	return func(o *runOptions) { o.pcts = append([]float64{}, ps...) }
}

// WithTokenGaps records when the client received each chunk of each
// response (report.ChunkTimes in Report.Chunks: the tokens received at one
// instant are one chunk, AIPerf's streamed response), for AIPerf's
// per-record inter_chunk_latency. It decodes token by token
// (WithPerTokenDecode: the same report, more time) and holds 8 bytes per
// output token and 12 per request (EstimateMemory counts them).
func WithTokenGaps() Option { return func(o *runOptions) { o.chunks = true } }

// WithTimeline records every engine pass (report.Timeline in Report.Timeline):
// per pass its worker, start and end, prefill tokens, decode requests, queue
// and KV blocks in use. Off by default; the loop's only cost when off is one
// nil check per pass.
func WithTimeline() Option { return func(o *runOptions) { o.timeline = true } }

// WithPerTokenDecode handles every decoding request at every engine pass
// (engine.Config.PerTokenDecode) instead of advancing steadily decoding
// requests in aggregate. The report is the same byte for byte; the run costs
// time in proportion to the batch at every pass. It is the reference the
// aggregate path is checked against (tests), and what a replay with
// request_timeout_ms does anyway.
func WithPerTokenDecode() Option { return func(o *runOptions) { o.perToken = true } }

// WithResponseOverhead sets traffic.load.response_overhead: whatever waits on a
// response is released at end received + baseMs + perOutputTokenUs × output tokens.
func WithResponseOverhead(baseMs, perOutputTokenUs float64) Option {
	return func(o *runOptions) {
		o.spec.Traffic.Load.ResponseOverhead = &config.ResponseOverhead{BaseMs: baseMs, PerOutputTokenUs: perOutputTokenUs}
	}
}

// WithDetokenization sets engine.detokenization (µs per job and per token).
func WithDetokenization(baseUs, perTokenUs float64) Option {
	return func(o *runOptions) {
		o.spec.Engine.Detokenization = &config.Detokenization{BaseUs: baseUs, PerTokenUs: perTokenUs}
	}
}

// WithSendLeg sets engine.tokenization.send_ms.
func WithSendLeg(sendMs float64) Option {
	return func(o *runOptions) { o.spec.Engine.Tokenization = &config.Tokenization{SendMs: sendMs} }
}

// WithInterTurnDelay sets traffic.load.inter_turn_delay_ms.
func WithInterTurnDelay(ms float64) Option {
	return func(o *runOptions) { o.spec.Traffic.Load.InterTurnDelayMs = ms }
}

// clientPath converts the spec's client-path blocks into ns costs.
func clientPath(s *config.Spec) client.Path {
	c := client.Costs{InterTurnDelayMs: s.Traffic.Load.InterTurnDelayMs, RequestTimeoutMs: s.Traffic.Load.RequestTimeoutMs}
	if t := s.Engine.Tokenization; t != nil {
		c.SendMs, c.IntakePerTokenUs, c.SharedLoop = t.SendMs, t.PerTokenUs, t.Shared()
	}
	if d := s.Engine.Detokenization; d != nil {
		c.Detokenize, c.DetokBaseUs, c.DetokPerTokenUs = true, d.BaseUs, d.PerTokenUs
	}
	if o := s.Traffic.Load.ResponseOverhead; o != nil {
		c.OverheadBaseMs, c.OverheadPerOutputTokenUs = o.BaseMs, o.PerOutputTokenUs
		c.OverheadJitterMs, c.OverheadSerial = o.JitterMs, o.Serial
	}
	return client.NewPath(c)
}

// WithRequestTimeout sets traffic.load.request_timeout_ms (0 = never).
func WithRequestTimeout(ms float64) Option {
	return func(o *runOptions) { o.spec.Traffic.Load.RequestTimeoutMs = ms }
}
