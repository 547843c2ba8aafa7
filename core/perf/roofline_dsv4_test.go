package perf

import (
	"testing"

	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDSV4CoreHandCount: DeepSeek-V4-Flash at TP 8 (8 heads of 512, window
// 128, CSA top-k 512, indexer 64 × 128; fp8 entries of 584 bytes, indexer
// entries of 132) at P = 1e15 FLOP/s, P_idx = 2e15, W = 8e12 B/s.
//
// A CSA prefill chunk of 256 new tokens, no prefix: window pairs 128·129/2 +
// 128·128 = 24,640, compressed pairs 256²/8 = 8,192; attention F =
// 4·8·512·32,832 = 537,919,488, B = 584·(256 + 64) + 4·8·512·256 =
// 4,381,184 → 5.47648e-7 s (memory bound); indexer F = 2·64·128·256²/8 =
// 134,217,728 → 6.7108864e-8 s.
//
// Two CSA decodes at KV 1,000 and 3,000 (lengths 1,001, 3,001): window keys
// 256, kept lengths 1,001 + 2,048 → 762.25 compressed keys; attention B =
// 584·1,018.25 + 4·8·512·2 = 627,426 → 7.842825e-8 s; indexer B =
// 132·4,002/4 = 132,066 → 1.650825e-8 s. HCA: 256 + 4,002/128 keys, no
// indexer.
func TestDSV4CoreHandCount(t *testing.T) {
	a, err := model.Load("deepseek-ai/DeepSeek-V4-Flash", sharedConfigs)
	require.NoError(t, err)
	csa := NewDSV4Core(a, model.AttnCSA, 8, 1, 1e15, 2e15, 8e12)
	assert.InDelta(t, 4_381_184/8e12+134_217_728/2e15, csa.ContextSeconds(256, 0), 1e-18)
	assert.InDelta(t, 627_426/8e12+132_066/8e12, csa.GenerationSeconds(2, 256, 4002, 1001+2048), 1e-18)
	hca := NewDSV4Core(a, model.AttnHCA, 8, 1, 1e15, 2e15, 8e12)
	keys := 256 + 4002.0/128
	assert.InDelta(t, (584*keys+4*8*512*2)/8e12, hca.GenerationSeconds(2, 256, 4002, 1001+2048), 1e-18)
	swa := NewDSV4Core(a, model.AttnSWA, 8, 1, 1e15, 2e15, 8e12)
	assert.InDelta(t, (584*256.0+4*8*512*2)/8e12, swa.GenerationSeconds(2, 256, 4002, 1001+2048), 1e-18)
	assert.Equal(t, 2048, KeptLengthWindow(a))
	// after a window already listed: sliding_window (128) at 1, the kept length (4 · index_topk 512) at 2
	ws := []int{64}
	win, kept := AddDSV4Windows(&ws, a)
	assert.Equal(t, []int{64, 128, 2048}, ws)
	assert.Equal(t, [2]int{1, 2}, [2]int{win, kept})
	// mHC: 2 sites · 2 bytes · (3·4·4,096 + 2·4,096)
	assert.Equal(t, 229_376.0, MHCBytesPerToken(a))
}

// TestDSV4Roofline: DeepSeek-V4-Flash-NVFP4 on b200_sxm at TP 8 is priced
// by the roofline (a decode pass costs more with a longer context, and a
// prefill chunk more than a decode).
func TestDSV4Roofline(t *testing.T) {
	a, err := model.Load("nvidia/DeepSeek-V4-Flash-NVFP4", sharedConfigs)
	require.NoError(t, err)
	sys, ok := hardware.Builtin("b200_sxm")
	require.True(t, ok)
	r, err := NewRoofline(a, sys, RooflineOptions{TP: 8, KVDtype: model.FP8, Params: specDefaults()})
	require.NoError(t, err)
	short := Batch{Samplers: 64}
	long := Batch{Samplers: 64}
	for i := 0; i < 64; i++ {
		short.AddDecodeWindows(100, r.DecodeWindows())
		long.AddDecodeWindows(8000, r.DecodeWindows())
	}
	assert.Greater(t, r.PassTime(&long), r.PassTime(&short))
	assert.Greater(t, r.Breakdown(&long).GenerationAttentionNs, r.Breakdown(&short).GenerationAttentionNs)
	pre := Batch{Prefill: []Chunk{{NewTokens: 2048}}, Samplers: 1}
	assert.Greater(t, r.PassTime(&pre), r.PassTime(&short))
}
