package keyenc

import "testing"

// A typical index key: collection or index name, a number, a string value.
var benchKey = Tuple{"users_by_age", int64(12345), "alice@example.com"}

func BenchmarkPack(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendPack(buf[:0], benchKey); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkAppendHelpers builds the same key as BenchmarkPack with the
// per-element helpers, the way the document layer builds index keys.
func BenchmarkAppendHelpers(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], "users_by_age")
		buf = AppendInt(buf, 12345)
		buf = AppendString(buf, "alice@example.com")
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkUnpack(b *testing.B) {
	key := mustPack(b, benchKey)
	b.ReportAllocs()
	b.SetBytes(int64(len(key)))
	for b.Loop() {
		if _, err := Unpack(key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeOne skips the first element of a key, as a scan that only
// needs the tail does.
func BenchmarkDecodeOne(b *testing.B) {
	key := mustPack(b, benchKey)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeOne(key); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendDoesNotAllocate holds the hot paths to zero allocations when dst
// has room.
func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	raw := []byte("raw\x00bytes")
	allocs := testing.AllocsPerRun(100, func() {
		buf, _ = AppendPack(buf[:0], benchKey)
		buf = AppendString(buf, "a\x00b")
		buf = AppendBytes(buf, raw)
		buf = AppendStringBytes(buf, raw)
		buf = AppendInt(buf, -77)
		buf, _ = AppendFloat(buf, 2.5)
		buf = AppendBool(buf, true)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}
