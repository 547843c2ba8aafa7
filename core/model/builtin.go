package model

import "sort"

// builtinArchs returns fresh copies of the built-in architectures. The values
// are those of config.json in ../shared/data/aic/model_configs (source:
// ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/model_configs/):
//
//	Qwen/Qwen3-32B                    Qwen--Qwen3-32B_config.json
//	Qwen/Qwen3-8B                     Qwen--Qwen3-8B_config.json
//	meta-llama/Llama-3.1-8B-Instruct  meta-llama--Meta-Llama-3.1-8B_config.json (same architecture)
//	meta-llama/Llama-3.1-70B-Instruct meta-llama--Meta-Llama-3.1-70B_config.json (same architecture)
//
// TestBuiltinsMatchConfigFiles checks each against its file.
func builtinArchs() []Arch {
	return []Arch{
		{
			Name: "Qwen/Qwen3-32B", Architecture: "Qwen3ForCausalLM",
			Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128,
			Intermediate: 25600, Vocab: 151936, MaxPositionEmbeddings: 40960,
			QKNorm: true, WeightDtype: BF16,
		},
		{
			Name: "Qwen/Qwen3-8B", Architecture: "Qwen3ForCausalLM",
			Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
			Intermediate: 12288, Vocab: 151936, MaxPositionEmbeddings: 40960,
			QKNorm: true, WeightDtype: BF16,
		},
		{
			Name: "meta-llama/Llama-3.1-8B-Instruct", Architecture: "LlamaForCausalLM",
			Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
			Intermediate: 14336, Vocab: 128256, MaxPositionEmbeddings: 131072,
			WeightDtype: BF16,
		},
		{
			Name: "meta-llama/Llama-3.1-70B-Instruct", Architecture: "LlamaForCausalLM",
			Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
			Intermediate: 28672, Vocab: 128256, MaxPositionEmbeddings: 131072,
			WeightDtype: BF16,
		},
	}
}

// Builtin returns a copy of the built-in architecture called name
// ("Qwen/Qwen3-32B", …) and true, or nil and false.
func Builtin(name string) (*Arch, bool) {
	for _, a := range builtinArchs() {
		if a.Name == name {
			a := a
			return &a, true
		}
	}
	return nil, false
}

// BuiltinNames lists the built-in model names, sorted.
func BuiltinNames() []string {
	var names []string
	for _, a := range builtinArchs() {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names
}
