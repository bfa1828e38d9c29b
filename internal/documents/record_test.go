package documents

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// Decoding a record gives back what was encoded: the times to the
// nanosecond (UTC), no update time for a document never updated, and the
// data, empty or not.
func TestRecordRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 28, 10, 0, 0, 123456789, time.UTC)
	updated := created.Add(90 * time.Minute)
	for _, tc := range []struct {
		name    string
		updated time.Time
		data    string
	}{
		{"never updated", time.Time{}, `{"id":1}`},
		{"updated", updated, `{"id":1,"a":[1,2]}`},
		{"no data", updated, ``},
	} {
		r, err := decodeRecord(encodeRecord(created, tc.updated, []byte(tc.data)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !r.CreatedAt.Equal(created) || !r.UpdatedAt.Equal(tc.updated) || r.UpdatedAt.IsZero() != tc.updated.IsZero() || string(r.Data) != tc.data {
			t.Errorf("%s: decoded created %v updated %v data %q; want %v, %v, %q", tc.name, r.CreatedAt, r.UpdatedAt, r.Data, created, tc.updated, tc.data)
		}
	}
	for _, b := range [][]byte{nil, {recordVersion}, bytes.Repeat([]byte{recordVersion}, recordHeaderSize-1), append([]byte{recordVersion + 1}, make([]byte, recordHeaderSize)...)} {
		if _, err := decodeRecord(b); !errors.Is(err, errCorruptRecord) {
			t.Errorf("decodeRecord(%x): %v, want errCorruptRecord", b, err)
		}
	}
}

// FuzzDecodeRecord: any bytes decode or are refused as corrupt, never
// panic; what decodes encodes back to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(time.Unix(1, 2), time.Unix(3, 4), []byte(`{"a":1}`)))
	f.Add(encodeRecord(time.Unix(1, 2), time.Time{}, nil))
	f.Add([]byte{recordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, errCorruptRecord) {
				t.Fatalf("decodeRecord(%x): %v", b, err)
			}
			return
		}
		if again := encodeRecord(r.CreatedAt, r.UpdatedAt, r.Data); !bytes.Equal(again, b) {
			t.Fatalf("decodeRecord(%x) encodes back as %x", b, again)
		}
	})
}
