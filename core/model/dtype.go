package model

import "fmt"

// Dtype is a numeric format of weights or KV cache. The strings match the
// gemm_dtype and kv_cache_dtype columns of the AIConfigurator perf tables.
type Dtype string

// Supported dtypes.
const (
	// BF16 is 16-bit brain float (also used for fp16 checkpoints: same size).
	BF16 Dtype = "bfloat16"
	// FP8 is 8-bit float (e4m3) with per-tensor scales.
	FP8 Dtype = "fp8"
	// FP8Block is 8-bit float with block-wise scales (weight_block_size,
	// for example 128×128, as in Qwen3-32B-FP8). Scales are ignored in the
	// byte count.
	FP8Block Dtype = "fp8_block"
	// NVFP4 is NVIDIA's 4-bit float (e2m1) with one fp8 (e4m3) scale per
	// 16 consecutive elements and one fp32 scale per tensor: ModelOpt's
	// quant_algo "NVFP4" (weights and activations, W4A4). Blackwell runs it
	// on its fp4 tensor cores.
	NVFP4 Dtype = "nvfp4"
	// MXFP4 is the OCP microscaling 4-bit float (e2m1) with one 8-bit
	// power-of-two scale per 32 elements (config.json quant_method
	// "mxfp4", gpt-oss's expert weights). vLLM runs it weight-only
	// (activations bf16): the MoE tables call it "w4a16_mxfp4".
	MXFP4 Dtype = "mxfp4"
	// INT4 is 4-bit integer weights with one bf16 scale per INT4GroupSize
	// elements, activations bf16 (W4A16): compressed-tensors'
	// pack-quantized int4 with symmetric group quantization (Kimi-K2.5's
	// routed experts, group_size 32), which vLLM runs on its Marlin WNA16
	// kernels. The MoE tables call it "int4_wo".
	INT4 Dtype = "int4"
)

// NVFP4GroupSize is the number of fp4 elements that share one fp8 scale in
// NVFP4 (ModelOpt's group_size 16).
const NVFP4GroupSize = 16

// MXFP4GroupSize is the number of fp4 elements that share one 8-bit scale
// in MXFP4 (the OCP microscaling block of 32).
const MXFP4GroupSize = 32

// INT4GroupSize is the number of int4 elements that share one bf16 scale in
// INT4 (Kimi-K2.5's quantization_config group_size; GPTQ/AWQ checkpoints
// with 128 hold 3 % fewer bytes per weight than this counts).
const INT4GroupSize = 32

// Bytes is the size of one element in bytes, scales included where they
// are per group: 2 for BF16; 1 for FP8 and FP8Block (per-tensor and
// 128×128-block scales are negligible); 0.5 + 1/16 = 0.5625 for NVFP4 (four
// bits plus a one-byte scale per NVFP4GroupSize elements); 0.5 + 1/32 =
// 0.53125 for MXFP4 (a one-byte scale per MXFP4GroupSize elements);
// 0.5 + 2/32 = 0.5625 for INT4 (a bf16 scale per INT4GroupSize elements); 0
// for an unknown dtype (check with Valid).
func (d Dtype) Bytes() float64 {
	switch d {
	case BF16:
		return 2
	case FP8, FP8Block:
		return 1
	case NVFP4:
		return 0.5 + 1.0/NVFP4GroupSize
	case MXFP4:
		return 0.5 + 1.0/MXFP4GroupSize
	case INT4:
		return 0.5 + 2.0/INT4GroupSize
	}
	return 0
}

// Valid reports whether d is one of the supported dtypes.
func (d Dtype) Valid() bool { return d.Bytes() > 0 }

// ParseDtype accepts the canonical strings and the aliases "bf16", "float16",
// "fp16" (as BF16: same size and peak), "float8" and "fp8_e4m3" (as FP8),
// "fp4" (as NVFP4, the only 4-bit float format supported). It returns an
// error that names the string and the accepted values.
func ParseDtype(s string) (Dtype, error) {
	switch s {
	case string(BF16), "bf16", "float16", "fp16":
		return BF16, nil
	case string(FP8), "float8", "fp8_e4m3":
		return FP8, nil
	case string(FP8Block):
		return FP8Block, nil
	case string(NVFP4), "fp4":
		return NVFP4, nil
	}
	return "", fmt.Errorf("model: unknown dtype %q (want %s, %s, %s or %s)", s, BF16, FP8, FP8Block, NVFP4)
}
