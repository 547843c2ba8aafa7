package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
)

// SupportedArchitectures lists the config.json "architectures" values that
// Parse accepts: dense decoders with standard GQA attention and a SwiGLU MLP.
func SupportedArchitectures() []string {
	return []string{"LlamaForCausalLM", "MiMoForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}
}

// hfConfig is the subset of a Hugging Face config.json that Parse reads.
// Pointers distinguish a missing (or null) field from zero.
type hfConfig struct {
	Architectures         []string     `json:"architectures"`
	NumHiddenLayers       *int         `json:"num_hidden_layers"`
	HiddenSize            *int         `json:"hidden_size"`
	NumAttentionHeads     *int         `json:"num_attention_heads"`
	NumKeyValueHeads      *int         `json:"num_key_value_heads"`
	HeadDim               *int         `json:"head_dim"`
	IntermediateSize      *int         `json:"intermediate_size"`
	VocabSize             *int         `json:"vocab_size"`
	MaxPositionEmbeddings *int         `json:"max_position_embeddings"`
	TieWordEmbeddings     bool         `json:"tie_word_embeddings"`
	QuantizationConfig    *quantConfig `json:"quantization_config"`
	NumNextnPredictLayers *int         `json:"num_nextn_predict_layers"`
	// TorchDtype and Dtype (transformers' name from 4.56) are checked to
	// name a torch type (checkTorchDtype, inputs.go).
	TorchDtype *string `json:"torch_dtype"`
	Dtype      *string `json:"dtype"`
}

// quantConfig is config.json's quantization_config, or the "quantization"
// object of a ModelOpt hf_quant_config.json (same quant_algo, exclusions
// named exclude_modules there and ignore in config.json).
type quantConfig struct {
	QuantMethod      string   `json:"quant_method"`
	QuantAlgo        string   `json:"quant_algo"`
	WeightBlockSize  []int    `json:"weight_block_size"`
	KVCacheQuantAlgo *string  `json:"kv_cache_quant_algo"`
	KVCacheScheme    *kvQuant `json:"kv_cache_scheme"`
	ExcludeModules   []string `json:"exclude_modules"`
	Ignore           []string `json:"ignore"`
}

// kvQuant is a kv_cache_scheme: compressed-tensors style, an object
// {"num_bits": 8, "type": "float"}, or a ModelOpt export's name of the
// format, a string ("FP8", as in config.json of a checkpoint exported by
// ModelOpt 0.31, e.g. Qwen3-32B-FP8-Static-PerTensor; vLLM's ModelOpt config
// reads the string, trimmed and in any case). Name holds the string.
type kvQuant struct {
	NumBits int    `json:"num_bits"`
	Type    string `json:"type"`
	Name    string `json:"-"`
}

// UnmarshalJSON reads either form; the string "FP8" is an 8-bit float.
func (k *kvQuant) UnmarshalJSON(data []byte) error {
	var name string
	if json.Unmarshal(data, &name) == nil {
		*k = kvQuant{Name: name}
		if strings.EqualFold(strings.TrimSpace(name), "FP8") {
			k.NumBits, k.Type = 8, "float"
		}
		return nil
	}
	type plain kvQuant // without this method
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("kv_cache_scheme must be an object {num_bits, type} or a format name such as \"FP8\", got %s", quoteJSON(data))
	}
	*k = kvQuant(p)
	return nil
}

// quoteJSON is a JSON value for an error message, cut to 60 bytes.
func quoteJSON(data []byte) string {
	if len(data) > 60 {
		return string(data[:57]) + "..."
	}
	return string(data)
}

