package model

import "fmt"

// readDeepSeekV4: DeepSeek-V4 (DeepseekV4ForCausalLM, Flash and Pro), as
// vLLM's vllm/models/deepseek_v4 reads it: every layer a MoE FFN of
// n_routed_experts experts of moe_intermediate_size, num_experts_per_tok
// per token, plus n_shared_experts × moe_intermediate_size of shared
// experts (the first num_hash_layers layers route by token id); every
// layer's attention one shared head of head_dim (num_key_value_heads 1)
// with a q_lora_rank query, o_groups × o_lora_rank output LoRA and a
// sliding_window, and compress_ratios[i] (0, 4 or 128) the layer's
// compressed cache (CompressedAttention). compress_ratios may have more
// entries than num_hidden_layers (the multi-token-prediction layer's
// follows; vLLM reads the first num_hidden_layers). hc_mult residual
// streams with hc_sinkhorn_iters Sinkhorn iterations (default 20, as
// vLLM's config).
func readDeepSeekV4(c *moeConfig, a *Arch) error {
	if err := readDeepSeekExperts(c, a); err != nil {
		return err
	}
	var err error
	d := &CompressedAttention{SinkhornIters: 20}
	for _, f := range []struct {
		p     *int
		field string
		dst   *int
	}{{c.QLoraRank, "q_lora_rank", &d.QLoraRank}, {c.OLoraRank, "o_lora_rank", &d.OLoraRank},
		{c.OGroups, "o_groups", &d.OGroups}, {c.QKRopeHeadDim, "qk_rope_head_dim", &d.RopeDim},
		{c.SlidingWindow, "sliding_window", &d.Window}, {c.IndexNHeads, "index_n_heads", &d.Indexer.Heads},
		{c.IndexHeadDim, "index_head_dim", &d.Indexer.HeadDim}, {c.IndexTopK, "index_topk", &d.Indexer.TopK},
		{c.HCMult, "hc_mult", &d.HCMult}} {
		if *f.dst, err = need(f.p, f.field, true); err != nil {
			return err
		}
	}
	if c.HCSinkhornIters != nil {
		if d.SinkhornIters, err = need(c.HCSinkhornIters, "hc_sinkhorn_iters", true); err != nil {
			return err
		}
	}
	if c.NumHashLayers != nil {
		if d.HashLayers, err = need(c.NumHashLayers, "num_hash_layers", false); err != nil {
			return err
		}
		if d.HashLayers > a.Layers {
			return fmt.Errorf("num_hash_layers = %d exceeds num_hidden_layers = %d", d.HashLayers, a.Layers)
		}
	}
	if c.HeadDim == nil {
		return fmt.Errorf("head_dim is missing (DeepSeek-V4's one key/value head)")
	}
	if a.KVHeads != 1 {
		return fmt.Errorf("num_key_value_heads = %d, want 1 (DeepSeek-V4's attention has one shared key/value head)", a.KVHeads)
	}
	if d.RopeDim >= a.HeadDim {
		return fmt.Errorf("qk_rope_head_dim = %d, want below head_dim = %d", d.RopeDim, a.HeadDim)
	}
	if err := d.validate(a.Heads, 0); err != nil {
		return err
	}
	if c.CompressRatios == nil {
		return fmt.Errorf("compress_ratios is missing")
	}
	if len(*c.CompressRatios) < a.Layers {
		return fmt.Errorf("compress_ratios has %d entries, want at least num_hidden_layers = %d", len(*c.CompressRatios), a.Layers)
	}
	d.Ratios = append([]int(nil), (*c.CompressRatios)[:a.Layers]...)
	a.LayerKinds = make([]LayerKind, a.Layers)
	for i, r := range d.Ratios {
		if r != 0 && r != dsv4CSARatio && r != dsv4HCARatio {
			return fmt.Errorf("compress_ratios[%d] = %d, want 0, 4 or 128 (vLLM's compressor takes 4 and 128)", i, r)
		}
		a.LayerKinds[i] = LayerKind{Attn: dsv4Kind(r), MoE: true}
	}
	if c.ExpertDtype != nil {
		switch *c.ExpertDtype {
		case "fp4", "fp8":
			d.expertDtype = *c.ExpertDtype
		default:
			return fmt.Errorf("expert_dtype = %q, want \"fp4\" or \"fp8\" (vLLM's DeepseekV4FP8Config)", *c.ExpertDtype)
		}
	}
	a.DSV4 = d
	a.SlidingWindow = d.Window
	a.AttentionSinks = true
	a.Approximations = append(a.Approximations,
		"DeepSeek-V4 manifold-constrained hyper-connections: their mixing weights (2·(2+hc)·hc·hc·h per layer) are left out of the weight memory",
		fmt.Sprintf("DeepSeek-V4 hash routing: the first %d layers' experts, picked by token id (tid2eid), are priced as score-routed, uniformly spread experts", d.HashLayers),
		"attention sinks (one learned logit per head) are not priced apart",
		"DeepSeek-V4 attention: the output LoRA's batched GEMM over the rank's o_groups is priced as one GEMM of its FLOPs and weights, and the compressed entries a query reads as a continuous i/ratio (roofline)",
		"DeepSeek-V4 attention from the module tables (aic): a prefill chunk's cached prefix is added at the core's roofline to the prefix-free row, the layers of the window alone read the HCA module, and a pass with prefills and decodes pays both modules' fixed costs")
	return nil
}

