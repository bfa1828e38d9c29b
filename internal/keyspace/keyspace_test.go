package keyspace

import (
	"bytes"
	"math"
	"testing"
)

// IndexField writes its elements without keyenc.Pack: its keys must be
// the bytes Pack writes, or every stored index would be missed.
func TestIndexFieldIsPacked(t *testing.T) {
	for _, tc := range []struct {
		coll int64
		path string
		kind int64
	}{
		{1, "name", 0},
		{300, "address.city", 7},
		{math.MaxInt64, "", 255},
		{-5, "a\x00b\xff", 1 << 40},
		{0, "ünïcode.päth", -1},
	} {
		want := pack(tagIndex, tc.coll, tc.path, tc.kind)
		if got := IndexField(tc.coll, tc.path, tc.kind); !bytes.Equal(got, want) {
			t.Errorf("IndexField(%d, %q, %d) = %x, want %x", tc.coll, tc.path, tc.kind, got, want)
		}
		if got := AppendIndexField([]byte("pre"), tc.coll, tc.path, tc.kind); !bytes.Equal(got, append([]byte("pre"), want...)) {
			t.Errorf("AppendIndexField(pre, %d, %q, %d) = %x", tc.coll, tc.path, tc.kind, got)
		}
	}
}
