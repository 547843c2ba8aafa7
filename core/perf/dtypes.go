package perf

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/model"
)

// ResolveDtypes gives the weight and KV cache formats a pass is priced at:
// weights default to the checkpoint's (arch.WeightDtype), the KV cache to the
// checkpoint's (arch.KVDtype, vLLM's kv_cache_dtype "auto"), else bf16.
// Errors name an unknown weight format or a KV format other than bf16 and fp8.
func ResolveDtypes(arch *model.Arch, weights, kv model.Dtype) (model.Dtype, model.Dtype, error) {
	if weights == "" {
		weights = arch.WeightDtype
	}
	if !weights.Valid() {
		return "", "", fmt.Errorf("unknown weight dtype %q", weights)
	}
	if kv == "" {
		kv = arch.KVDtype
	}
	if kv == "" {
		kv = model.BF16
	}
	if kv != model.BF16 && kv != model.FP8 {
		return "", "", fmt.Errorf("kv dtype %q, want %s or %s", kv, model.BF16, model.FP8)
	}
	return weights, kv, nil
}
