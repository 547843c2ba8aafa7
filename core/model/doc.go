// Package model describes the architecture of a decoder-only LLM — a dense
// decoder or a mixture-of-experts model — read from a Hugging Face
// config.json, and derives the byte counts that serving needs: KV cache
// bytes per token and weight bytes per GPU under a TP/DP/EP layout.
//
// # Reading order
//
//  1. arch.go: the Arch type, Validate, KVBytesPerToken and WeightBytesPerGPU
//     (the formulas, with units, are on each method).
//  2. config.go: Parse (config.json bytes → Arch) and Load (a path, a
//     built-in name, or a file Org--Name_config.json in a config directory).
//  3. builtin.go: the built-in architectures, so that the default replay
//     needs no data files.
//  4. dtype.go: the Dtype strings shared with the perf tables.
//  5. layers.go: MoE, the per-layer attention and FFN kinds (LayerKind,
//     Groups) and the layer counts the byte formulas use.
//  6. moeconfig.go: the mixture-of-experts families' config.json fields
//     (parseMoE), their weight formats (fp8, MXFP4, ModelOpt mixed
//     precision) and Approximations.
//  7. parallel.go: Parallel (TP, DP, EP in vLLM's terms), ValidateParallel
//     (the layouts vLLM refuses), WeightBytesPerGPUParallel, Params.
//  8. catalogue.go: listings of the models a replay can name.
//  9. linear.go, qwen35config.go: Gated DeltaNet linear attention
//     (LinearAttention: its projections and the recurrent state a request
//     holds, StateBytesPerSequence), the Qwen3-Next / Qwen3.5 family
//     (hybridFamilies, readQwen35) and its weight formats role by role
//     (roleFormats); nemotronhconfig.go: Nemotron-H's Mamba-2 mixers (read
//     onto LinearAttention's shapes), its single-mixer layers paired with
//     their FFN layers (LayerKind.NoFFN) and its checkpoints' module names;
//     llama4config.go: Llama-4's chunked local attention and interleaved
//     MoE; refused.go: architectures refused by name, with what is
//     missing. docs/hybrid.md describes them.
//  10. mla.go, mlaconfig.go, mlaquant.go: multi-head latent attention (MLA,
//     MLAIndexer for DeepSeek Sparse Attention), its latent KV bytes and
//     projections; the DeepSeek family's config.json (readDeepSeek); and
//     the weight formats role by role (attention, dense FFN and shared
//     experts, routed experts) from compressed-tensors' ignore list or
//     ModelOpt's exclude_modules (applyRoleQuant).
//
// # Scope
//
// Dense decoders: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM and
// MistralForCausalLM. Mixture-of-experts (MoEArchitectures): Qwen3-MoE,
// Qwen2-MoE, Mixtral, MiniMax-M2, gpt-oss (sliding-window layers) and
// MiniMax-M3 (block-sparse attention; the language model of its multimodal
// checkpoint) and the DeepSeek family with multi-head latent attention
// (mla.go, mlaconfig.go, mlaquant.go: DeepSeek-V2/V3/V3.2, Kimi-K2/K2.5,
// GLM-5). Hybrid and multimodal (HybridArchitectures): Qwen3-Next, Qwen3.5
// and Qwen3.6, dense and MoE (linear-attention layers beside full
// attention), and Qwen3-VL (the Qwen3 or Qwen3-MoE decoder of text_config);
// of a multimodal checkpoint the language model is read, its vision tower
// left out. docs/moe.md describes the
// MoE families, docs/hybrid.md the hybrid ones.
//
// # Units
//
// Counts (layers, heads, hidden size…) are plain ints. Byte counts are int64
// bytes; bytes per element are float64 (Dtype.Bytes). TP is the
// tensor-parallel degree t: each GPU holds Heads/t query heads and
// ceil(KVHeads/t) KV heads (KV heads are replicated when t > KVHeads, as in
// vLLM).
//
// The notation in the formulas follows docs/design.md ("Perf models"):
// h hidden size, n heads, d head_dim, kv KV heads, I intermediate size,
// V vocab size, L layers, t TP.
package model
