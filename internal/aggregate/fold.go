package aggregate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/schema"
)

// DefaultMaxGroups bounds the groups one aggregation holds in memory.
const DefaultMaxGroups = 100_000

// MaxDistinctValues bounds the values all $count_distinct accumulators of
// one aggregation hold, over all its groups.
const MaxDistinctValues = 1_000_000

// Folder folds documents, or counts of a group read from index entries,
// into groups, up to a bound on their number.
type Folder struct {
	spec      *Spec
	maxGroups int
	groups    map[string]*group
	distinct  int // values held by the $count_distinct sets
	// Folded counts the documents folded (each once, whatever the number
	// of its groups).
	Folded int64
}

type group struct {
	key  string // keyenc tuple of the group's values
	n    int64  // documents
	accs []acc
}

// acc is an accumulator's running state in one group.
type acc struct {
	n     int64 // values seen
	isum  int64 // an integer sum, wrapped: the sum is isum + carry×2^64
	carry int64 // the times isum wrapped up, less the times it wrapped down
	fsum  float64
	float bool   // the sum is a float: a number field's
	best  []byte // $min/$max: the keyenc encoding of the best value so far
	set   map[string]struct{}
}

// NewFolder returns a Folder for spec holding at most maxGroups groups
// (DefaultMaxGroups if 0 or less).
func NewFolder(spec *Spec, maxGroups int) *Folder {
	if maxGroups <= 0 {
		maxGroups = DefaultMaxGroups
	}
	return &Folder{spec: spec, maxGroups: maxGroups, groups: map[string]*group{}}
}

// TooManyGroups is the error past the bound on groups.
func TooManyGroups(limit int) error {
	return apierror.Errorf(apierror.InvalidArgument, "the aggregation has more than %d groups, the limit: narrow the filter, or group by fewer or coarser fields", limit)
}

// group returns the group of key, made if new.
func (f *Folder) group(key []byte) (*group, error) {
	if g, ok := f.groups[string(key)]; ok {
		return g, nil
	}
	if len(f.groups) >= f.maxGroups {
		return nil, TooManyGroups(f.maxGroups)
	}
	g := &group{key: string(key), accs: make([]acc, len(f.spec.Accs))}
	for i, a := range f.spec.Accs {
		g.accs[i].float = a.Field != nil && a.Field.Type == schema.Number
	}
	f.groups[g.key] = g
	return g, nil
}

// AddCount adds n documents to the group of values (one per group_by
// field, typed as index.Value types them; nil for null): what an index
// entry count gives. Only a spec whose accumulators are all $count may be
// folded so.
func (f *Folder) AddCount(values []any, n int64) error {
	key, err := keyenc.Pack(keyenc.Tuple(values))
	if err != nil {
		return err
	}
	g, err := f.group(key)
	if err != nil {
		return err
	}
	g.n += n
	f.Folded += n
	return nil
}

