// Package aggregate is the aggregation call's own logic: it reads a
// request (groups, accumulators, sort, limit) against a collection's
// schema, folds documents (or counts read from index entries) into groups
// and renders the groups' results in order. Which documents are folded,
// and whether the index entries can stand in for them, is the planner's
// business (package query) and the document service's (package
// documents); nothing here reads the store.
//
// Groups are identified by the keyenc tuple of their values, each value
// typed as its index entry types it (index.Value): a group built from
// documents and one built from index entries are the same group, and the
// groups' default order is the entries' order (null first, numbers by
// value, strings bytewise).
package aggregate

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// Request is an aggregation as the API gives it: the JSON members other
// than the filter, which the caller parses.
type Request struct {
	// GroupBy names the fields whose values make a group (dot paths);
	// none makes one group of every document the filter matches.
	GroupBy []string
	// Fields is {"name": {"$op": argument}, ...}: the accumulators, in
	// the order results show them.
	Fields []byte
	// Sort is [{"name": "$asc"|"$desc"}, ...] over group fields and
	// accumulator names.
	Sort []byte
	// Limit caps the groups answered (0: all of them).
	Limit int64
}

// Op is an accumulator's operation.
type Op int

// The accumulators.
const (
	Count         Op = iota // documents in the group
	Sum                     // sum of a numeric field
	Avg                     // mean of a numeric field
	Min                     // least value of a field
	Max                     // greatest value of a field
	CountDistinct           // distinct values of a field
)

var opNames = map[string]Op{"$count": Count, "$sum": Sum, "$avg": Avg, "$min": Min, "$max": Max, "$count_distinct": CountDistinct}

// opList is how errors name the accumulators, in the documentation's order.
const opList = "$count, $sum, $avg, $min, $max, $count_distinct"

// Accumulator is one named accumulator of a request.
type Accumulator struct {
	Name  string
	Op    Op
	Field *schema.Field // nil for $count
}

// SortKey is one item of a request's sort: a group field (Group >= 0) or
// an accumulator (Acc >= 0).
type SortKey struct {
	Group, Acc int
	Desc       bool
}

// Spec is a parsed request.
type Spec struct {
	GroupBy []*schema.Field
	Accs    []Accumulator
	Sort    []SortKey
	Limit   int64
}

// CountOnly tells whether every accumulator is $count, which index
// entries alone can answer.
func (s *Spec) CountOnly() bool {
	for _, a := range s.Accs {
		if a.Op != Count {
			return false
		}
	}
	return true
}

