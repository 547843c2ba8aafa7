package config

import (
	"encoding/json"
	"reflect"
	"strings"
)

// SchemaDraft is the JSON Schema dialect of Schema.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// Schema is a JSON Schema of the replay config (YAML or JSON), generated from
// the Spec types and the variant tables, so that it cannot drift from what
// Decode accepts: every struct is an object of its json-tagged fields with no
// others (additionalProperties false); a discriminated block (engine.perf,
// traffic.source, traffic.load, a length) is a oneOf of its variants, each
// with its key as a const, its own fields and the block's; a length may also
// be a plain integer; integers, numbers, booleans and strings as the Go
// field's kind; the ranges of numbers (minimum, maximum, exclusiveMinimum)
// and an integer's list of choices (enum: engine.scheduler.block_size) from
// the table Validate checks them with (ranges.go); a string field's allowed
// values (enum: engine.backend, execution.mode, …) from the lists Validate
// checks them with (stringEnums, values.go); required:
// engine.model, engine.system, the key of a block without a default
// variant, and fields tagged spec:"required"; an optional (pointer) field
// may also be null, as Decode takes it. Conditions between fields are
// checked by Validate alone (the errors name the dotted
// field). docs/config.schema.json is this, indented.
func Schema() []byte {
	root := schemaOf(reflect.TypeOf(Spec{}))
	root["$schema"] = SchemaDraft
	root["title"] = "aisimulate replay config"
	root["description"] = "A replay: the deployment (engine), the workload (traffic) and how to run it (execution). " +
		"Number ranges and allowed values are given here; conditions between fields are checked when the config is loaded (aisimulate validate CONFIG)."
	engine := root["properties"].(map[string]any)["engine"].(map[string]any)
	engine["required"] = []string{"model", "system"}
	root["required"] = []string{"engine", "traffic"}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic("config: schema: " + err.Error()) // only maps, slices, strings and bools: cannot fail
	}
	return append(b, '\n')
}

// fieldDescriptions: what a field means where its name alone could mislead
// (keyed as stringEnums are).
var fieldDescriptions = map[string]string{
	"ConcurrencyLoad.warmup_requests": "AIPerf's --warmup-request-count: requests sent first, waited for and not reported, besides the measured ones " +
		"(a synthetic source sends num_requests + warmup_requests; a trace's first rows are the warm-up)",
	"MooncakeSource.isl_block_size": "prompt tokens per hash id (AIPerf's --isl-block-size); absent: 512, the Mooncake traces' block",
	"MooncakeSource.context_mode": "how a session's rows make its turns' prompts (AIPerf's conversation context modes): deltas_without_responses, " +
		"each row its turn's new input after the conversation so far with the replies received (AIPerf's default for a Mooncake trace); " +
		"message_array_with_responses, each row its turn's whole prompt; absent: the whole prompt",
	"SyntheticSource.num_requests": "the measured requests (AIPerf's --request-count); traffic.load.warmup_requests are sent besides them",
	"Scheduler.max_num_seqs": "vLLM's --max-num-seqs; absent: per system, as vLLM derives it " +
		"(1024 on a GPU of at least 70 GiB that is not an A100, else 256; at most max_num_batched_tokens)",
	"Scheduler.max_num_batched_tokens": "vLLM's --max-num-batched-tokens; absent: per system, as vLLM derives it " +
		"(8192 on a GPU of at least 70 GiB that is not an A100, else 2048)",
	"PoolScheduler.max_num_seqs":           "this pool's servers' --max-num-seqs (vLLM); absent: engine.scheduler's",
	"PoolScheduler.max_num_batched_tokens": "this pool's servers' --max-num-batched-tokens (vLLM); absent: engine.scheduler's",
	"TRTLLMSpeculativeConfig.acceptance_rates": "the simulation's: the probability, each in [0, 1], that draft i is accepted when every draft before it was, " +
		"at most num_nextn_predict_layers of them (a draft beyond the list is never accepted); absent, and acceptance_rate absent: " +
		"AIConfigurator's [0.85, 0.3, 0, 0, 0]",
	"TRTLLMSpeculativeConfig.acceptance_rate": "the simulation's: one acceptance_rates value for every draft (not with acceptance_rates)",
	"VLLMSpeculativeConfig.acceptance_rates": "the simulation's: the probability, each in [0, 1], that draft i is accepted when every draft before it was, " +
		"at most num_speculative_tokens of them (a draft beyond the list is never accepted); absent, and acceptance_rate absent: " +
		"AIConfigurator's [0.85, 0.3, 0, 0, 0]",
	"VLLMSpeculativeConfig.acceptance_rate": "the simulation's: one acceptance_rates value for every draft (not with acceptance_rates)",
	"Stop.max_requests":                     "stop after this many measured requests (warm-up requests are sent besides them); 0: no limit",
	"Stop.max_duration_s":                   "stop sending this many seconds after the measured phase starts (the end of the warm-up, or 0); 0: no limit",
}

