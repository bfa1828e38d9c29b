package schema

import (
	"bytes"
	"time"

	"github.com/foliodb/folio/internal/jsonscan"
)

// TTL is a collection's expiry: a document expires After past the time its
// date-time Field holds ("ttl": {"field": "expires_at"} or
// {"field": "created_at", "after": "24h"}). A document without the field,
// or with null there, never expires.
type TTL struct {
	// Field is the date-time field, top-level or nested in objects.
	Field *Field
	// After is how long past the field's time the document lasts; 0
	// expires it at the field's time.
	After time.Duration

	path [][]byte // Field.Path split at its dots, to find it in documents
}

// The bounds of "after": a second, below which the sweeper's pace (a
// pass a second) would make it meaningless, and a century, past which a
// document may as well not expire (and the arithmetic stays far from
// time.Duration's 292 years).
const (
	MinTTLAfter = time.Second
	MaxTTLAfter = 100 * 365 * 24 * time.Hour
)

// TTL returns the collection's expiry, or nil if its documents never
// expire.
func (s *Schema) TTL() *TTL { return s.ttl }

// Cutoff is the latest field time at which a document has expired at now.
func (t *TTL) Cutoff(now time.Time) time.Time { return now.Add(-t.After) }

// ExpiresAt returns when doc expires; ok is false when it never does (the
// field is absent, null, or not a date-time the schema would accept).
func (t *TTL) ExpiresAt(doc []byte) (at time.Time, ok bool) {
	v, ok := t.value(doc)
	if !ok {
		return time.Time{}, false
	}
	at, ok = ParseDateTime(v)
	if !ok {
		return time.Time{}, false
	}
	return at.Add(t.After), true
}

// Expired reports whether doc has expired at now: from the very instant
// its time is reached.
func (t *TTL) Expired(doc []byte, now time.Time) bool {
	at, ok := t.ExpiresAt(doc)
	return ok && !now.Before(at)
}

// value finds the field's string value in doc, walking its objects by
// path and skipping the members before it without decoding them, and
// returns it unquoted.
func (t *TTL) value(doc []byte) ([]byte, bool) {
	// Stored documents are valid JSON: no need to check all of it, only
	// what is walked.
	at := jsonscan.SkipSpace(doc, 0)
	for _, name := range t.path {
		o, err := jsonscan.ObjectAt(doc, at)
		if err != nil {
			return nil, false
		}
		found := false
		for {
			key, escaped, v, ok, err := o.Next()
			if err != nil || !ok {
				return nil, false
			}
			if escaped && jsonscan.Unquote(key) == string(name) || !escaped && bytes.Equal(key, name) {
				at, found = v, true
				break
			}
			if err := o.Skip(); err != nil {
				return nil, false
			}
		}
		if !found {
			return nil, false
		}
	}
	end, escaped, err := jsonscan.StringEnd(doc, at)
	if err != nil {
		return nil, false // null, or not a string
	}
	inner := doc[at+1 : end-1]
	if escaped {
		inner = []byte(jsonscan.Unquote(inner))
	}
	return inner, true
}

// ParseDateTime reads a date-time as the schema accepts it (validDateTime):
// RFC 3339 with T and Z in either case, a fraction of any length, and a
// leap second, taken as the second before it.
func ParseDateTime(s []byte) (time.Time, bool) {
	if !validDateTime(s) {
		return time.Time{}, false
	}
	text := string(s)
	if leap := s[17] == '6' && s[18] == '0'; leap || bytes.ContainsAny(s, "tz") {
		b := bytes.ToUpper(s)
		if leap {
			b[17], b[18] = '5', '9'
		}
		text = string(b)
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, false
	}
	return at, true
}

// readTTL reads the schema's "ttl" member, once its fields are known.
func (s *Schema) readTTL(raw []byte, m member) error {
	bad := invalidf(`ttl must be an object such as {"field":"expires_at"} or {"field":"created_at","after":"24h"}`)
	if m.kind(raw) != jsonscan.Object {
		return bad
	}
	if s.collectionType != Documents {
		return invalidf("ttl is only supported on collection type of 'documents'")
	}
	ms, _, err := readMembers(raw, m.start, "ttl")
	if err != nil {
		return err
	}
	for _, mm := range ms {
		if mm.name != "field" && mm.name != "after" {
			return invalidf("unsupported property found '%s' in ttl: a ttl has field and after", mm.name)
		}
	}
	fm, ok := ms.get("field")
	if !ok {
		return invalidf(`ttl must name its date-time field, such as {"field":"expires_at"}`)
	}
	path, ok := fm.str(raw)
	if !ok {
		return invalidf("ttl field must be a string naming a date-time field")
	}
	f, ok := s.Field(path)
	if !ok {
		return invalidf("ttl field '%s' is not a field of the schema (a nested field is named by its dot path, such as 'a.b'; fields inside arrays cannot expire documents)", path)
	}
	if f.Type != DateTime {
		return invalidf("ttl field '%s' must be a date-time field (type string, format date-time), not %s", path, f.Type)
	}
	t := &TTL{Field: f, path: bytes.Split([]byte(path), []byte("."))}
	if am, ok := ms.get("after"); ok {
		text, ok := am.str(raw)
		if !ok {
			return invalidf("ttl after must be a duration string such as \"24h\" or \"90m\"")
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			return invalidf("ttl after '%s' is not a duration: write it as \"24h\", \"90m\" or \"30s\"", text)
		}
		if d < MinTTLAfter || d > MaxTTLAfter {
			return invalidf("ttl after '%s' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time", text)
		}
		t.After = d
	}
	s.ttl = t
	return nil
}