// dsv4Quant sets DeepSeek-V4's weight formats as vLLM's
// vllm/models/deepseek_v4/quant_config.py DeepseekV4FP8Config does:
// quantization_config quant_method "fp8" with weight_block_size gives
// fp8_block linear layers (attention projections, shared experts); the
// routed experts follow expert_dtype: "fp4" → MXFP4 (Mxfp4MoEMethod), or
// NVFP4 when quantization_config.moe_quant_algo is "NVFP4" (ModelOpt's
// NVFP4 experts: ModelOptNvFp4FusedMoE); "fp8" → fp8_block. A checkpoint
// without expert_dtype (SGLang's FP8 conversions) keeps its experts in the
// checkpoint's fp8_block, and Approximations says so: vLLM would read the
// missing field as "fp4". No quantization_config: bf16 everywhere.
func dsv4Quant(q *moeQuantConfig, a *Arch) error {
	if q == nil {
		if a.DSV4.expertDtype != "" {
			return fmt.Errorf("config.json field expert_dtype = %q without a quantization_config", a.DSV4.expertDtype)
		}
		a.WeightDtype = BF16
		return nil
	}
	if q.QuantMethod != "fp8" || len(q.WeightBlockSize) == 0 {
		return fmt.Errorf("config.json field quantization_config: quant_method %q (weight_block_size %v) not supported for DeepSeek-V4 (fp8 with weight_block_size, as vLLM's DeepseekV4FP8Config)",
			q.QuantMethod, q.WeightBlockSize)
	}
	a.WeightDtype = FP8Block
	switch {
	case a.DSV4.expertDtype == "fp4" && q.MoEQuantAlgo == "NVFP4":
		a.MoE.Dtype = NVFP4
	case a.DSV4.expertDtype == "fp4" && q.MoEQuantAlgo == "":
		a.MoE.Dtype = MXFP4
	case a.DSV4.expertDtype == "fp4":
		return fmt.Errorf("config.json field quantization_config.moe_quant_algo = %q not supported (NVFP4, or none for MXFP4 experts)", q.MoEQuantAlgo)
	case a.DSV4.expertDtype == "fp8":
		a.MoE.Dtype = FP8Block
	default:
		a.MoE.Dtype = FP8Block
		a.Approximations = append(a.Approximations,
			"config.json has no expert_dtype: the routed experts are priced in the checkpoint's fp8_block (vLLM would read them as fp4)")
	}
	if q.KVCacheQuantAlgo != nil && *q.KVCacheQuantAlgo == "FP8" {
		a.KVDtype = FP8
	}
	return nil
}
