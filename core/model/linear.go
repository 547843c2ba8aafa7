package model

import "fmt"

// LinearAttention is the Gated DeltaNet (GDN) linear attention of the
// AttnLinear layers (Qwen3-Next, Qwen3.5, Qwen3.6: layer_types
// "linear_attention"; Arch.Linear), as vLLM's GatedDeltaNetAttention runs
// it (vllm/model_executor/layers/mamba/gdn_linear_attn.py): per token a
// fused projection in_proj_qkvz (queries and keys of KeyHeads × KeyDim,
// values and the output gate z of ValueHeads × ValueDim) and in_proj_ba
// (one beta and one alpha per value head), a causal depthwise convolution
// of ConvKernel taps over the q, k and v channels, the gated delta rule
// (a recurrent state of KeyDim × ValueDim per value head), a gated RMSNorm
// and out_proj. Instead of a KV cache that grows with the context, each
// request holds a constant state per layer: the convolution's last
// ConvKernel − 1 inputs and the recurrent state (vLLM MambaSpec, its
// shapes from MambaStateShapeCalculator.gated_delta_net_state_shape).
// Dimensions in elements.
type LinearAttention struct {
	// KeyHeads, KeyDim are linear_num_key_heads and linear_key_head_dim.
	KeyHeads, KeyDim int
	// ValueHeads, ValueDim are linear_num_value_heads and
	// linear_value_head_dim.
	ValueHeads, ValueDim int
	// ConvKernel is linear_conv_kernel_dim (4 in every Qwen3.5 checkpoint).
	ConvKernel int
	// StateBytes is the bytes of one element of the recurrent state: 4 when
	// config.json pins mamba_ssm_dtype to float32 (every Qwen3.5 and
	// Qwen3.6 checkpoint), else the activations' 2 (bf16). The convolution
	// state is always bf16.
	StateBytes float64
	// Mamba2 marks a Mamba-2 mixer (Nemotron-H's "M" layers, vLLM's
	// MambaMixer2 in vllm/model_executor/layers/mamba/mamba_mixer2.py) read
	// onto the same shapes: KeyHeads is n_groups, KeyDim ssm_state_size
	// (B and C are G groups of N, the "keys"), ValueHeads mamba_num_heads,
	// ValueDim mamba_head_dim (x, the "values"), so that the convolution's
	// channels H·P + 2·G·N and the state's (H/t)·N·P per layer are
	// mamba2_state_shape's (MambaStateShapeCalculator); Chunk is chunk_size
	// (the SSD kernels' chunk, 128).
	Mamba2 bool
	Chunk  int
	// KDA marks a Kimi Delta Attention layer (Kimi-K3's kda_layers, vLLM's
	// KimiDeltaAttention in vllm/model_executor/layers/kda.py) read onto the
	// same shapes: KeyHeads = ValueHeads = num_heads, KeyDim = ValueDim =
	// head_dim; q, k and v each pass a causal convolution (the channels
	// 3·H·d, MambaStateShapeCalculator.kda_state_shape's three conv states)
	// and the delta rule keeps an H·d·d state in fp32 (StateBytes 4). Its
	// decay gate is per key channel (f_a_proj, f_b_proj: a rank-d_k
	// projection) where Gated DeltaNet's is one scalar per head.
	KDA bool
	// FullRankGate (with KDA) is linear_attn_config.use_full_rank_gate: the
	// output gate is one full-rank projection g_proj (h → H·d) instead of
	// the rank-d pair g_a_proj, g_b_proj.
	FullRankGate bool
}

// ConvChannels is the channels of the causal convolution on one GPU under
// tensor parallelism t: (2·KeyHeads·KeyDim + ValueHeads·ValueDim) / t.
func (l *LinearAttention) ConvChannels(tp int) int {
	return (2*l.KeyHeads*l.KeyDim + l.ValueHeads*l.ValueDim) / tp
}

