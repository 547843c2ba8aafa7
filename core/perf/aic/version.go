package aic

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// version is a backend version such as "0.24.0" parsed into numbers for the
// nearest-version rule; Raw keeps the folder name.
type version struct {
	Raw   string
	Parts [3]int
}

// parseVersion reads "MAJOR.MINOR[.PATCH]" with an optional suffix after the
// patch number (".dev…", "+g…") that is ignored; a development build
// without a patch number ("0.1.dev19262": a vLLM built from a branch with
// no release tag, as setuptools-scm names it) has patch 0. Errors name the
// string.
func parseVersion(s string) (version, error) {
	v := version{Raw: s}
	fields := strings.SplitN(s, ".", 4)
	if len(fields) < 2 {
		return v, fmt.Errorf("aic: backend version %q: want MAJOR.MINOR[.PATCH]", s)
	}
	for i := 0; i < 3 && i < len(fields); i++ {
		digits := fields[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		if i == 2 && digits == "" && strings.HasPrefix(fields[i], "dev") {
			break
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return v, fmt.Errorf("aic: backend version %q: part %d is not a number", s, i+1)
		}
		v.Parts[i] = n
	}
	return v, nil
}

// distance orders versions by closeness to a target: the major, minor and
// patch differences weighted 1e6, 1e3 and 1, as a float. 0.12.0 is 2000 from
// 0.14.0 and 7000 from 0.19.0.
func (v version) distance(w version) float64 {
	var d float64
	for i, scale := range []float64{1e6, 1e3, 1} {
		d += scale * float64(v.Parts[i]-w.Parts[i])
	}
	return math.Abs(d)
}

// newer reports whether v sorts after w.
func (v version) newer(w version) bool {
	for i := range v.Parts {
		if v.Parts[i] != w.Parts[i] {
			return v.Parts[i] > w.Parts[i]
		}
	}
	return v.Raw > w.Raw
}

// nearestVersion returns the candidate closest to want (distance), the newer
// one on a tie. ok is false when there is no candidate.
func nearestVersion(want version, candidates []version) (best version, ok bool) {
	for _, c := range candidates {
		if !ok {
			best, ok = c, true
			continue
		}
		dc, db := want.distance(c), want.distance(best)
		if dc < db || (dc == db && c.newer(best)) {
			best = c
		}
	}
	return best, ok
}

// knownBad lists tables that must not be used, with the reason
// (../shared/data/README.md, "Known traps"). Key: system/table/version.
// A table listed here is treated as missing, so the nearest other version
// stands in and the report's metadata says why.
var knownBad = map[string]string{
	"h200_sxm/context_attention_perf/0.19.0": "context-attention latency falls as the head count rises, below the roofline (known trap)",
	// the SGLang 0.5.6.post2 collection's all-reduce file holds TensorRT-LLM's
	// kernel (implementation trtllm, no CUDA-graph rows of SGLang's own)
	"h100_sxm/custom_allreduce_perf/0.5.6.post2": "it holds TensorRT-LLM's all-reduce (implementation trtllm), not SGLang's",
	"h200_sxm/custom_allreduce_perf/0.5.6.post2": "it holds TensorRT-LLM's all-reduce (implementation trtllm), not SGLang's",
}
