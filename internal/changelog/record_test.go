package changelog

import (
	"bytes"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{Op: Insert, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Key: []byte("k\x00\xff"), Data: []byte(`{"id":1}`)},
		{Op: Delete, DB: "d", DBID: 1 << 40, Collection: "c", CollID: -1, Key: []byte("key")},
		{Op: Publish, DB: "", Collection: "", Data: []byte("{}")},
	} {
		got, err := Decode(r.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if got.Op != r.Op || got.DB != r.DB || got.DBID != r.DBID || got.Collection != r.Collection ||
			got.CollID != r.CollID || !bytes.Equal(got.Key, r.Key) || !bytes.Equal(got.Data, r.Data) {
			t.Fatalf("round trip: %+v became %+v", r, got)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add((&Record{Op: Update, DB: "a", Collection: "b", Key: []byte("k"), Data: []byte("{}")}).Encode())
	f.Add([]byte{1, 1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(r.Encode())
		if err != nil || again.DB != r.DB || !bytes.Equal(again.Key, r.Key) || !bytes.Equal(again.Data, r.Data) {
			t.Fatalf("re-encoding a decoded record changed it: %+v vs %+v (%v)", r, again, err)
		}
	})
}
