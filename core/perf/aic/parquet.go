package aic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// Bounds on what a perf table's metadata may declare, relative to the file's
// size in bytes. parquet-go allocates what a file declares before reading it:
// the footer's length (the 8-byte file "PAR1PAR1" declares an 827 MB footer),
// the row count (one slice of that many rows) and the column chunks'
// uncompressed sizes, so a corrupt length is a multi-gigabyte allocation that
// no recover catches. The 234 AIConfigurator tables in the shared data hold at
// most 0.33 rows per byte and decode to at most 1.62× their size; the bounds
// leave a wide margin over both.
const (
	maxRowsPerByte     = 1  // rows ≤ the file's size in bytes
	maxDecodedPerBytes = 64 // uncompressed column bytes ≤ 64 × the file's size
)

// readParquet reads every row of the parquet table at path as T, after
// checking the lengths its metadata declares against the file's size
// (errors say which length is impossible). The error does not name the file:
// the caller does.
func readParquet[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	// "PAR1", the footer, its 4-byte length, "PAR1": the smallest file is 12 bytes
	if size < 12 {
		return nil, fmt.Errorf("%d bytes is too short for a parquet file (at least 12)", size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	if footer := int64(binary.LittleEndian.Uint32(tail[:4])); footer > size-12 {
		return nil, fmt.Errorf("the file is corrupt: its footer length (%d bytes) is past its size (%d bytes)", footer, size)
	}
	pf, err := parquet.OpenFile(f, size)
	if err != nil {
		return nil, err
	}
	if n := pf.NumRows(); n < 0 || n > maxRowsPerByte*size {
		return nil, fmt.Errorf("the file is corrupt: it declares %d rows in %d bytes", n, size)
	}
	var decoded int64
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			u := c.MetaData.TotalUncompressedSize
			if u < 0 || u > maxDecodedPerBytes*size-decoded {
				return nil, fmt.Errorf("the file is corrupt: its columns declare more than %d bytes uncompressed in %d bytes", maxDecodedPerBytes*size, size)
			}
			decoded += u
		}
	}
	rows := make([]T, pf.NumRows())
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	n, err := r.Read(rows)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return rows[:n], err
}