// Parse reads a Hugging Face config.json and returns its architecture, named
// name. Defaults: head_dim = hidden_size / num_attention_heads,
// num_key_value_heads = num_attention_heads. Quantization (quantConfig):
// quant_method "fp8" gives FP8 weights, or FP8Block when weight_block_size
// is set; a ModelOpt quant_algo "FP8" gives FP8 and "NVFP4" gives NVFP4; no
// quantization_config gives BF16; any other quantization is an error. The
// checkpoint's KV cache format (KVDtype) is FP8 when kv_cache_quant_algo is
// "FP8" or kv_cache_scheme is an 8-bit float, else unset.
//
// Errors name the model and the config field: invalid JSON, a missing or
// non-positive count, a count beyond its physical bound (Limits), an
// architecture outside SupportedArchitectures and MoEArchitectures ("not
// supported: architectures = …", listing both), an unsupported
// quantization, or exclusions (exclude_modules / ignore) that leave a decoder
// layer's GEMMs unquantized (mixed precision per layer is not modelled for
// dense decoders). A mixture-of-experts family is read by parseMoE.
func Parse(data []byte, name string) (*Arch, error) {
	if toks := findNonFinite(data); len(toks) > 0 {
		return parseNonFinite(data, name, toks)
	}
	return parseJSON(data, name)
}

// parseJSON is Parse of a config.json without non-finite numbers.
func parseJSON(data []byte, name string) (*Arch, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("model %s: config.json%w", name, readableJSON(syntaxError(data, err), ""))
	}
	if err := checkTorchDtype(&c); err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	if len(c.Architectures) == 0 {
		return nil, fmt.Errorf("model %s: config.json field architectures is missing or empty", name)
	}
	arch := c.Architectures[0]
	_, moe := moeFamilies[arch]
	if _, hybrid := hybridFamilies[arch]; moe || hybrid {
		return parseMoE(data, name, arch)
	}
	supported := false
	for _, s := range SupportedArchitectures() {
		supported = supported || s == arch
	}
	if !supported {
		if why, known := refusedArchitectures[arch]; known {
			return nil, fmt.Errorf("model %s: not supported: architectures = %s: %s", name, arch, why)
		}
		return nil, fmt.Errorf("model %s: not supported: architectures = %s (dense decoders: %s; mixture-of-experts: %s; hybrid and multimodal: %s)",
			name, arch, strings.Join(SupportedArchitectures(), ", "), strings.Join(MoEArchitectures(), ", "),
			strings.Join(HybridArchitectures(), ", "))
	}

	a := &Arch{Name: name, Architecture: arch, QKNorm: arch == "Qwen3ForCausalLM", TieEmbeddings: c.TieWordEmbeddings}
	if err := readCommon(&c, a, "", true); err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}

	if err := a.checkLimits("config.json field", true); err != nil {
		return nil, err
	}
	a.WeightDtype = BF16
	if err := applyQuant(a, c.QuantizationConfig, "config.json field quantization_config"); err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	if arch == "MiMoForCausalLM" {
		// vLLM's mimo.py: Qwen2's layers, plus multi-token-prediction layers
		a.Approximations = append(a.Approximations,
			"the multi-token-prediction layers (num_nextn_predict_layers) are not loaded: they serve speculative decoding only")
	}
	return a, nil
}

// applyQuant sets a's weight and KV cache formats from a quantization
// object q (nil changes nothing); where names it in errors.
func applyQuant(a *Arch, q *quantConfig, where string) error {
	if q == nil {
		return nil
	}
	modelopt := q.QuantMethod == "" || q.QuantMethod == "modelopt"
	switch {
	case q.QuantMethod == "fp8" && len(q.WeightBlockSize) > 0:
		a.WeightDtype = FP8Block
	case q.QuantMethod == "fp8":
		a.WeightDtype = FP8
	case modelopt && q.QuantAlgo == "FP8":
		a.WeightDtype = FP8
	case modelopt && q.QuantAlgo == "NVFP4":
		a.WeightDtype = NVFP4
	default:
		return fmt.Errorf("%s: quant_method %q, quant_algo %q not supported (fp8, fp8 with weight_block_size, ModelOpt FP8 or NVFP4)",
			where, q.QuantMethod, q.QuantAlgo)
	}
	switch {
	case q.KVCacheQuantAlgo != nil && *q.KVCacheQuantAlgo == "FP8":
		a.KVDtype = FP8
	case q.KVCacheQuantAlgo != nil:
		return fmt.Errorf("%s: kv_cache_quant_algo %q not supported (FP8)", where, *q.KVCacheQuantAlgo)
	case q.KVCacheScheme != nil && q.KVCacheScheme.NumBits == 8 && q.KVCacheScheme.Type == "float":
		a.KVDtype = FP8
	case q.KVCacheScheme != nil && q.KVCacheScheme.Name != "":
		return fmt.Errorf("%s: kv_cache_scheme %q not supported (FP8, or an 8-bit float scheme)",
			where, q.KVCacheScheme.Name)
	case q.KVCacheScheme != nil:
		return fmt.Errorf("%s: kv_cache_scheme %d-bit %s not supported (8-bit float)",
			where, q.KVCacheScheme.NumBits, q.KVCacheScheme.Type)
	}
	for _, p := range append(append([]string(nil), q.ExcludeModules...), q.Ignore...) {
		if m, ok := excludesLayerGEMM(p, a.Layers); ok {
			return fmt.Errorf("%s: excluded module %q leaves %s unquantized: per-layer mixed precision is not modelled",
				where, p, m)
		}
	}
	return nil
}