// Add folds one document (its JSON) into each of its groups: one per
// combination of the distinct values of its group fields, an array field
// giving each distinct element; a missing or null field, or an array
// without a non-null element, gives null.
func (f *Folder) Add(doc []byte) error {
	keys := [][]byte{nil}
	for _, gf := range f.spec.GroupBy {
		vals, err := groupValues(doc, gf)
		if err != nil {
			return err
		}
		if len(vals) == 1 {
			for i := range keys {
				keys[i] = append(keys[i], vals[0]...)
			}
			continue
		}
		var next [][]byte
		for _, k := range keys {
			for _, v := range vals {
				next = append(next, append(slices.Clip(k), v...))
			}
		}
		keys = next
	}
	// The document's operands, read once whatever its number of groups.
	operands := make([]any, len(f.spec.Accs))
	for i, a := range f.spec.Accs {
		if a.Field == nil {
			continue
		}
		v, err := fieldValue(doc, a.Field)
		if err != nil {
			return err
		}
		operands[i] = v
	}
	f.Folded++
	for _, k := range keys {
		g, err := f.group(k)
		if err != nil {
			return err
		}
		g.n++
		for i, a := range f.spec.Accs {
			if err := f.fold(&g.accs[i], a.Op, operands[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fold adds one operand (nil: the document has no value) to an
// accumulator.
func (f *Folder) fold(s *acc, op Op, v any) error {
	if v == nil || op == Count {
		return nil
	}
	s.n++
	switch op {
	case Sum, Avg:
		switch n := v.(type) {
		case int64:
			if s.float {
				s.fsum += float64(n)
				break
			}
			// A sum whose partial sums pass int64's range but whose total
			// does not is exact whatever the documents' order: the wraps
			// are counted, and only a total past the range is a float.
			sum := s.isum + n
			switch {
			case n > 0 && sum < s.isum:
				s.carry++
			case n < 0 && sum > s.isum:
				s.carry--
			}
			s.isum = sum
		case float64:
			s.fsum += n
		}
	case Min, Max:
		enc, err := keyenc.Pack(keyenc.Tuple{v})
		if err != nil {
			return err
		}
		if c := bytes.Compare(enc, s.best); s.best == nil || (op == Min && c < 0) || (op == Max && c > 0) {
			s.best = enc
		}
	case CountDistinct:
		enc, err := keyenc.Pack(keyenc.Tuple{v})
		if err != nil {
			return err
		}
		if s.set == nil {
			s.set = map[string]struct{}{}
		}
		if _, ok := s.set[string(enc)]; !ok {
			if f.distinct >= MaxDistinctValues {
				return apierror.Errorf(apierror.InvalidArgument, "$count_distinct holds more than %d distinct values over all groups, the limit: narrow the filter", MaxDistinctValues)
			}
			s.set[string(enc)] = struct{}{}
			f.distinct++
		}
	}
	return nil
}

// groupValues returns the keyenc encodings of a document's distinct
// values of a group field, in order; one null if it has none.
func groupValues(doc []byte, f *schema.Field) ([][]byte, error) {
	tok, err := lookup(doc, f.Path)
	if err != nil {
		return nil, fmt.Errorf("aggregate: field %s: %w", f.Path, err)
	}
	null := [][]byte{{0x00}} // keyenc's null
	if tok == nil || jsonscan.KindAt(tok, 0) == jsonscan.Null {
		return null, nil
	}
	if f.Type != schema.Array {
		v, err := index.ScalarValue(tok, f.Type)
		if err != nil || v == nil {
			return nil, fmt.Errorf("aggregate: field %s: %v", f.Path, err)
		}
		enc, err := keyenc.Pack(keyenc.Tuple{v})
		return [][]byte{enc}, err
	}
	if jsonscan.KindAt(tok, 0) != jsonscan.Array {
		return null, nil
	}
	arr, err := jsonscan.ArrayAt(tok, 0)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		at, ok, err := arr.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		end, err := jsonscan.End(tok, at)
		if err != nil {
			return nil, err
		}
		arr.Resume(end)
		if jsonscan.KindAt(tok, at) == jsonscan.Null {
			continue
		}
		v, err := index.ScalarValue(tok[at:end], f.Items.Type)
		if err != nil {
			return nil, fmt.Errorf("aggregate: field %s: %w", f.Path, err)
		}
		enc, err := keyenc.Pack(keyenc.Tuple{v})
		if err != nil {
			return nil, err
		}
		out = append(out, enc)
	}
	if len(out) == 0 {
		return null, nil
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal), nil
}

// fieldValue returns a document's typed value of a scalar field, or nil
// if it is missing or null.
func fieldValue(doc []byte, f *schema.Field) (any, error) {
	tok, err := lookup(doc, f.Path)
	if err != nil {
		return nil, fmt.Errorf("aggregate: field %s: %w", f.Path, err)
	}
	if tok == nil || jsonscan.KindAt(tok, 0) == jsonscan.Null {
		return nil, nil
	}
	v, err := index.ScalarValue(tok, f.Type)
	if err != nil {
		return nil, fmt.Errorf("aggregate: field %s: %w", f.Path, err)
	}
	return v, nil
}

// lookup returns the value at a dot path of a document (nil if a part is
// missing or not an object), aliasing doc. It walks the members in place,
// as jsondoc.Get does but without listing each object's members: every
// document of an aggregation passes here once per field.
func lookup(doc []byte, path string) ([]byte, error) {
	at := jsonscan.SkipSpace(doc, 0)
	for part := range strings.SplitSeq(path, ".") {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return nil, nil
		}
		obj, err := jsonscan.ObjectAt(doc, at)
		if err != nil {
			return nil, err
		}
		found := false
		for !found {
			key, escaped, value, ok, err := obj.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, nil
			}
			if (!escaped && string(key) == part) || (escaped && jsonscan.Unquote(key) == part) {
				at, found = value, true
				break
			}
			end, err := jsonscan.End(doc, value)
			if err != nil {
				return nil, err
			}
			obj.Resume(end)
		}
	}
	end, err := jsonscan.End(doc, at)
	if err != nil {
		return nil, err
	}
	return doc[at:end], nil
}

// Groups is the number of groups folded so far.
func (f *Folder) Groups() int { return len(f.groups) }

// Results renders the groups, sorted and limited as the spec says, each a
// JSON object {"group": {field: value, ...}, name: result, ...}. A spec
// without group_by answers its one group even when no document matched.
func (f *Folder) Results() ([][]byte, error) {
	if len(f.spec.GroupBy) == 0 && len(f.groups) == 0 {
		if _, err := f.group([]byte{}); err != nil {
			return nil, err
		}
	}
	type row struct {
		g      *group
		values []any    // the group's values
		finals []any    // the accumulators' results
		keys   [][]byte // sort keys, encoded
	}
	rows := make([]row, 0, len(f.groups))
	for _, g := range f.groups {
		values, err := keyenc.Unpack([]byte(g.key))
		if err != nil {
			return nil, err
		}
		r := row{g: g, values: values, finals: make([]any, len(g.accs))}
		for i, a := range f.spec.Accs {
			if r.finals[i], err = final(g, &g.accs[i], a.Op); err != nil {
				return nil, err
			}
		}
		for _, k := range f.spec.Sort {
			v := any(nil)
			if k.Group >= 0 {
				v = values[k.Group]
			} else {
				v = r.finals[k.Acc]
			}
			enc, err := keyenc.Pack(keyenc.Tuple{v})
			if err != nil {
				return nil, err
			}
			r.keys = append(r.keys, enc)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b row) int {
		for i, k := range f.spec.Sort {
			if c := bytes.Compare(a.keys[i], b.keys[i]); c != 0 {
				if k.Desc {
					return -c
				}
				return c
			}
		}
		return bytes.Compare([]byte(a.g.key), []byte(b.g.key))
	})
	if f.spec.Limit > 0 && int64(len(rows)) > f.spec.Limit {
		rows = rows[:f.spec.Limit]
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		b := append(make([]byte, 0, 64), `{"group":{`...)
		for j, gf := range f.spec.GroupBy {
			if j > 0 {
				b = append(b, ',')
			}
			b = jsonscan.AppendQuote(b, gf.Path)
			b = append(b, ':')
			b = appendValue(b, r.values[j])
		}
		b = append(b, '}')
		for j, a := range f.spec.Accs {
			b = append(b, ',')
			b = jsonscan.AppendQuote(b, a.Name)
			b = append(b, ':')
			b = appendValue(b, r.finals[j])
		}
		out[i] = append(b, '}')
	}
	return out, nil
}

// intSumAsFloat is an integer sum as a float: past int64's range it can
// be nothing else (the answer is then inexact, as docs/api.md says).
func intSumAsFloat(s *acc) float64 {
	return float64(s.isum) + float64(s.carry)*(1<<64)
}

// final is an accumulator's result: int64, float64, a field's typed value,
// or nil (an average or extreme of no value).
func final(g *group, s *acc, op Op) (any, error) {
	switch op {
	case Count:
		return g.n, nil
	case Sum:
		if s.float {
			return s.fsum, nil
		}
		if s.carry != 0 {
			return intSumAsFloat(s), nil
		}
		return s.isum, nil
	case Avg:
		if s.n == 0 {
			return nil, nil
		}
		if s.float {
			return s.fsum / float64(s.n), nil
		}
		return intSumAsFloat(s) / float64(s.n), nil
	case Min, Max:
		if s.best == nil {
			return nil, nil
		}
		v, _, err := keyenc.DecodeOne(s.best)
		return v, err
	case CountDistinct:
		return int64(len(s.set)), nil
	}
	return nil, nil
}

// appendValue renders a typed value as JSON: bytes in base64, as
// documents hold them; a float that JSON cannot hold (a sum past the
// float range) as null.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return append(b, "null"...)
		}
		enc, _ := json.Marshal(v) // encoding/json's shortest form
		return append(b, enc...)
	case string:
		return jsonscan.AppendQuote(b, v)
	case []byte:
		return jsonscan.AppendQuote(b, base64.StdEncoding.EncodeToString(v))
	}
	return append(b, "null"...)
}
