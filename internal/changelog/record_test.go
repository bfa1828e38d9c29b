package changelog

import (
	"bytes"
	"testing"
)

func sameRecord(a, b Record) bool {
	return a.Op == b.Op && a.NS == b.NS && a.DB == b.DB && a.DBID == b.DBID && a.Collection == b.Collection &&
		a.CollID == b.CollID && a.Rev == b.Rev && bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Data, b.Data) &&
		bytes.Equal(a.Before, b.Before) && a.NoBefore == b.NoBefore && a.Expired == b.Expired
}

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{Op: Insert, NS: 1, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Key: []byte("k\x00\xff"), Data: []byte(`{"id":1}`)},
		{Op: Insert, NS: 1 << 33, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Key: []byte("k"), Data: []byte(`{"id":1}`)},
		{Op: Delete, DB: "d", DBID: 1 << 40, Collection: "c", CollID: -1, Key: []byte("key")},
		{Op: Delete, DB: "d", DBID: 1, Collection: "c", CollID: 2, Key: []byte("key"), Before: []byte(`{"id":1}`)},
		{Op: Delete, DB: "d", DBID: 1, Collection: "c", CollID: 2, Key: []byte("key"), Before: []byte(`{"id":1}`), Expired: true},
		{Op: Update, DB: "d", DBID: 1, Collection: "c", CollID: 2, Key: []byte("key"), Data: []byte(`{"id":1,"a":2}`), Before: []byte(`{"id":1,"a":1}`)},
		{Op: Replace, DB: "d", DBID: 1, Collection: "c", CollID: 2, Key: []byte("key"), Data: []byte(`{"id":1}`)},
		{Op: Publish, DB: "", Collection: "", Data: []byte("{}")},
		{Op: CollectionCreated, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Rev: 1, Data: []byte(`{"title":"users"}`)},
		{Op: SchemaChanged, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Rev: 1 << 50, Data: []byte(`{"title":"users"}`)},
		{Op: CollectionDropped, DB: "shop", DBID: 3, Collection: "users", CollID: 9},
		{Op: DatabaseDropped, DB: "shop", DBID: 3},
	} {
		got, err := Decode(r.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if !sameRecord(got, r) {
			t.Fatalf("round trip: %+v became %+v", r, got)
		}
	}
}

// Version 1 and 2 records, as data directories written before the revision
// and the namespace were added hold them, still decode (with no revision,
// and in the default namespace, the only one there was).
func TestDecodeOldVersions(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want Record
	}{
		{
			"insert",
			[]byte{1, byte(Insert), 4, 's', 'h', 'o', 'p', 6, 5, 'u', 's', 'e', 'r', 's', 18, 1, 'k', 2, '{', '}'},
			Record{Op: Insert, NS: 1, DB: "shop", DBID: 3, Collection: "users", CollID: 9, Key: []byte("k"), Data: []byte("{}"), NoBefore: true},
		},
		{
			"delete",
			[]byte{1, byte(Delete), 1, 'd', 2, 1, 'c', 1, 3, 'k', 'e', 'y', 0},
			Record{Op: Delete, NS: 1, DB: "d", DBID: 1, Collection: "c", CollID: -1, Key: []byte("key"), NoBefore: true},
		},
		{
			// Version 3 has everything but Before: a filtered stream
			// must know it is unknown rather than absent.
			"version 3 update",
			[]byte{3, byte(Update), 2, 1, 'd', 2, 1, 'c', 18, 4, 1, 'k', 2, '{', '}'},
			Record{Op: Update, NS: 1, DB: "d", DBID: 1, Collection: "c", CollID: 9, Rev: 2, Key: []byte("k"), Data: []byte("{}"), NoBefore: true},
		},
		{
			// Version 4 has everything but the flags: nothing it holds
			// was deleted for its ttl.
			"version 4 delete",
			[]byte{4, byte(Delete), 2, 1, 'd', 2, 1, 'c', 18, 4, 1, 'k', 0, 2, '{', '}'},
			Record{Op: Delete, NS: 1, DB: "d", DBID: 1, Collection: "c", CollID: 9, Rev: 2, Key: []byte("k"), Before: []byte("{}")},
		},
		{
			"version 2 schema change",
			[]byte{2, byte(SchemaChanged), 1, 'd', 2, 1, 'c', 18, 4, 0, 2, '{', '}'},
			Record{Op: SchemaChanged, NS: 1, DB: "d", DBID: 1, Collection: "c", CollID: 9, Rev: 2, Data: []byte("{}")},
		},
	} {
		got, err := Decode(tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !sameRecord(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := (&Record{Op: Update, DB: "a", Collection: "b", Rev: 2, Key: []byte("k"), Data: []byte("{}")}).Encode()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"version only", []byte{3}},
		{"unknown version", append([]byte{6}, good[1:]...)},
		{"unknown flag", append(append([]byte(nil), good[:len(good)-1]...), 2)},
		{"version 0", append([]byte{0}, good[1:]...)},
		{"truncated", good[:len(good)-1]},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
		{"length past the end", []byte{3, 1, 2, 200}},
		{"version 1 bytes read as version 2", append([]byte{2}, []byte{byte(Delete), 1, 'd', 2, 1, 'c', 1, 3, 'k', 'e', 'y', 0}...)},
		{"version 2 bytes read as version 3", append([]byte{3}, []byte{byte(Delete), 1, 'd', 2, 1, 'c', 1, 0, 3, 'k', 'e', 'y', 0}...)},
		{"version 3 bytes read as version 4", append([]byte{4}, []byte{byte(Delete), 2, 1, 'd', 2, 1, 'c', 1, 0, 3, 'k', 'e', 'y', 0}...)},
		{"version 4 bytes read as version 5", append([]byte{5}, []byte{byte(Delete), 2, 1, 'd', 2, 1, 'c', 1, 0, 3, 'k', 'e', 'y', 0, 0}...)},
	} {
		if r, err := Decode(tc.b); err == nil {
			t.Errorf("%s: decoded %+v, want an error", tc.name, r)
		}
	}
}