// StateBytesPerLayer is one request's state in one linear-attention layer
// on one GPU, bytes (vLLM MambaSpec.page_size_bytes before padding):
//
//	conv      (ConvKernel − 1) · ConvChannels(t) · 2
//	temporal  (ValueHeads / t) · KeyDim · ValueDim · StateBytes
//
// Qwen3.5-27B at TP 1: 3 · 10,240 · 2 + 48 · 128 · 128 · 4 = 3,207,168.
func (l *LinearAttention) StateBytesPerLayer(tp int) int64 {
	conv := int64(l.ConvKernel-1) * int64(l.ConvChannels(tp)) * 2
	temporal := float64(l.ValueHeads/tp) * float64(l.KeyDim) * float64(l.ValueDim) * l.StateBytes
	return conv + int64(temporal)
}

// LinearProjections returns the weight GEMMs of one linear-attention layer
// on one GPU (N output, K input features) under tensor parallelism t:
//
//	in_proj_qkvz  N = (2·H_k·d_k + 2·H_v·d_v) / t, K = h   (column parallel)
//	in_proj_ba    N = 2·H_v / t,                   K = h   (column parallel)
//	out_proj      N = h,                           K = H_v·d_v / t (row parallel)
//
// Source: vllm/model_executor/layers/mamba/gdn_linear_attn.py (the
// checkpoint's in_proj_qkv and in_proj_z, in_proj_b and in_proj_a are
// loaded fused, vllm/model_executor/models/qwen3_5.py).
//
// A Mamba-2 mixer has one in_proj, N = (2·H·P + 2·G·N + H) / t (z and x,
// B and C, one dt per head), and out_proj, K = H·P / t (mamba_mixer2.py).
//
// A KDA layer (H heads of d, P = H·d) has
//
//	qkvg   N = 4·P / t, K = h   (q, k, v and the full-rank output gate; 3·P / t
//	                            without use_full_rank_gate, then g_a N = d,
//	                            K = h replicated and g_b N = P / t, K = d)
//	f_a    N = d,       K = h   (replicated: the decay gate's down-projection)
//	f_b    N = P / t,   K = d   (column parallel)
//	b      N = H / t,   K = h   (one beta per head)
//	o_proj N = h,       K = P / t (row parallel)
func (a *Arch) LinearProjections(tp int) []GEMMShape {
	l := a.Linear
	v := l.ValueHeads * l.ValueDim
	if l.KDA {
		// q, k, v (and a full-rank output gate g_proj) column parallel;
		// f_a_proj replicated (h → d), f_b_proj column parallel (d → H·d);
		// b_proj one beta per head (kda.py KimiDeltaAttention.__init__)
		p := v / tp
		out := []GEMMShape{{"qkv", 3 * p, a.Hidden}}
		if l.FullRankGate {
			out[0] = GEMMShape{"qkvg", 4 * p, a.Hidden}
		} else {
			out = append(out, GEMMShape{"g_a", l.KeyDim, a.Hidden}, GEMMShape{"g_b", p, l.KeyDim})
		}
		return append(out, GEMMShape{"f_a", l.KeyDim, a.Hidden}, GEMMShape{"f_b", p, l.KeyDim},
			GEMMShape{"b", l.ValueHeads / tp, a.Hidden}, GEMMShape{"o_proj", a.Hidden, p})
	}
	if l.Mamba2 {
		return []GEMMShape{
			{"in_proj", (2*v + 2*l.KeyHeads*l.KeyDim + l.ValueHeads) / tp, a.Hidden},
			{"out_proj", a.Hidden, v / tp},
		}
	}
	return []GEMMShape{
		{"in_proj_qkvz", (2*l.KeyHeads*l.KeyDim + 2*v) / tp, a.Hidden},
		{"in_proj_ba", 2 * l.ValueHeads / tp, a.Hidden},
		{"out_proj", a.Hidden, v / tp},
	}
}

