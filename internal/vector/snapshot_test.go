package vector

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// TestSnapshotRoundTrip writes an index with tombstones and free slots
// and reads it back (the free slots left out): every search answers the
// same, and puts go on.
func TestSnapshotRoundTrip(t *testing.T) {
	data, qs := clustered(3000, 50, 24, 10, 5)
	for _, metric := range []Metric{Cosine, Euclidean, Dot} {
		t.Run(metric.String(), func(t *testing.T) {
			x := build(metric, Options{M: 8, EfConstruction: 64, EfSearch: 40, Seed: 9}, data)
			for i := 0; i < 400; i++ { // a compaction (free slots), then tombstones
				x.Delete(key(i))
			}
			x.Put(key(2000), data[1])
			var buf bytes.Buffer
			n, err := x.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, buf.Len())
			}
			y, err := ReadIndex(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if xs, ys := x.Stats(), y.Stats(); xs.Live != ys.Live || xs.Tombstones != ys.Tombstones || x.Len() != y.Len() || y.Metric() != metric || y.Dims() != 24 {
				t.Fatalf("stats %+v, read back %+v", x.Stats(), y.Stats())
			}
			f := NewSet(key(500), key(600), key(2000), key(5))
			for _, q := range qs {
				for _, filter := range []Filter{nil, f} {
					a, b := must(x.Search(q, 10, filter)), must(y.Search(q, 10, filter))
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("search differs after the round trip:\n%v\n%v", a, b)
					}
				}
			}
			if err := y.Put("new", data[0]); err != nil {
				t.Fatal(err)
			}
			if hits := must(y.Search(data[0], 1, NewSet("new"))); len(hits) != 1 {
				t.Errorf("a put after the read: %v", hits)
			}
		})
	}
}

func TestReadIndexRefusesDamage(t *testing.T) {
	data, _ := clustered(200, 0, 4, 3, 6)
	var buf bytes.Buffer
	x := build(Euclidean, Options{Seed: 1}, data)
	x.Delete(key(3))
	if _, err := x.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	tests := map[string][]byte{
		"empty":           nil,
		"foreign":         []byte("PK\x03\x04 a zip file, not an index at all"),
		"truncated":       good[:len(good)/2],
		"no checksum":     good[:len(good)-4],
		"version":         flip(8),
		"dims":            flip(13),
		"a vector's byte": flip(len(good) / 2),
		"checksum":        flip(len(good) - 1),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadIndex(bytes.NewReader(b)); !errors.Is(err, ErrSnapshot) {
				t.Errorf("ReadIndex = %v, want ErrSnapshot", err)
			}
		})
	}
}

// FuzzReadIndex: any bytes give an index or an error, never a panic,
// and an index read is one that searches and takes puts.
func FuzzReadIndex(f *testing.F) {
	data, _ := clustered(60, 0, 3, 3, 7)
	for _, m := range []Metric{Cosine, Euclidean} {
		x := build(m, Options{M: 2, Seed: 1}, data)
		for i := 0; i < 10; i++ {
			x.Delete(key(i))
		}
		var buf bytes.Buffer
		x.WriteTo(&buf)
		f.Add(buf.Bytes())
	}
	f.Add([]byte(snapshotMagic + "\x01\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadIndex(bytes.NewReader(b))
		if err != nil {
			return
		}
		q := make([]float32, x.Dims())
		q[0] = 1
		if _, err := x.Search(q, 5, nil); err != nil {
			t.Fatal(err)
		}
		if err := x.Put("fuzz", q); err != nil {
			t.Fatal(err)
		}
	})
}