// layerGEMMModules are the Hugging Face module names of a dense decoder
// layer's weight GEMMs (Llama, Mistral, Qwen2, Qwen3), after
// "model.layers.<i>.".
var layerGEMMModules = [...]string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}

// excludesLayerGEMM reports whether the quantization exclusion pattern p
// (ModelOpt's fnmatch glob, or a parent module name) covers a weight GEMM of
// any of the layers decoder layers, and names the first one it covers.
// Exclusions of lm_head, the embedding or modules outside the decoder
// layers change nothing that is priced (the logits GEMM is bf16 anyway).
func excludesLayerGEMM(p string, layers int) (string, bool) {
	for i := 0; i < layers; i++ {
		for _, g := range layerGEMMModules {
			m := fmt.Sprintf("model.layers.%d.%s", i, g)
			if ok, _ := path.Match(p, m); ok || strings.HasPrefix(m, p+".") {
				return m, true
			}
		}
	}
	return "", false
}

// ConfigFileName is the file name under which the AIConfigurator data keeps
// a model's config.json: "Qwen/Qwen3-32B" → "Qwen--Qwen3-32B_config.json".
func ConfigFileName(name string) string {
	return strings.ReplaceAll(name, "/", "--") + "_config.json"
}

// Load returns the architecture of nameOrPath, trying in order:
//  1. nameOrPath is an existing file: Parse it; a folder (a Hugging Face
//     checkpoint, as `vllm serve` takes one): Parse its config.json;
//  2. nameOrPath is a built-in name (BuiltinNames): a copy of the built-in;
//  3. configDir (if not empty) holds ConfigFileName(nameOrPath): Parse it.
//
// A config file without quantization_config takes its weight format from a
// ModelOpt hf_quant_config.json beside it when there is one (hfQuantConfigPath).
// The returned Arch is named nameOrPath. When nothing matches, the error
// names the model and every place searched; a file that exists but does not
// parse gives Parse's error with the file path.
func Load(nameOrPath, configDir string) (*Arch, error) {
	if fi, err := os.Stat(nameOrPath); err == nil && fi.Mode().IsRegular() {
		return parseFile(nameOrPath, nameOrPath)
	}
	if p, folder, err := checkpointConfig(nameOrPath); folder {
		if err != nil {
			return nil, err
		}
		return parseFile(p, nameOrPath)
	}
	if a, ok := Builtin(nameOrPath); ok {
		return a, nil
	}
	searched := []string{"a file at " + nameOrPath, "built-ins " + strings.Join(BuiltinNames(), ", ")}
	if configDir != "" {
		p := filepath.Join(configDir, ConfigFileName(nameOrPath))
		_, err := os.Stat(p)
		if err == nil {
			return parseFile(p, nameOrPath)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("model %s: %w", nameOrPath, err)
		}
		searched = append(searched, p)
	}
	return nil, fmt.Errorf("model %q not found; searched: %s", nameOrPath, strings.Join(searched, "; "))
}

