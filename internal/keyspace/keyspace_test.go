package keyspace

import (
	"bytes"
	"math"
	"testing"

	"github.com/foliodb/folio/internal/kv"
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

// A namespace's metadata and quotas lie in its Tenant range, and no other
// namespace's do: deleting it clears them and nothing else.
func TestTenantRange(t *testing.T) {
	in := func(r kv.Range, key []byte) bool {
		return bytes.Compare(key, r.Begin) >= 0 && (r.End == nil || bytes.Compare(key, r.End) < 0)
	}
	for _, key := range [][]byte{NamespaceMetadata(7, "k"), UserMetadata(7, "app", "k"), NamespaceQuota(7)} {
		if !in(Tenant(7), key) {
			t.Errorf("%x is not in namespace 7's range", key)
		}
		if in(Tenant(8), key) || in(Tenant(70), key) {
			t.Errorf("%x is in another namespace's range", key)
		}
	}
	if bytes.Equal(NamespaceMetadata(7, "quota"), NamespaceQuota(7)) || bytes.Equal(UserMetadata(7, "ns", "k"), NamespaceMetadata(7, "k")) {
		t.Error("a metadata key collides with another kind of key")
	}
}
