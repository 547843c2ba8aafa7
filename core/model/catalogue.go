package model

import (
	"encoding/json"
	"os"
	"strings"
)

// Listing is one model a replay can name: a built-in or a config.json in a
// model config folder, with what Load makes of it.
type Listing struct {
	// Name is what engine.model takes ("Qwen/Qwen3-32B").
	Name string `json:"name"`
	// Source is "built-in" or the config.json path.
	Source string `json:"source"`
	// Architecture is config.json's first "architectures" entry ("" when it
	// could not be read).
	Architecture string `json:"architecture"`
	// Supported is false when Load refuses the model; Reason says why.
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
	// For a supported model: decoder layers, hidden size (elements), weight
	// format and max_position_embeddings (tokens).
	Layers                int    `json:"layers,omitempty"`
	Hidden                int    `json:"hidden_size,omitempty"`
	WeightDtype           string `json:"weight_dtype,omitempty"`
	MaxPositionEmbeddings int    `json:"max_position_embeddings,omitempty"`
	// For a mixture-of-experts model: routed experts, experts per token and
	// the experts' weight format.
	Experts     int    `json:"num_experts,omitempty"`
	TopK        int    `json:"num_experts_per_tok,omitempty"`
	ExpertDtype string `json:"expert_dtype,omitempty"`
}

// configSuffix ends every model file of a config folder (ConfigFileName).
const configSuffix = "_config.json"

// BuiltinListings lists the built-in models, sorted by name.
func BuiltinListings() []Listing {
	var out []Listing
	for _, name := range BuiltinNames() {
		a, _ := Builtin(name)
		out = append(out, listing(a, "built-in"))
	}
	return out
}

// NameOfConfigFile is the model name a config folder's file stands for
// ("Qwen--Qwen3-32B_config.json" → "Qwen/Qwen3-32B", the inverse of
// ConfigFileName), and false for a file that is not a model config (another
// name, or a ModelOpt Org--Name_hf_quant_config.json).
func NameOfConfigFile(file string) (string, bool) {
	if !strings.HasSuffix(file, configSuffix) || strings.HasSuffix(file, "_hf_quant"+configSuffix) {
		return "", false
	}
	return strings.ReplaceAll(strings.TrimSuffix(file, configSuffix), "--", "/"), true
}

// ListFile loads the config.json at path as model name, as Load would, and
// describes it: its shape when a replay can use it, Load's reason when not.
func ListFile(path, name string) Listing {
	a, err := parseFile(path, name)
	if err != nil {
		return Listing{Name: name, Source: path, Architecture: architectureOf(path), Reason: err.Error()}
	}
	return listing(a, path)
}

func listing(a *Arch, source string) Listing {
	l := Listing{Name: a.Name, Source: source, Architecture: a.Architecture, Supported: true,
		Layers: a.Layers, Hidden: a.Hidden, WeightDtype: string(a.WeightDtype), MaxPositionEmbeddings: a.MaxPositionEmbeddings}
	if m := a.MoE; m != nil {
		l.Experts, l.TopK, l.ExpertDtype = m.Experts, m.TopK, string(a.ExpertDtype())
	}
	return l
}

// architectureOf reads config.json's first "architectures" entry, or "".
func architectureOf(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if toks := findNonFinite(data); len(toks) > 0 { // read as Parse reads them
		data = withNumbers(data, toks, -1, "0", "0")
	}
	var c hfConfig
	if json.Unmarshal(data, &c) != nil || len(c.Architectures) == 0 {
		return ""
	}
	return c.Architectures[0]
}
