// Package report turns per-request timelines into the records, the summary and
// the run metadata of a report (docs/metrics.md defines every number).
//
// Read first: record.go (one request's timeline in integer ns and the derived
// per-request metrics), then fields.go (the per-request record schema: each
// field's name, column dtype, unit and null rule, in record order; the JSON
// writer in json.go, the columns in columns.go, the golden and the per-request
// table of docs/metrics.md all follow it), then summary.go (aggregates,
// throughputs, GPU hours), stats.go (mean, std and numpy-linear percentiles)
// and metadata.go (the typed run metadata). The keys of all three are a
// contract with the Python package and the docs.
//
// Times are integer nanoseconds of the virtual clock inside the core and float64
// milliseconds in the report. Only completed requests enter latency statistics;
// a metric that has no value is null, never zero or NaN.
package report