// linearAttentionWeights is the projection weights of one linear-attention
// layer on one GPU, elements (LinearProjections' N·K).
func (a *Arch) linearAttentionWeights(tp int) int64 {
	var w int64
	for _, g := range a.LinearProjections(tp) {
		w += int64(g.N) * int64(g.K)
	}
	return w
}

// StateBytesPerSequence is the recurrent state one request holds on one GPU
// for its whole life, bytes: LinearLayers · StateBytesPerLayer(t) (0 for a
// model without linear-attention layers). It does not grow with the
// context: it is what a request costs beyond its KVBytesPerToken.
func (a *Arch) StateBytesPerSequence(tp int) int64 {
	if a.Linear == nil {
		return 0
	}
	return int64(a.LinearLayers()) * a.Linear.StateBytesPerLayer(tp)
}

// StateBytesPerSequenceAs is StateBytesPerSequence with the recurrent state
// kept at stateBytes per element (an engine's own setting: SGLang's
// --mamba-ssm-dtype), 0 without linear-attention layers.
func (a *Arch) StateBytesPerSequenceAs(tp int, stateBytes float64) int64 {
	if a.Linear == nil {
		return 0
	}
	l := *a.Linear
	l.StateBytes = stateBytes
	return int64(a.LinearLayers()) * l.StateBytesPerLayer(tp)
}

// validate checks the linear attention's dimensions and that tensor
// parallelism t splits its heads (vLLM shards the key and value heads).
func (l *LinearAttention) validate(tp int) error {
	names := [5]string{"linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads", "linear_value_head_dim", "linear_conv_kernel_dim"}
	if l.Mamba2 {
		names = [5]string{"n_groups", "ssm_state_size", "mamba_num_heads", "mamba_head_dim", "conv_kernel"}
	}
	if l.KDA {
		const f = "linear_attn_config."
		names = [5]string{f + "num_heads", f + "head_dim", f + "num_heads", f + "head_dim", f + "short_conv_kernel_size"}
	}
	for i, v := range []int{l.KeyHeads, l.KeyDim, l.ValueHeads, l.ValueDim, l.ConvKernel} {
		if v < 1 || v > maxMLADim {
			return fmt.Errorf("%s = %d, out of range 1..%d", names[i], v, maxMLADim)
		}
	}
	if l.ValueHeads%l.KeyHeads != 0 {
		return fmt.Errorf("%s = %d does not divide %s = %d", names[0], l.KeyHeads, names[2], l.ValueHeads)
	}
	if tp > 0 && (l.KeyHeads%tp != 0 || l.ValueHeads%tp != 0) {
		return fmt.Errorf("tensor parallel size %d does not divide %s = %d and %s = %d",
			tp, names[0], l.KeyHeads, names[2], l.ValueHeads)
	}
	return nil
}

// stateField is a config.json count (a recurrent layer's shape, a MoE's
// experts), read into dst (readFields).
type stateField struct {
	p     *int
	field string
	dst   *int
}

// readFields reads each field into its dst, in order (each required, > 0);
// the first missing or bad one is the error, naming it.
func readFields(fields []stateField) error {
	for _, f := range fields {
		var err error
		if *f.dst, err = need(f.p, f.field, true); err != nil {
			return err
		}
	}
	return nil
}

// read fills l from its config.json fields (each required, > 0) and the
// recurrent state's dtype field (dtypeField: "float32" keeps it in fp32,
// bfloat16 or float16 in 2 bytes; absent leaves l.StateBytes), then
// validates l. Errors name the field.
func (l *LinearAttention) read(fields []stateField, dtype *string, dtypeField string) error {
	if err := readFields(fields); err != nil {
		return err
	}
	if dtype != nil {
		switch *dtype {
		case "float32":
			l.StateBytes = 4
		case "bfloat16", "float16":
		default:
			return fmt.Errorf("%s %q not supported (float32, bfloat16)", dtypeField, *dtype)
		}
	}
	return l.validate(0)
}
