package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The piecewise CUDA graphs hold passes up to the largest captured size
// (piecewise_cuda_graph_runner.py max_num_tokens), not up to
// piecewise_cuda_graph_max_tokens itself: server_args.py
// _generate_piecewise_cuda_graph_tokens steps by 256 up to 4096 and by 512
// past it. Worked by hand: a chunk of 3000 is captured up to 2816 (the next
// size is 3072); max_total_tokens 5000 caps an 8192 chunk at 5000, captured
// to 4608; an MLA model's 2048 under max_total_tokens 1000 is 960 (576…1024
// by 64); an MLA model keeps 2048 with chunked prefill off (-1), a GQA model
// none; a chunk of 2 is below the smallest size (4): none.
func TestPiecewiseLargestIsTheLargestCapturedSize(t *testing.T) {
	for _, tc := range []struct {
		chunk, maxTotal int
		mla             bool
		want            int
	}{
		{8192, 0, false, 8192}, {16384, 0, false, 16384}, {3000, 0, false, 2816}, {8192, 5000, false, 4608},
		{8192, 4096, false, 4096}, {8192, 1000, true, 960}, {-1, 0, true, 2048}, {-1, 0, false, 0}, {2, 0, false, 0},
		{4, 0, false, 4}, {100, 0, false, 96},
	} {
		var given *SGLang
		if tc.maxTotal > 0 {
			given = &SGLang{MaxTotalTokens: tc.maxTotal}
		}
		_, _, largest := sglangPiecewiseTokens(Release{0, 5, 10}, tc.chunk, given, SGLangPiecewiseMemory{On: true, MLA: tc.mla})
		assert.Equal(t, tc.want, largest, "%+v", tc)
	}
}