var unionBlockType = reflect.TypeOf((*unionBlock)(nil)).Elem()

// schemaOf is the schema of a value of type t.
func schemaOf(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unionBlockType) {
		return unionSchema(t)
	}
	switch t.Kind() {
	case reflect.Struct:
		return objectSchema(t, nil)
	case reflect.String:
		return map[string]any{"type": "string", "minLength": 1}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		items := schemaOf(t.Elem())
		if k := t.Elem().Kind(); k == reflect.Int || k == reflect.Int64 {
			items["minimum"] = 1 // the spec's integer lists are of sizes (cuda_graph_config.batch_sizes)
		}
		return map[string]any{"type": "array", "items": items}
	}
	panic("config: schema: unsupported field kind " + t.Kind().String())
}

// objectSchema is struct t's fields as an object, with extra properties
// (a variant's key) added.
func objectSchema(t reflect.Type, extra map[string]any) map[string]any {
	props := map[string]any{}
	var required []string
	for k, v := range extra {
		props[k] = v
		required = append(required, k)
	}
	addFields(t, props, &required)
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func addFields(t reflect.Type, props map[string]any, required *[]string) {
	idx, names := fieldsOf(t)
	for _, name := range names {
		f := t.Field(idx[name])
		props[name] = schemaOf(f.Type)
		if r, ok := ranges[t.Name()+"."+name]; ok {
			r.addTo(props[name].(map[string]any))
		}
		if e, ok := stringEnums[t.Name()+"."+name]; ok {
			props[name].(map[string]any)["enum"] = e.values
		}
		if d, ok := fieldDescriptions[t.Name()+"."+name]; ok {
			props[name].(map[string]any)["description"] = d
		}
		if nullField(t, f) {
			nullable(props[name].(map[string]any)) // a block, or an enumerated string, given as null is left out (decodeValue)
		}
		if strings.Contains(f.Tag.Get("spec"), "required") {
			*required = append(*required, name)
		}
	}
}

// unionSchema is a discriminated block: oneOf its variants (each: its key as
// a const, the variant's fields and the block's own); the key is required
// unless the block has a default variant. A length also takes an integer.
func unionSchema(t reflect.Type) map[string]any {
	u, _ := reflect.New(t).Interface().(unionBlock).unionOf()
	var alts []any
	for _, v := range u.variants {
		key := map[string]any{"const": v.name}
		alt := objectSchema(reflect.TypeOf(v.zero), map[string]any{u.key: key})
		props := alt["properties"].(map[string]any)
		addFields(t, props, new([]string))
		for _, other := range u.variants { // another variant's field given as null is left out (decodeUnion)
			ot := reflect.TypeOf(other.zero)
			idx, names := fieldsOf(ot)
			for _, name := range names {
				if _, ok := props[name]; !ok && nullField(ot, ot.Field(idx[name])) {
					props[name] = map[string]any{"type": "null", "description": "a field of " + u.key + " " + other.name + ", left out"}
				}
			}
		}
		if v.name == u.def { // the key may be left out, or null, for the default variant
			props[u.key] = map[string]any{"enum": []any{v.name, nil}}
			alt["required"] = without(alt["required"].([]string), u.key)
			if len(alt["required"].([]string)) == 0 {
				delete(alt, "required")
			}
			alt["description"] = "(" + u.key + " defaults to " + v.name + ")"
		}
		alts = append(alts, alt)
	}
	if t == lengthType {
		fixed := map[string]any{"type": "integer", "description": "a fixed length"}
		rangeOf("FixedLength.value").addTo(fixed)
		alts = append([]any{fixed}, alts...)
	}
	return map[string]any{"oneOf": alts}
}

// nullable lets schema s also be null: Decode takes null for an optional
// (pointer) field or an enumerated string as the field left out
// (decodeValue), so `dataset: null` and `context_mode: null` are valid. A typed schema gains "null" in its type; a oneOf, a null alternative.
func nullable(s map[string]any) {
	if alts, ok := s["oneOf"].([]any); ok {
		s["oneOf"] = append(alts, map[string]any{"type": "null"})
		return
	}
	if e, ok := s["enum"].([]string); ok { // an enum of strings must take the null too
		s["enum"] = append(append([]any{}, anys(e)...), nil)
	}
	if t, ok := s["type"].(string); ok {
		s["type"] = []string{t, "null"}
	}
}

func anys(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func without(list []string, drop string) []string {
	out := []string{}
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}