// Parse checks a request against a collection's schema. Every mistake is
// INVALID_ARGUMENT, naming the member at fault.
func Parse(req Request, s *schema.Schema) (*Spec, error) {
	spec := &Spec{Limit: req.Limit}
	if req.Limit < 0 {
		return nil, invalid("limit must not be negative")
	}
	seen := map[string]bool{}
	for _, path := range req.GroupBy {
		f, ok := s.Field(path)
		if !ok {
			return nil, invalid("group_by names '%s', which is not a field of the collection's schema", path)
		}
		if !groupable(f) {
			return nil, invalid("group_by field '%s' is of type %s: a group is made of scalar values or of the elements of an array of them", path, typeName(f))
		}
		if seen[path] {
			return nil, invalid("group_by names '%s' twice", path)
		}
		seen[path] = true
		spec.GroupBy = append(spec.GroupBy, f)
	}
	accs, err := parseFields(req.Fields, s)
	if err != nil {
		return nil, err
	}
	spec.Accs = accs
	if spec.Sort, err = parseSort(req.Sort, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// groupable tells whether f's values can make groups: a scalar field, or
// an array of scalars (each distinct element a group).
func groupable(f *schema.Field) bool {
	return f.Type.Scalar() || (f.Type == schema.Array && f.Items != nil && f.Items.Type.Scalar())
}

func typeName(f *schema.Field) string {
	if f.Type == schema.Array && f.Items != nil {
		return "array of " + typeName(f.Items)
	}
	return f.Type.String()
}

// parseFields reads the accumulators, in the order of the object's members.
func parseFields(raw []byte, s *schema.Schema) ([]Accumulator, error) {
	if isNull(raw) {
		return nil, invalid(`fields is a required member: name what each group answers, such as {"n":{"$count":{}}}`)
	}
	start, _, err := jsonscan.Whole(raw)
	if err != nil || jsonscan.KindAt(raw, start) != jsonscan.Object {
		return nil, invalid(`fields must be an object such as {"n":{"$count":{}},"total":{"$sum":"price"}}`)
	}
	obj, err := jsonscan.ObjectAt(raw, start)
	if err != nil {
		return nil, invalid("fields: %v", err)
	}
	var out []Accumulator
	seen := map[string]bool{}
	for {
		key, escaped, at, ok, err := obj.Next()
		if err != nil {
			return nil, invalid("fields: %v", err)
		}
		if !ok {
			break
		}
		name := string(key)
		if escaped {
			name = jsonscan.Unquote(key)
		}
		end, err := jsonscan.End(raw, at)
		if err != nil {
			return nil, invalid("fields: %v", err)
		}
		obj.Resume(end)
		switch {
		case name == "" || strings.HasPrefix(name, "$"):
			return nil, invalid("fields: '%s' is not a name for a result: a name must not be empty or start with '$'", name)
		case name == "group":
			return nil, invalid("fields: 'group' names the group's values in each result; give the accumulator another name")
		case seen[name]:
			return nil, invalid("fields names '%s' twice", name)
		}
		seen[name] = true
		a, err := parseAccumulator(name, raw[at:end], s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, invalid(`fields names no accumulator: give at least one, such as {"n":{"$count":{}}}`)
	}
	return out, nil
}

// parseAccumulator reads {"$op": argument}.
func parseAccumulator(name string, raw []byte, s *schema.Schema) (Accumulator, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return Accumulator{}, invalid(`fields.%s must be one accumulator, such as {"$sum":"price"} (%s)`, name, opList)
	}
	for opName, arg := range m {
		op, ok := opNames[opName]
		if !ok {
			return Accumulator{}, invalid("fields.%s: unknown accumulator '%s': the accumulators are %s", name, opName, opList)
		}
		a := Accumulator{Name: name, Op: op}
		if op == Count {
			if t := bytes.TrimSpace(arg); !bytes.Equal(t, []byte("{}")) {
				return Accumulator{}, invalid("fields.%s: $count takes {}, not %s", name, t)
			}
			return a, nil
		}
		var path string
		if err := json.Unmarshal(arg, &path); err != nil {
			return Accumulator{}, invalid(`fields.%s: %s takes a field's name, such as {"%s":"price"}`, name, opName, opName)
		}
		f, ok := s.Field(path)
		if !ok {
			return Accumulator{}, invalid("fields.%s: %s of '%s', which is not a field of the collection's schema", name, opName, path)
		}
		if err := checkOperand(name, opName, op, f); err != nil {
			return Accumulator{}, err
		}
		a.Field = f
		return a, nil
	}
	panic("unreachable")
}

// checkOperand refuses a field an accumulator cannot take: $sum and $avg
// take numbers; $min and $max numbers, strings, uuids and date-times;
// $count_distinct any scalar.
func checkOperand(name, opName string, op Op, f *schema.Field) error {
	t := f.Type
	ok := false
	switch op {
	case Sum, Avg:
		ok = numeric(t)
	case Min, Max:
		ok = numeric(t) || t == schema.String || t == schema.UUID || t == schema.DateTime
	case CountDistinct:
		ok = t.Scalar()
	}
	if !ok {
		return invalid("fields.%s: %s cannot take field '%s' of type %s", name, opName, f.Path, typeName(f))
	}
	return nil
}

func numeric(t schema.Type) bool { return t == schema.Int32 || t == schema.Int64 || t == schema.Number }

// parseSort reads [{"name":"$asc"}, ...]; a name is a group_by field or
// an accumulator.
func parseSort(raw []byte, spec *Spec) ([]SortKey, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []map[string]string
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid(`sort must be an array such as [{"n":"$desc"}]`)
	}
	var out []SortKey
	for _, item := range items {
		if len(item) != 1 {
			return nil, invalid("each sort item names one group field or accumulator")
		}
		for name, order := range item {
			k := SortKey{Group: -1, Acc: -1}
			switch order {
			case "$asc":
			case "$desc":
				k.Desc = true
			default:
				return nil, invalid("sort order of '%s' must be $asc or $desc, not '%s'", name, order)
			}
			for i, f := range spec.GroupBy {
				if f.Path == name {
					k.Group = i
				}
			}
			for i, a := range spec.Accs {
				if a.Name == name {
					k.Acc = i
				}
			}
			if k.Group < 0 && k.Acc < 0 {
				return nil, invalid("sort names '%s', which is neither a group_by field nor an accumulator of fields", name)
			}
			if k.Group >= 0 && k.Acc >= 0 {
				return nil, invalid("sort names '%s', which is both a group_by field and an accumulator: rename the accumulator", name)
			}
			out = append(out, k)
		}
	}
	return out, nil
}

func invalid(format string, args ...any) error {
	return apierror.Errorf(apierror.InvalidArgument, format, args...)
}

func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