func parseFile(path, name string) (*Arch, error) {
	data, err := ReadConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	a, err := Parse(data, name)
	if err != nil {
		if name == path { // Parse's message already names the model, here the file
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// BF16 means config.json has no quantization_config (any other gives a
	// quantized format or an error): a ModelOpt checkpoint keeps it in a
	// sibling file.
	if a.WeightDtype == BF16 {
		if err := applyHFQuantConfig(a, hfQuantConfigPath(path)); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// hfQuantConfigPath is where a ModelOpt checkpoint keeps its quantization
// beside config.json: hf_quant_config.json in the same folder, or, in the
// AIConfigurator data's naming, Org--Name_hf_quant_config.json beside
// Org--Name_config.json.
func hfQuantConfigPath(configPath string) string {
	dir, base := filepath.Split(configPath)
	if strings.HasSuffix(base, "_config.json") {
		return filepath.Join(dir, strings.TrimSuffix(base, "_config.json")+"_hf_quant_config.json")
	}
	return filepath.Join(dir, "hf_quant_config.json")
}

// applyHFQuantConfig sets a's weight and KV cache formats from a ModelOpt
// hf_quant_config.json ({"quantization": {"quant_algo": "FP8" | "NVFP4",
// "kv_cache_quant_algo": "FP8", "exclude_modules": […]}}) when the file
// exists (applyQuant's rules); anything else is an error naming the file. An
// absent file changes nothing. vLLM reads kv_cache_quant_algo the same way:
// with --kv-cache-dtype auto, a ModelOpt checkpoint whose KV cache was
// calibrated to FP8 is served with an fp8 KV cache (vllm-project/vllm pull
// requests 29980 and 30785, "Load kv-cache dtype from hf_quant_config.json
// automatically", December 2025).
func applyHFQuantConfig(a *Arch, path string) error {
	data, err := ReadConfigFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("model %s: %w", a.Name, err)
	}
	var hq struct {
		// with ModelOpt MIXED_PRECISION's quantized_layers (Nemotron-3.5)
		Quantization *moeQuantConfig `json:"quantization"`
	}
	if err := json.Unmarshal(data, &hq); err != nil {
		return fmt.Errorf("%s%w", path, readableJSON(err, ""))
	}
	if hq.Quantization == nil {
		return fmt.Errorf("%s: no quantization object", path)
	}
	if hq.Quantization.QuantMethod != "" {
		return fmt.Errorf("%s: quantization.quant_method %q not expected in a ModelOpt file", path, hq.Quantization.QuantMethod)
	}
	if a.MLA != nil { // exclusions role by role (mlaquant.go)
		return mlaQuant(&moeQuantConfig{quantConfig: hq.Quantization.quantConfig}, a)
	}
	if f, ok := hybridFamilies[a.Architecture]; ok {
		return f.quant(hq.Quantization, a)
	}
	if a.MoE != nil && excludesSomeLayerGEMM(&hq.Quantization.quantConfig, a.Layers) {
		return roleFormats(&moeQuantConfig{quantConfig: hq.Quantization.quantConfig}, a) // as moeQuant
	}
	if err := applyQuant(a, &hq.Quantization.quantConfig, path+": quantization"); err != nil {
		return err
	}
	return nil
}

// readableJSON rewords a config file's decoding error for a person: a value
// of the wrong JSON type becomes " field quantization_config.bits: must be
// an integer, got a string" (the dotted field under prefix) instead of Go's
// "cannot unmarshal string into Go struct field quantConfig.… of type int";
// any other error (invalid JSON, a rule of a field's own reader) is ": " and
// the error. The result follows the file's name in a message.
func readableJSON(err error, prefix string) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		if prefix != "" {
			return fmt.Errorf(" field %s: %w", strings.TrimSuffix(prefix, "."), err)
		}
		return fmt.Errorf(": %w", err)
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "an integer"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		want = "an object"
	}
	got := te.Value
	switch got {
	case "number", "string", "array", "object":
		got = map[string]string{"number": "a number", "string": "a string", "array": "an array", "object": "an object"}[got]
	}
	return fmt.Errorf(" field %s%s: must be %s, got %s", prefix, te.Field, want, got)
}
