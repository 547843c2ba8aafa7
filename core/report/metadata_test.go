package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonKeys lists the JSON keys of struct type t in declaration order.
func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return out
}

// The metadata types declare their fields in the sorted order of their JSON
// keys, so encoding/json writes the bytes the sorted-key map it replaced wrote.
func TestMetadataKeysSorted(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeOf(Metadata{}), reflect.TypeOf(Pool{}), reflect.TypeOf(KVBlocks{})} {
		keys := jsonKeys(typ)
		assert.True(t, sort.StringsAreSorted(keys), "%s: %v", typ.Name(), keys)
	}
	// and the encoding of a full value agrees with a map's (sorted keys)
	b, err := json.Marshal(exampleMetadata())
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	again, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, string(again), string(b))
}

// docs/metrics.md's metadata table lists exactly Metadata's keys.
func TestMetadataKeyTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	require.NoError(t, err)
	i := bytes.Index(doc, []byte("## Metadata (`report.metadata`)"))
	require.True(t, i >= 0)
	section := doc[i:]
	if j := bytes.Index(section[2:], []byte("\n## ")); j >= 0 {
		section = section[:j+2]
	}
	var keys []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllSubmatch(section, -1) {
		keys = append(keys, string(m[1]))
	}
	assert.Equal(t, jsonKeys(reflect.TypeOf(Metadata{})), keys)
}
