package workload

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A trace compressed or converted to a columnar file is named as such by
// every reader: a gzipped Mooncake trace was "invalid character '\x1f'", and a
// Parquet file given as JSON lines was said to look like CSV (its first line
// holds a comma), sending the user to the Azure reader.
func TestBinaryTraceFilesAreNamed(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err := w.Write([]byte(`{"timestamp": 0, "input_length": 10, "output_length": 2}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	parquet := "PAR1\x15\x04\x15,\x15\x04" // a Parquet file's magic, then a page header with a comma
	readers := map[string]func(string) error{
		"mooncake": func(c string) error { _, err := drain(NewMooncakeSource(strings.NewReader(c), "t")); return err },
		"llmservingsim": func(c string) error {
			_, err := drain(NewLLMServingSimSource(strings.NewReader(c), "t"))
			return err
		},
		"azure": func(c string) error {
			src, err := NewAzureSource(strings.NewReader(c), "t")
			if err == nil {
				_, err = drain(src)
			}
			return err
		},
	}
	for _, file := range []struct{ name, content, kind string }{
		{"gzip", gz.String(), "gzip-compressed"},
		{"parquet", parquet, "Parquet"},
		{"zstd", "\x28\xb5\x2f\xfd\x00\x58,", "zstd-compressed"},
		{"xz", "\xfd7zXZ\x00\x00,", "xz-compressed"},
		{"bzip2", "BZh91AY&SY,", "bzip2-compressed"},
		{"zip", "PK\x03\x04\x14\x00,", "a ZIP archive"},
	} {
		for name, read := range readers {
			t.Run(file.name+" as "+name, func(t *testing.T) {
				err := read(file.content)
				var de *DataError
				require.True(t, errors.As(err, &de), "%v", err)
				assert.Equal(t, 1, de.Line)
				assert.True(t, strings.HasSuffix(de.Msg, " (the file is "+file.kind+
					": a trace is read as text, JSON lines or CSV; decompress or convert it first)"), de.Msg)
				assert.NotContains(t, de.Msg, "looks like CSV")
			})
		}
	}
	// a text file that starts with the letters of a magic is no binary file
	assert.Equal(t, "", BinaryKind([]byte("BZh,ContextTokens")))
	assert.Equal(t, "", BinaryKind([]byte(`{"timestamp": 0}`)))
}
