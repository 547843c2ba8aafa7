package replay

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/report"
	"github.com/aisimulate/aisimulate/core/workload"
)

// FuzzRun: any spec text the decoder accepts, bounded to a small run (at most
// 16 requests, max_model_len ≤ 4096, a 0.1 GB budget), ends within seconds in a
// report whose invariants hold or in an error of the documented types
// (*config.Error, *workload.DataError); never a panic or a hang.
func FuzzRun(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := config.DecodeYAML([]byte(text))
		if err != nil {
			return
		}
		bound(s)
		type result struct {
			rep *report.Report
			err error
		}
		done := make(chan result, 1)
		go func() {
			rep, err := Run(s)
			done <- result{rep, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("the replay did not end within 60 s")
		}
		if r.err != nil {
			var ce *config.Error
			var de *workload.DataError
			if !errors.As(r.err, &ce) && !errors.As(r.err, &de) {
				t.Fatalf("an error of no documented type: %T %v", r.err, r.err)
			}
			return
		}
		checkReport(t, r.rep)
	})
}

// bound makes a decoded spec a small run.
func bound(s *config.Spec) {
	if s.Traffic.Stop.MaxRequests == 0 || s.Traffic.Stop.MaxRequests > 16 {
		s.Traffic.Stop.MaxRequests = 16
	}
	if sc := &s.Engine.Scheduler; sc.MaxModelLen == 0 || sc.MaxModelLen > 4096 {
		sc.MaxModelLen = 4096
	}
	gb := 0.1
	s.Execution.MaxMemoryGB = &gb
}

// checkReport checks the report invariants: every record reached one terminal
// status and the summary counts them (INV-1); a completed record's times are
// ordered (INV-3, INV-4); the summary holds no NaN.
func checkReport(t *testing.T, rep *report.Report) {
	s := rep.Summary
	if n := s.Completed + s.Rejected + s.Failed + s.Canceled; n != len(rep.Records) {
		t.Fatalf("INV-1: %d terminal statuses for %d records", n, len(rep.Records))
	}
	for i := range rep.Records {
		r := &rep.Records[i]
		if r.Status != report.StatusCompleted {
			continue
		}
		if r.ArrivalNs < r.SendNs || r.EndNs < r.ArrivalNs || r.ReleaseNs < r.EndNs ||
			(r.FirstTokenNs != report.NoTime && (r.FirstTokenNs < r.ArrivalNs || r.FirstTokenNs > r.EndNs)) {
			t.Fatalf("INV-3/4: record %d times out of order: %+v", i, *r)
		}
	}
	for _, v := range []float64{s.DurationMs, s.GPUHours} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("a non-finite summary value: %+v", s)
		}
	}
}