// Every proper prefix of a record is refused, a record whose last fields
// are empty too: a missing length must not read as an empty field.
func TestDecodeRefusesEveryPrefix(t *testing.T) {
	for _, r := range []*Record{
		{Op: Update, DB: "a", DBID: 3, Collection: "b", CollID: 4, Rev: 2, Key: []byte("k"), Data: []byte("{}")},
		{Op: Delete, DB: "a", DBID: 3, Collection: "b", CollID: 4, Rev: 2, Key: []byte("k")},
		{Op: Delete, DB: "a", DBID: 3, Collection: "b", CollID: 4, Rev: 2, Key: []byte("k"), Before: []byte("{}")},
		{Op: Delete, DB: "a", DBID: 3, Collection: "b", CollID: 4, Rev: 2, Key: []byte("k"), Before: []byte("{}"), Expired: true},
		{Op: DatabaseDropped, DB: "a"},
	} {
		b := r.Encode()
		for n := range len(b) {
			if got, err := Decode(b[:n]); err == nil {
				t.Errorf("%d of the %d bytes of %+v decoded as %+v, want an error", n, len(b), r, got)
			}
		}
	}
}

func TestOpKinds(t *testing.T) {
	for _, tc := range []struct {
		op     Op
		name   string
		change bool
		ddl    bool
	}{
		{Insert, "insert", true, false},
		{Replace, "replace", true, false},
		{Update, "update", true, false},
		{Delete, "delete", true, false},
		{Publish, "publish", false, false},
		{CollectionCreated, "collection_created", false, true},
		{SchemaChanged, "schema_changed", false, true},
		{CollectionDropped, "collection_dropped", false, true},
		{DatabaseDropped, "database_dropped", false, true},
		{0, "unknown", false, false},
		{200, "unknown", false, false},
		{Op(len(opNames)), "unknown", false, false}, // the first past the table
	} {
		if tc.op.String() != tc.name || tc.op.IsDocumentChange() != tc.change || tc.op.IsDDL() != tc.ddl {
			t.Errorf("op %d: %q, change %v, ddl %v; want %q, %v, %v",
				tc.op, tc.op, tc.op.IsDocumentChange(), tc.op.IsDDL(), tc.name, tc.change, tc.ddl)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add((&Record{Op: Update, DB: "a", Collection: "b", Key: []byte("k"), Data: []byte("{}")}).Encode())
	f.Add((&Record{Op: SchemaChanged, DB: "a", DBID: 4, Collection: "b", CollID: 5, Rev: 7, Data: []byte(`{"x":1}`)}).Encode())
	f.Add([]byte{1, byte(Insert), 4, 's', 'h', 'o', 'p', 6, 5, 'u', 's', 'e', 'r', 's', 18, 1, 'k', 2, '{', '}'})
	f.Add([]byte{1, 1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(r.Encode())
		// Re-encoding writes the current version, which knows Before.
		again.NoBefore = r.NoBefore
		if err != nil || !sameRecord(again, r) {
			t.Fatalf("re-encoding a decoded record changed it: %+v vs %+v (%v)", r, again, err)
		}
	})
}
