package model

// refusedArchitectures names the architectures that Parse recognises but
// refuses, each with what the simulator lacks to model it faithfully (the
// error says it instead of the generic list of supported families).
var refusedArchitectures = map[string]string{
	"Gemma4ForConditionalGeneration": "Gemma-4's layers are not modelled: sliding and full attention layers of different head_dim " +
		"(head_dim, global_head_dim) and KV heads (num_key_value_heads, num_global_key_value_heads) with keys shared as values " +
		"(attention_k_eq_v), a MoE block beside the dense MLP (enable_moe_block) and per-layer input embeddings",
	"MiMoV2FlashForCausalLM": "MiMo-V2-Flash's layers are not modelled: full and sliding-window attention layers with their own head counts " +
		"(swa_num_key_value_heads), values narrower than keys (v_head_dim 128, head_dim 192) and attention sinks on the sliding layers",
	"DeciLMForCausalLM": "DeciLM (Llama-Nemotron NAS) is not modelled: its layers differ one by one (block_configs: attention replaced by a " +
		"linear layer or removed, a different FFN width per layer), where the simulator prices groups of identical layers",
}
