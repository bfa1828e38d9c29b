package client

import (
	"bytes"
	"encoding/json"
)

// Filter selects documents (docs/api.md "Filters"). The zero Filter, as
// All, selects every document. Build one with Eq, Gt, Gte, Lt, Lte, And
// and Or, or give its JSON with RawFilter.
type Filter struct{ v any }

// All selects every document.
func All() Filter { return Filter{} }

// Eq selects the documents whose field (a dot path for nested fields)
// equals value; for an array field, those with an element equal to it.
func Eq(field string, value any) Filter { return Filter{map[string]any{field: value}} }

// Gt, Gte, Lt and Lte compare a field with a value.
func Gt(field string, value any) Filter  { return compare(field, "$gt", value) }
func Gte(field string, value any) Filter { return compare(field, "$gte", value) }
func Lt(field string, value any) Filter  { return compare(field, "$lt", value) }
func Lte(field string, value any) Filter { return compare(field, "$lte", value) }

func compare(field, op string, value any) Filter {
	return Filter{map[string]any{field: map[string]any{op: value}}}
}

// And selects the documents every filter selects.
func And(filters ...Filter) Filter { return combine("$and", filters) }

// Or selects the documents any of the filters selects.
func Or(filters ...Filter) Filter { return combine("$or", filters) }

// combine writes $and/$or; the API wants two filters or more, so one is
// sent as it is and none as All.
func combine(op string, filters []Filter) Filter {
	switch len(filters) {
	case 0:
		return All()
	case 1:
		return filters[0]
	}
	return Filter{map[string]any{op: filters}}
}

// RawFilter is a filter given as its JSON, for example one a user typed.
func RawFilter(js []byte) Filter { return Filter{json.RawMessage(bytes.Clone(js))} }

// IsZero tells whether f is the zero Filter (every document).
func (f Filter) IsZero() bool { return f.v == nil }

// MarshalJSON writes the filter as the API reads it.
func (f Filter) MarshalJSON() ([]byte, error) {
	if f.v == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(f.v)
}

// Update is the change an update makes to each matching document: fields
// to set (dot paths reach into objects) and fields to remove.
type Update struct {
	set   []setField
	unset []string
	raw   json.RawMessage
}

type setField struct {
	path  string
	value any
}

// Set sets a field to value.
func Set(field string, value any) Update { return Update{}.Set(field, value) }

// Unset removes fields.
func Unset(fields ...string) Update { return Update{}.Unset(fields...) }

// Set adds the setting of a field to u.
func (u Update) Set(field string, value any) Update {
	u.set = append(append([]setField(nil), u.set...), setField{field, value})
	return u
}

// Unset adds the removal of fields to u.
func (u Update) Unset(fields ...string) Update {
	u.unset = append(append([]string(nil), u.unset...), fields...)
	return u
}

// RawUpdate is an update given as its JSON: {"$set":{…},"$unset":[…]}.
func RawUpdate(js []byte) Update { return Update{raw: bytes.Clone(js)} }

// MarshalJSON writes the update as the API reads it, fields in the order
// they were set.
func (u Update) MarshalJSON() ([]byte, error) {
	if u.raw != nil {
		return u.raw, nil
	}
	var b bytes.Buffer
	b.WriteString("{")
	if len(u.set) > 0 {
		b.WriteString(`"$set":{`)
		for i, f := range u.set {
			if i > 0 {
				b.WriteString(",")
			}
			v, err := json.Marshal(f.value)
			if err != nil {
				return nil, err
			}
			writeJSON(&b, f.path)
			b.WriteString(":")
			b.Write(v)
		}
		b.WriteString("}")
	}
	if len(u.unset) > 0 {
		if len(u.set) > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"$unset":`)
		writeJSON(&b, u.unset)
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// SortField orders results by a field.
type SortField struct {
	Field string
	Desc  bool
}

// Asc and Desc order by a field, ascending and descending.
func Asc(field string) SortField  { return SortField{Field: field} }
func Desc(field string) SortField { return SortField{Field: field, Desc: true} }

// MarshalJSON writes {"field":"$asc"}.
func (s SortField) MarshalJSON() ([]byte, error) {
	dir := "$asc"
	if s.Desc {
		dir = "$desc"
	}
	return json.Marshal(map[string]string{s.Field: dir})
}
