package datafile

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func bytesReaderAt(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func decimalOf(v int64) decimal128.Num { return decimal128.FromI64(v) }
