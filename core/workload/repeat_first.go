package workload

import "io"

// RepeatFirst returns a Source that sends n copies of src's first request,
// then src's requests from the first on: a load generator that warms up with
// its first prompt (vLLM's benchmark_serving sends the test prompt,
// input_requests[0], as every warm-up request). The copies and the first
// request share their prompt: a first request without HashIDs (a synthetic
// prompt of its own) gets one id covering its whole prompt, which no other
// request of such a source has, so a prefix cache finds the copies' blocks
// for it and nothing else. IDs are in send order: the copies 0 … n−1, then
// src's request i as n + i.
func RepeatFirst(src Source, n int) Source { return &repeatFirst{src: src, n: n} }

// RepeatFirstCapped is RepeatFirst whose n copies ask at most maxOut output
// tokens each (0: the first request's own), as sglang.bench_serving's
// warm-up asks min(the first prompt's output length, 32); the first request
// itself keeps its length.
func RepeatFirstCapped(src Source, n, maxOut int) Source {
	return &repeatFirst{src: src, n: n, maxOut: maxOut}
}

type repeatFirst struct {
	src   Source
	n     int
	first Request
	read  bool // first holds src's first request
	sent  int  // requests returned
	// maxOut caps the copies' output tokens (0: none)
	maxOut int
}

// Next implements Source.
func (s *repeatFirst) Next(r *Request) error {
	if !s.read {
		if err := s.src.Next(&s.first); err != nil {
			return err
		}
		if s.first.HashIDs == nil {
			s.first.HashIDs, s.first.HashBlockTokens = []int64{0}, s.first.InputTokens
		}
		s.read = true
	}
	switch {
	case s.sent <= s.n: // the copies, then the first itself
		*r = s.first
		r.HashIDs = append([]int64(nil), s.first.HashIDs...)
		if s.maxOut > 0 && s.sent < s.n {
			r.OutputTokens = min(r.OutputTokens, s.maxOut)
		}
	default:
		if err := s.src.Next(r); err != nil {
			return err
		}
	}
	r.ID = int64(s.sent)
	s.sent++
	return nil
}

// RepeatLeading returns a Source that sends copies of src's first n requests,
// then src's requests from the first on: a load generator whose measured
// phase starts its dataset over after the warm-up (perf_analyzer, behind
// genai-perf, joins its warm-up contexts and starts new ones at data step 0).
// Each copy shares its original's prompt (one id over the whole prompt for a
// request without HashIDs, as RepeatFirst's). A src of fewer than n requests
// is copied whole. IDs are in send order.
func RepeatLeading(src Source, n int) Source { return &repeatLeading{src: src, n: n} }

type repeatLeading struct {
	src  Source
	n    int
	lead []Request
	read bool
	sent int
}

// Next implements Source.
func (s *repeatLeading) Next(r *Request) error {
	if !s.read {
		for len(s.lead) < s.n {
			var x Request
			if err := s.src.Next(&x); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			if x.HashIDs == nil {
				x.HashIDs, x.HashBlockTokens = []int64{int64(len(s.lead))}, x.InputTokens
			}
			s.lead = append(s.lead, x)
		}
		s.read = true
	}
	k := len(s.lead)
	switch {
	case s.sent < 2*k: // the copies, then the originals
		*r = s.lead[s.sent%k]
		r.HashIDs = append([]int64(nil), r.HashIDs...)
	default:
		if err := s.src.Next(r); err != nil {
			return err
		}
	}
	r.ID = int64(s.sent)
	s.sent++
	return nil
}

// IsolateLeading returns a Source that sends src's requests with the first n
// of them (the warm-up) on prompts that share no block with any later
// request's: a load generator that writes one marker at the start of every
// warm-up prompt, as AIPerf 0.11.0–0.12.x do (Worker._system_message_for_phase).
// Each warm-up request's HashIDs move into an id space of their own
// (isolatedBase | id), so two warm-ups of one dataset entry still share
// their blocks, as two prompts behind the same marker do; a request without
// HashIDs (a prompt of its own) or with a ContentKey stream is as src gives
// it, a ContentKey moved the same way. Lengths, order and IDs are src's.
func IsolateLeading(src Source, n int) Source { return &isolateLeading{src: src, n: n} }

// isolatedBase marks the block ids of an isolated warm-up prompt: far above
// any id a source gives (a dataset's prefix blocks start at prefixBase,
// 2^40).
const isolatedBase = int64(1) << 62

type isolateLeading struct {
	src  Source
	n    int
	sent int
}

// Next implements Source.
func (s *isolateLeading) Next(r *Request) error {
	if err := s.src.Next(r); err != nil {
		return err
	}
	if s.sent < s.n {
		ids := make([]int64, len(r.HashIDs))
		for i, id := range r.HashIDs {
			ids[i] = isolatedBase | id
		}
		if r.HashIDs != nil {
			r.HashIDs = ids
		}
		if r.ContentKey != 0 {
			r.ContentKey ^= uint64(isolatedBase)
		}
	}
	s.sent++
	return nil
}
