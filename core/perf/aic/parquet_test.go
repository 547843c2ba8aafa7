package aic

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTable writes rows as a parquet file, first letting edit change the
// footer's metadata (re-encoded in place, as a corrupt file would carry it).
func writeTable(t *testing.T, rows []allReduceRow, edit func(*format.FileMetaData)) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, parquet.Write(&buf, rows))
	b := buf.Bytes()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	body, footer := b[:len(b)-8-n], b[len(b)-8-n:len(b)-8]
	var md format.FileMetaData
	require.NoError(t, thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md))
	if edit != nil {
		edit(&md)
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	require.NoError(t, err)
	out := append(append([]byte(nil), body...), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	out = append(out, "PAR1"...)
	path := filepath.Join(t.TempDir(), "custom_allreduce_perf.parquet")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

// parquet-go allocates what a file declares before reading it: the lengths
// are checked against the file's size first, so a corrupt length is an error
// naming the file instead of gigabytes allocated (or the process killed).
func TestTableLengthsAreBoundedByTheFile(t *testing.T) {
	rows := []allReduceRow{
		{NumGPUs: 2, MessageSize: 1024, Backend: "vllm_graph", Latency: 0.01},
		{NumGPUs: 2, MessageSize: 2048, Backend: "vllm_graph", Latency: 0.02},
	}
	got, err := loadAllReduce(writeTable(t, rows, nil))
	require.NoError(t, err, "the unedited table reads")
	assert.Equal(t, rows, got)

	// the 8-byte file "PAR1PAR1": a footer length of 0x31524150 = 827,474,256 bytes
	path := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, os.WriteFile(path, []byte("PAR1PAR1"), 0o644))
	_, err = loadAllReduce(path)
	assert.EqualError(t, err, "aic: reading "+path+": 8 bytes is too short for a parquet file (at least 12)")
	require.NoError(t, os.WriteFile(path, []byte("PAR1PAR1PAR1"), 0o644))
	_, err = loadAllReduce(path)
	assert.EqualError(t, err, "aic: reading "+path+": the file is corrupt: its footer length (827474256 bytes) is past its size (12 bytes)")

	// a row count of 10^12 (make([]T, 10^12) would ask for 64 TB)
	path = writeTable(t, rows, func(md *format.FileMetaData) { md.NumRows = 1e12 })
	fi, err := os.Stat(path)
	require.NoError(t, err)
	_, err = loadAllReduce(path)
	assert.EqualError(t, err, "aic: reading "+path+": the file is corrupt: it declares 1000000000000 rows in "+itoa(fi.Size())+" bytes")

	// a column chunk of 2^40 bytes uncompressed
	path = writeTable(t, rows, func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.TotalUncompressedSize = 1 << 40 })
	fi, err = os.Stat(path)
	require.NoError(t, err)
	_, err = loadAllReduce(path)
	assert.EqualError(t, err, "aic: reading "+path+": the file is corrupt: its columns declare more than "+
		itoa(64*fi.Size())+" bytes uncompressed in "+itoa(fi.Size())+" bytes")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
