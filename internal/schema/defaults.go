package schema

import (
	"crypto/rand"
	"math/big"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/jsonscan"
)

// FillDefaults returns doc with what a new document (an insert's or a
// replace's) gets for the fields it lacks: their defaults, and the write's
// time at for createdAt and now() fields. A missing object whose fields
// have defaults is added with them, as the original did. Fields inside
// arrays of objects get none (the original filled those elements too).
// updatedAt fields are left out: a new document has not been updated.
func (s *Schema) FillDefaults(doc []byte, at time.Time) ([]byte, error) {
	if !s.defaults {
		return doc, nil
	}
	stamp := jsonscan.AppendQuote(nil, at.UTC().Format(time.RFC3339Nano))
	return fill(doc, s.fields, func(f *Field) ([]byte, bool) {
		switch {
		case f.CreatedAt, f.DefaultFunc == defaultNow:
			return stamp, false
		case f.DefaultFunc == defaultUUID:
			return jsonscan.AppendQuote(nil, newUUID()), false
		case f.DefaultFunc == defaultCUID:
			return jsonscan.AppendQuote(nil, newCUID()), false
		}
		return f.Default, false
	})
}

// StampUpdate returns an updated document with its updatedAt fields set to
// the update's time at, whatever they held.
func (s *Schema) StampUpdate(doc []byte, at time.Time) ([]byte, error) {
	if !s.stamps {
		return doc, nil
	}
	stamp := jsonscan.AppendQuote(nil, at.UTC().Format(time.RFC3339Nano))
	return fill(doc, s.fields, func(f *Field) ([]byte, bool) {
		if f.UpdatedAt {
			return stamp, true
		}
		return nil, false
	})
}

// fill returns the object doc with, for each of fields, value(f) if it
// is not nil: in place of the member's value if replace, else only where
// the member is missing (or null). Objects are filled recursively, and
// one that is missing is added when something is put in it.
func fill(doc []byte, fields []*Field, value func(*Field) (v []byte, replace bool)) ([]byte, error) {
	start := jsonscan.SkipSpace(doc, 0)
	obj, err := jsonscan.ObjectAt(doc, start)
	if err != nil {
		return nil, invalidf("document is not valid JSON: %v", err)
	}
	spans := make(map[string]span, len(fields))
	insert := start + 1
	for {
		key, escaped, v, ok, err := obj.Next()
		if err != nil {
			return nil, invalidf("document is not valid JSON: %v", err)
		}
		if !ok {
			break
		}
		e, err := jsonscan.End(doc, v)
		if err != nil {
			return nil, invalidf("document is not valid JSON: %v", err)
		}
		spans[keyString(key, escaped)] = span{v, e}
		insert = e
		obj.Resume(e)
	}
	count := obj.Count()
	var edits []edit
	for _, f := range fields {
		sp, exists := spans[f.Name]
		present := exists && jsonscan.KindAt(doc, sp.start) != jsonscan.Null
		var v []byte
		if f.Type == Object && !f.FreeForm {
			inner := []byte("{}")
			if present {
				if jsonscan.KindAt(doc, sp.start) != jsonscan.Object {
					continue // Validate refuses it
				}
				inner = doc[sp.start:sp.end]
			}
			filled, err := fill(inner, f.Properties, value)
			if err != nil {
				return nil, err
			}
			if present && len(filled) == len(inner) && string(filled) == string(inner) {
				continue
			}
			if !present && string(filled) == "{}" {
				continue
			}
			v = filled
		} else {
			var replace bool
			if v, replace = value(f); v == nil || (present && !replace) {
				continue
			}
		}
		if exists { // a value or null, replaced in place
			edits = append(edits, edit{sp.start, sp.end, string(v)})
			continue
		}
		member := []byte{}
		if count > 0 {
			member = append(member, ',')
		}
		member = jsonscan.AppendQuote(member, f.Name)
		member = append(append(member, ':'), v...)
		edits = append(edits, edit{insert, insert, string(member)})
		count++
	}
	if len(edits) == 0 {
		return doc, nil
	}
	// A member's null value is replaced in place; new members go after the
	// last one. Both kinds are in document order once sorted.
	sortEdits(edits)
	return applyEdits(doc, edits), nil
}

func sortEdits(edits []edit) {
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].start < edits[j-1].start; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
}

// cuidCounter makes the cuids of one process distinct within a millisecond.
var cuidCounter atomic.Uint32

// newCUID returns a collision-resistant id in the shape of a cuid: "c",
// then base-36 time, counter and randomness, 25 characters in all.
func newCUID() string {
	pad := func(s string, n int) string {
		for len(s) < n {
			s = "0" + s
		}
		return s[len(s)-n:]
	}
	ms := strconv.FormatInt(time.Now().UnixMilli(), 36)
	count := strconv.FormatUint(uint64(cuidCounter.Add(1)%(36*36*36*36)), 36)
	r, _ := rand.Int(rand.Reader, big.NewInt(36*36*36*36*36*36*36*36*36*36*36*36))
	return "c" + pad(ms, 8) + pad(count, 4) + pad(r.Text(36), 12)
}
