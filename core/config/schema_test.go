package config

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite docs/config.schema.json from Schema()")

// docs/config.schema.json is Schema() as generated from the types: a change to
// the Spec types regenerates it with
// go test ./core/config -run TestSchemaIsPublished -update-schema.
func TestSchemaIsPublished(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "config.schema.json")
	if *updateSchema {
		require.NoError(t, os.WriteFile(path, Schema(), 0o644))
	}
	published, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(Schema()), string(published),
		"docs/config.schema.json is stale: go test ./core/config -run TestSchemaIsPublished -update-schema")
}

func TestSchemaShape(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(Schema(), &s))
	props := s["properties"].(map[string]any)
	engine := props["engine"].(map[string]any)
	assert.Equal(t, []any{"model", "system"}, engine["required"])
	assert.Equal(t, false, engine["additionalProperties"])
	// engine.perf: one alternative per variant, in the table's order, its key a const
	perf := engine["properties"].(map[string]any)["perf"].(map[string]any)["oneOf"].([]any)
	require.Len(t, perf, len(perfUnion.variants)+1)
	assert.Equal(t, map[string]any{"type": "null"}, perf[len(perf)-1], "an optional block may be null (left out)")
	perf = perf[:len(perf)-1]
	for i, alt := range perf {
		key := alt.(map[string]any)["properties"].(map[string]any)["source"].(map[string]any)
		if i == 0 { // the default, roofline: also null (the key left out)
			assert.Equal(t, []any{"roofline", nil}, key["enum"])
			continue
		}
		assert.Equal(t, perfUnion.variants[i].name, key["const"])
	}
	// roofline is the default: its key may be left out; linear requires its three coefficients
	rooflineRequired, _ := perf[0].(map[string]any)["required"].([]any)
	assert.NotContains(t, rooflineRequired, "source")
	assert.ElementsMatch(t, []any{"source", "base_ms", "per_prefill_token_ms", "per_decode_seq_ms"},
		perf[2].(map[string]any)["required"])
	// traffic.load: the block's own fields sit beside each variant's
	load := props["traffic"].(map[string]any)["properties"].(map[string]any)["load"].(map[string]any)["oneOf"].([]any)
	rate := load[1].(map[string]any)["properties"].(map[string]any)
	assert.Contains(t, rate, "rate_rps")
	assert.Contains(t, rate, "response_overhead")
	assert.Contains(t, load[0].(map[string]any)["required"], "mode") // no default mode
	// a length: an integer or a {kind, …} mapping
	src := props["traffic"].(map[string]any)["properties"].(map[string]any)["source"].(map[string]any)["oneOf"].([]any)
	isl := src[3].(map[string]any)["properties"].(map[string]any)["isl"].(map[string]any)["oneOf"].([]any)
	assert.Equal(t, "integer", isl[0].(map[string]any)["type"])
	assert.Len(t, isl, 1+len(lengthUnion.variants))
	seed := props["execution"].(map[string]any)["properties"].(map[string]any)["seed"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "integer", "minimum": float64(0)}, seed)
}

// Every enumerated field of Enums (the lists Validate checks) has the same
// values in the schema: an enum, or the consts of a block's alternatives
// (execution.mode and engine.backend were once any non-empty string there).
func TestSchemaEnumsAreValidates(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(Schema(), &s))
	for path, want := range Enums() {
		got := map[string]bool{}
		leaves := schemaAt(s, strings.Split(path, "."))
		require.NotEmpty(t, leaves, path)
		for _, leaf := range leaves {
			if leaf["type"] == "null" {
				continue // another variant's field, null: left out (decodeUnion)
			}
			if c, ok := leaf["const"].(string); ok {
				got[c] = true
				continue
			}
			e, ok := leaf["enum"].([]any)
			require.True(t, ok, "%s: no enum in the schema: %v", path, leaf)
			for _, v := range e {
				if v == nil {
					continue // null: the field left out (decodeValue)
				}
				got[v.(string)] = true
			}
		}
		wantSet := map[string]bool{}
		for _, v := range want {
			wantSet[v] = true
		}
		assert.Equal(t, wantSet, got, path)
	}
}

// schemaAt is the schemas of the dotted path's last part below node, through
// properties and every oneOf alternative that has the part.
func schemaAt(node map[string]any, parts []string) []map[string]any {
	if len(parts) == 0 {
		return []map[string]any{node}
	}
	var out []map[string]any
	if alts, ok := node["oneOf"].([]any); ok {
		for _, a := range alts {
			out = append(out, schemaAt(a.(map[string]any), parts)...)
		}
		return out
	}
	props, _ := node["properties"].(map[string]any)
	if next, ok := props[parts[0]].(map[string]any); ok {
		if items, ok := next["items"].(map[string]any); ok { // a list's path names its elements' fields
			next = items
		}
		out = append(out, schemaAt(next, parts[1:])...)
	}
	return out
}
