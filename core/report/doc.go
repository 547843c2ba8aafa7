// Package report turns per-request timelines into the records and the summary
// of DESIGN.md §8.
//
// Read first: record.go (one request's timeline in integer ns and the derived
// per-request metrics), then summary.go (aggregates, throughputs, GPU hours),
// then stats.go (mean, std and numpy-linear percentiles). json.go writes the
// report; its keys are a contract with the Python package.
//
// Times are integer nanoseconds of the virtual clock inside the core and float64
// milliseconds in the report. Only completed requests enter latency statistics;
// a metric that has no value is null, never zero or NaN.
package report
