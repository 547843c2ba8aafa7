package pybind

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/replay"
	"github.com/aisimulate/aisimulate/core/search"
)

// searchRequest is SearchPlan's and SearchRun's request: the question (a
// canonical spec whose engine names the model, system and engine; its
// workers are the search's), the space (search.Space; null lists take their
// defaults) and the SLO; for SearchRun, the candidates to replay (their
// indices in SearchPlan's list, ascending), the goroutines, whether to prune
// and stop early, the run (NewRun: Stop interrupts it) and the file each
// result is appended to as one JSON line.
type searchRequest struct {
	Spec      json.RawMessage `json:"spec"`
	Space     search.Space    `json:"space"`
	SLO       search.SLO      `json:"slo"`
	Indices   []int           `json:"indices"`
	Jobs      int             `json:"jobs"`
	EarlyStop *bool           `json:"early_stop"`
	Prune     *bool           `json:"prune"`
	RunID     string          `json:"run_id"`
	Journal   string          `json:"journal"`
	// SpecsOf: SearchPlan also returns these candidates' specs (indices).
	SpecsOf []int `json:"specs_of"`
	// Dominated: SearchRun prunes the candidates that can start with this
	// reason (search.Question.Dominated) instead of replaying them.
	Dominated string `json:"dominated"`
}

// decodeSearch decodes a search request (its unknown members refused) and
// makes its question.
func decodeSearch(request string) (*searchRequest, *search.Question, error) {
	var rq searchRequest
	if err := decodeOptions(request, &rq); err != nil {
		return nil, nil, fmt.Errorf("search request: %w", err)
	}
	q, err := rq.question()
	return &rq, q, err
}

func (rq *searchRequest) question() (*search.Question, error) {
	s, err := config.Decode(rq.Spec)
	if err != nil {
		return nil, err
	}
	q, err := search.NewQuestion(s, rq.Space, rq.SLO)
	if err != nil {
		return nil, err
	}
	if rq.EarlyStop != nil {
		q.EarlyStop = *rq.EarlyStop
	}
	if rq.Prune != nil {
		q.Prune = *rq.Prune
	}
	q.Dominated = rq.Dominated
	q.SharePerfCache(searchCache(string(rq.Spec)))
	return q, nil
}

// lastSearch holds the measured perf models of the last question searched
// (its spec, as the request carries it): a search runs its GPU counts one
// SearchRun call each (python/aisimulate/analysis/search/__init__.py), and
// each would otherwise build every aic model again. One question at a
// time: another spec starts a new cache.
var lastSearch struct {
	mu    sync.Mutex
	spec  string
	cache *replay.PerfCache
}

func searchCache(spec string) *replay.PerfCache {
	lastSearch.mu.Lock()
	defer lastSearch.mu.Unlock()
	if lastSearch.cache == nil || lastSearch.spec != spec {
		lastSearch.spec, lastSearch.cache = spec, replay.NewPerfCache()
	}
	return lastSearch.cache
}

// SearchPlan enumerates a capacity-planning question's candidates
// (search.Enumerate), simulating nothing: {"plan": {"space" (the defaults
// filled), "candidates": [search.Candidate with its "key" and "gpus"],
// "invalid": [{layout, reason}], "offer": {"requests", "exact",
// "fixed_sends", "span_s", "mean_isl", "mean_osl", and when the load bounds
// it "max_output_tps" with the "max_output_tps_span_s" and
// "max_output_tps_requests" it was taken over (search.Question.MaxOutputTPS)}}}
// or an error envelope
// (a bad SLO or space is kind config, field "slo…" or "gpus"/"space"); with
// specs_of, "specs": {index: the candidate's spec} (search.Candidate.Spec).
func SearchPlan(request string) string {
	return guard(func() string {
		rq, q, err := decodeSearch(request)
		if err != nil {
			return errorEnvelope(err)
		}
		cands, invalid := q.Candidates()
		type cand struct {
			search.Candidate
			Key  string `json:"key"`
			GPUs int    `json:"gpus"`
		}
		out := make([]cand, len(cands))
		for i := range cands {
			out[i] = cand{cands[i], cands[i].Key(), cands[i].GPUs()}
		}
		o := q.Offer
		var isl, osl float64
		for i := range o.OutputTokens {
			isl += float64(o.InputTokens[i])
			osl += float64(o.OutputTokens[i])
		}
		n := float64(len(o.OutputTokens))
		offer := map[string]any{"requests": len(o.OutputTokens), "exact": o.Exact, "fixed_sends": o.SendNs != nil,
			"mean_isl": isl / n, "mean_osl": osl / n}
		if len(o.SendNs) > 1 {
			offer["span_s"] = float64(o.SendNs[len(o.SendNs)-1]-o.SendNs[0]) / 1e9
		}
		if tps, span, m, ok := q.MaxOutputTPS(); ok {
			offer["max_output_tps"], offer["max_output_tps_span_s"], offer["max_output_tps_requests"] = tps, span, m
		}
		if invalid == nil {
			invalid = []search.Invalid{}
		}
		specs := map[string]json.RawMessage{}
		for _, i := range rq.SpecsOf {
			if i < 0 || i >= len(cands) {
				return errorEnvelope(&config.Error{Field: "specs_of", Msg: fmt.Sprintf("%d: no such candidate (%d)", i, len(cands))})
			}
			specs[fmt.Sprint(i)] = cands[i].Spec(q.Spec, &q.Space).JSON()
		}
		b, err := json.Marshal(map[string]any{"plan": map[string]any{"space": q.Space, "slo": q.SLO,
			"candidates": out, "invalid": invalid, "offer": offer, "specs": specs}})
		if err != nil {
			return errorEnvelope(err)
		}
		return string(b)
	})
}

// SearchRun replays the request's candidates (search.Question.Run): each
// result, in candidate order, is appended to the journal file as one JSON
// line (search.Result) as soon as it and every candidate before it are
// done, so that an interrupted search keeps what it finished. It returns
// {"search": {"done": k}} or an error envelope ("interrupted" once Stop was
// called; the results written stand).
func SearchRun(request string) string {
	return guard(func() string {
		rq, q, err := decodeSearch(request)
		if err != nil {
			return errorEnvelope(err)
		}
		cands, _ := q.Candidates()
		todo := make([]search.Candidate, 0, len(rq.Indices))
		for k, i := range rq.Indices {
			if i < 0 || i >= len(cands) || k > 0 && i <= rq.Indices[k-1] {
				return errorEnvelope(&config.Error{Field: "indices", Msg: fmt.Sprintf(
					"%d: want ascending candidate indices below %d", i, len(cands))})
			}
			todo = append(todo, cands[i])
		}
		f, err := os.OpenFile(rq.Journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return errorEnvelope(err)
		}
		defer f.Close()
		ctx := context.Background()
		if r := lookupRun(rq.RunID); r != nil {
			ctx = r.ctx
			defer r.ended.Store(true)
		}
		done := 0
		err = q.Run(ctx, todo, search.Options{Jobs: rq.Jobs}, func(r search.Result) error {
			line, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, err := f.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("writing the search journal %s: %w", rq.Journal, err)
			}
			done++
			return nil
		})
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			return errorEnvelope(err)
		}
		return fmt.Sprintf(`{"search":{"done":%d}}`, done)
	})
}
