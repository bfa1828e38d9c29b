package schema

import (
	"testing"
	"time"
)

// ttlSchema is a schema with a top-level and a nested date-time field and
// the ttl member given.
func ttlSchema(ttl string) string {
	return `{"title":"c","properties":{"id":{"type":"string"},"expires_at":{"type":"string","format":"date-time"},` +
		`"meta":{"type":"object","properties":{"created":{"type":"string","format":"date-time"}}},` +
		`"n":{"type":"integer"},"s":{"type":"string"},"free":{"type":"object"},` +
		`"times":{"type":"array","items":{"type":"string","format":"date-time"}},` +
		`"rows":{"type":"array","items":{"type":"object","properties":{"at":{"type":"string","format":"date-time"}}}}},` +
		`"primary_key":["id"],"ttl":` + ttl + `}`
}

func TestParseTTL(t *testing.T) {
	cases := []struct {
		name, ttl string
		path      string
		after     time.Duration
		err       string
	}{
		{"field's time", `{"field":"expires_at"}`, "expires_at", 0, ""},
		{"after a duration", `{"field":"expires_at","after":"24h"}`, "expires_at", 24 * time.Hour, ""},
		{"nested field", `{"field":"meta.created","after":"90m"}`, "meta.created", 90 * time.Minute, ""},
		{"smallest after", `{"field":"expires_at","after":"1s"}`, "expires_at", time.Second, ""},
		{"largest after", `{"field":"expires_at","after":"876000h"}`, "expires_at", 876000 * time.Hour, ""},
		{"null after", `{"field":"expires_at","after":null}`, "expires_at", 0, ""},
		{"null ttl", `null`, "", 0, ""},

		{"number", `60`, "", 0, `ttl must be an object such as {"field":"expires_at"} or {"field":"created_at","after":"24h"}`},
		{"string", `"24h"`, "", 0, `ttl must be an object such as {"field":"expires_at"} or {"field":"created_at","after":"24h"}`},
		{"no field", `{"after":"1h"}`, "", 0, `ttl must name its date-time field, such as {"field":"expires_at"}`},
		{"field not a string", `{"field":1}`, "", 0, "ttl field must be a string naming a date-time field"},
		{"unknown member", `{"field":"expires_at","afterr":"1h"}`, "", 0, "unsupported property found 'afterr' in ttl: a ttl has field and after"},
		{"no such field", `{"field":"expiry"}`, "", 0, "ttl field 'expiry' is not a field of the schema (a nested field is named by its dot path, such as 'a.b'; fields inside arrays cannot expire documents)"},
		{"integer field", `{"field":"n"}`, "", 0, "ttl field 'n' must be a date-time field (type string, format date-time), not int64"},
		{"string field", `{"field":"s"}`, "", 0, "ttl field 's' must be a date-time field (type string, format date-time), not string"},
		{"object field", `{"field":"meta"}`, "", 0, "ttl field 'meta' must be a date-time field (type string, format date-time), not object"},
		{"array of date-times", `{"field":"times"}`, "", 0, "ttl field 'times' must be a date-time field (type string, format date-time), not array"},
		{"inside an array", `{"field":"rows.at"}`, "", 0, "ttl field 'rows.at' is not a field of the schema (a nested field is named by its dot path, such as 'a.b'; fields inside arrays cannot expire documents)"},
		{"inside a free-form object", `{"field":"free.at"}`, "", 0, "ttl field 'free.at' is not a field of the schema (a nested field is named by its dot path, such as 'a.b'; fields inside arrays cannot expire documents)"},
		{"after not a string", `{"field":"expires_at","after":3600}`, "", 0, `ttl after must be a duration string such as "24h" or "90m"`},
		{"after not a duration", `{"field":"expires_at","after":"1 day"}`, "", 0, `ttl after '1 day' is not a duration: write it as "24h", "90m" or "30s"`},
		{"after in days", `{"field":"expires_at","after":"1d"}`, "", 0, `ttl after '1d' is not a duration: write it as "24h", "90m" or "30s"`},
		{"zero after", `{"field":"expires_at","after":"0s"}`, "", 0, "ttl after '0s' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time"},
		{"negative after", `{"field":"expires_at","after":"-1h"}`, "", 0, "ttl after '-1h' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time"},
		{"after under a second", `{"field":"expires_at","after":"999ms"}`, "", 0, "ttl after '999ms' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time"},
		{"after past a century", `{"field":"expires_at","after":"876001h"}`, "", 0, "ttl after '876001h' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time"},
		{"duplicate member", `{"field":"expires_at","field":"n"}`, "", 0, "duplicate key 'field' in ttl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("c", []byte(ttlSchema(tc.ttl)))
			if tc.err != "" {
				if e, ok := err.(*Error); !ok || e.Message != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				// A stored schema with a bad ttl (one kept before ttl was
				// read) still opens, expiring nothing.
				stored, err := ParseStored("c", []byte(ttlSchema(tc.ttl)))
				if err != nil || stored.TTL() != nil {
					t.Fatalf("ParseStored: ttl %+v, error %v; want none and no error", stored, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ttl := s.TTL()
			if tc.path == "" {
				if ttl != nil {
					t.Fatalf("ttl %+v, want none", ttl)
				}
				return
			}
			if ttl == nil || ttl.Field.Path != tc.path || ttl.After != tc.after {
				t.Fatalf("ttl %+v, want field %s after %s", ttl, tc.path, tc.after)
			}
		})
	}
}

func TestTTLOnMessagesRefused(t *testing.T) {
	_, err := Parse("c", []byte(`{"title":"c","collection_type":"messages","properties":{"at":{"type":"string","format":"date-time"}},"ttl":{"field":"at"}}`))
	if e, ok := err.(*Error); !ok || e.Message != "ttl is only supported on collection type of 'documents'" {
		t.Fatalf("error %v", err)
	}
}

func TestTTLExpired(t *testing.T) {
	s, err := Parse("c", []byte(ttlSchema(`{"field":"meta.created","after":"1h"}`)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name, doc string
		expires   time.Time // zero: never
	}{
		{"UTC", `{"id":"a","meta":{"created":"2026-11-28T09:00:00Z"}}`, at},
		{"fraction", `{"id":"a","meta":{"created":"2026-11-28T09:00:00.5Z"}}`, at.Add(500 * time.Millisecond)},
		{"offset", `{"id":"a","meta":{"created":"2026-11-28T11:00:00+02:00"}}`, at},
		{"lower case", `{"id":"a","meta":{"created":"2026-11-28t09:00:00z"}}`, at},
		{"leap second", `{"id":"a","meta":{"created":"2016-12-31T23:59:60Z"}}`, time.Date(2017, 1, 1, 0, 59, 59, 0, time.UTC)},
		{"escaped", `{"id":"a","meta":{"created":"2026-11-28T09:00:00\u005a"}}`, at},
		{"other members first", `{"id":"a","n":1,"free":{"created":"2000-01-01T00:00:00Z"},"meta":{"x":[1,{"created":1}],"created":"2026-11-28T09:00:00Z"}}`, at},
		{"absent", `{"id":"a"}`, time.Time{}},
		{"object absent", `{"id":"a","meta":null}`, time.Time{}},
		{"null", `{"id":"a","meta":{"created":null}}`, time.Time{}},
		{"not a date-time", `{"id":"a","meta":{"created":"soon"}}`, time.Time{}},
		{"not JSON", `{"id":`, time.Time{}},
	}
	for _, tc := range cases {
		got, ok := s.TTL().ExpiresAt([]byte(tc.doc))
		if tc.expires.IsZero() {
			if ok {
				t.Errorf("%s: expires at %s, want never", tc.name, got)
			}
			if s.TTL().Expired([]byte(tc.doc), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: expired", tc.name)
			}
			continue
		}
		if !ok || !got.Equal(tc.expires) {
			t.Errorf("%s: expires at %s (%v), want %s", tc.name, got, ok, tc.expires)
		}
		// Readable just before its time, gone at it.
		if s.TTL().Expired([]byte(tc.doc), tc.expires.Add(-time.Nanosecond)) {
			t.Errorf("%s: expired a nanosecond early", tc.name)
		}
		if !s.TTL().Expired([]byte(tc.doc), tc.expires) {
			t.Errorf("%s: not expired at its time", tc.name)
		}
	}
}

// Changing, adding and removing a ttl are compatible schema changes.
func TestTTLChangesAreCompatible(t *testing.T) {
	plain := `{"title":"c","properties":{"id":{"type":"string"},"at":{"type":"string","format":"date-time"}},"primary_key":["id"]}`
	with := `{"title":"c","properties":{"id":{"type":"string"},"at":{"type":"string","format":"date-time"}},"primary_key":["id"],"ttl":{"field":"at"}}`
	other := `{"title":"c","properties":{"id":{"type":"string"},"at":{"type":"string","format":"date-time"}},"primary_key":["id"],"ttl":{"field":"at","after":"1h"}}`
	parse := func(raw string) *Schema {
		s, err := Parse("c", []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, pair := range [][2]string{{plain, with}, {with, other}, {other, plain}} {
		if err := Compatible(parse(pair[0]), parse(pair[1])); err != nil {
			t.Errorf("%s to %s: %v", pair[0], pair[1], err)
		}
	}
}
