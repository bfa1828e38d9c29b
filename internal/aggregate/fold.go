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

	// A document is walked once for every field the spec reads (paths),
	// its values' tokens left in toks by slot: groupSlot[i] is group field
	// i's, accSlot[i] accumulator i's (-1 for $count).
	paths     []*pathNode
	toks      [][]byte
	groupSlot []int
	accSlot   []int
	// scalarGroups: no group field is an array, so a document is in one
	// group, whose key is built in keyBuf without allocating.
	scalarGroups bool
	keyBuf       []byte
	scratch      []byte // an operand's encoding ($min, $max, $count_distinct)
}

// pathNode is one member name of the paths a Folder reads: a leaf's token
// goes to its slot (-1: only a step on the way to deeper ones).
type pathNode struct {
	name string
	slot int
	kids []*pathNode
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
	f := &Folder{spec: spec, maxGroups: maxGroups, groups: map[string]*group{}, scalarGroups: true}
	slots := map[string]int{}
	slot := func(fd *schema.Field) int {
		if i, ok := slots[fd.Path]; ok {
			return i
		}
		i := len(slots)
		slots[fd.Path] = i
		f.paths = addPath(f.paths, strings.Split(fd.Path, "."), i)
		return i
	}
	for _, gf := range spec.GroupBy {
		f.groupSlot = append(f.groupSlot, slot(gf))
		if gf.Type == schema.Array {
			f.scalarGroups = false
		}
	}
	for _, a := range spec.Accs {
		i := -1
		if a.Field != nil {
			i = slot(a.Field)
		}
		f.accSlot = append(f.accSlot, i)
	}
	f.toks = make([][]byte, len(slots))
	return f
}

// addPath adds the path parts to the nodes, its leaf holding slot.
func addPath(nodes []*pathNode, parts []string, slot int) []*pathNode {
	var n *pathNode
	for _, c := range nodes {
		if c.name == parts[0] {
			n = c
		}
	}
	if n == nil {
		n = &pathNode{name: parts[0], slot: -1}
		nodes = append(nodes, n)
	}
	if len(parts) == 1 {
		n.slot = slot
	} else {
		n.kids = addPath(n.kids, parts[1:], slot)
	}
	return nodes
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
	clear(f.toks)
	if err := f.collect(doc, jsonscan.SkipSpace(doc, 0), f.paths); err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	f.Folded++
	if f.scalarGroups {
		key := f.keyBuf[:0]
		for i, gf := range f.spec.GroupBy {
			var err error
			if key, err = appendValue(key, f.toks[f.groupSlot[i]], gf); err != nil {
				return err
			}
		}
		f.keyBuf = key
		return f.addTo(key)
	}
	keys := [][]byte{nil}
	for i, gf := range f.spec.GroupBy {
		vals, err := groupValues(f.toks[f.groupSlot[i]], gf)
		if err != nil {
			return err
		}
		var next [][]byte
		for _, k := range keys {
			for _, v := range vals {
				next = append(next, append(slices.Clip(k), v...))
			}
		}
		keys = next
	}
	for _, k := range keys {
		if err := f.addTo(k); err != nil {
			return err
		}
	}
	return nil
}

// addTo folds the document whose values are in f.toks into the group of
// key.
func (f *Folder) addTo(key []byte) error {
	g, err := f.group(key)
	if err != nil {
		return err
	}
	g.n++
	for i, a := range f.spec.Accs {
		if a.Op == Count {
			continue
		}
		if err := f.fold(&g.accs[i], a, f.toks[f.accSlot[i]]); err != nil {
			return err
		}
	}
	return nil
}

// collect walks the object at doc[at:] once, leaving the token of each
// path under nodes in its slot. The first member of a name counts, as
// jsondoc.Get takes it; a value that is not an object has no members.
func (f *Folder) collect(doc []byte, at int, nodes []*pathNode) error {
	if jsonscan.KindAt(doc, at) != jsonscan.Object {
		return nil
	}
	obj, err := jsonscan.ValidObjectAt(doc, at) // a stored document, checked when written
	if err != nil {
		return err
	}
	left := len(nodes)
	for left > 0 {
		key, escaped, value, ok, err := obj.Next()
		if err != nil || !ok {
			return err
		}
		n := f.member(nodes, key, escaped)
		end, err := jsonscan.SkipValid(doc, value)
		if err != nil {
			return err
		}
		obj.Resume(end)
		if n == nil {
			continue
		}
		left--
		if n.slot >= 0 {
			f.toks[n.slot] = doc[value:end]
		}
		if n.kids != nil {
			if err := f.collect(doc, value, n.kids); err != nil {
				return err
			}
		}
	}
	return nil
}

// member returns the node a member's key names, nil if none or if an
// earlier member of the name was taken.
func (f *Folder) member(nodes []*pathNode, key []byte, escaped bool) *pathNode {
	name := key
	if escaped {
		name = []byte(jsonscan.Unquote(key))
	}
	for _, n := range nodes {
		if string(name) == n.name {
			if n.slot >= 0 && f.toks[n.slot] != nil {
				return nil
			}
			return n
		}
	}
	return nil
}

// fold adds a document's token of an accumulator's field (nil: missing)
// to the accumulator; a null adds nothing.
func (f *Folder) fold(s *acc, a Accumulator, tok []byte) error {
	if tok == nil || jsonscan.KindAt(tok, 0) == jsonscan.Null {
		return nil
	}
	s.n++
	switch a.Op {
	case Sum, Avg:
		if a.Field.Type == schema.Number {
			v, err := strconv.ParseFloat(string(tok), 64)
			if err != nil {
				return fmt.Errorf("aggregate: field %s: %w", a.Field.Path, err)
			}
			s.fsum += v
			break
		}
		n, ok := jsonscan.ParseInt(tok)
		if !ok {
			return fmt.Errorf("aggregate: field %s: not an integer: %s", a.Field.Path, tok)
		}
		// A sum whose partial sums pass int64's range but whose total
		// does not is exact whatever the documents' order: the wraps are
		// counted, and only a total past the range is a float.
		sum := s.isum + n
		switch {
		case n > 0 && sum < s.isum:
			s.carry++
		case n < 0 && sum > s.isum:
			s.carry--
		}
		s.isum = sum
	case Min, Max:
		enc, err := appendValue(f.scratch[:0], tok, a.Field)
		f.scratch = enc
		if err != nil {
			return err
		}
		if c := bytes.Compare(enc, s.best); s.best == nil || (a.Op == Min && c < 0) || (a.Op == Max && c > 0) {
			s.best = append(s.best[:0], enc...)
		}
	case CountDistinct:
		enc, err := appendValue(f.scratch[:0], tok, a.Field)
		f.scratch = enc
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

// appendValue appends the keyenc encoding of a scalar field's token (nil
// or null: keyenc's null) as keyenc.Pack writes the value index.ScalarValue
// gives, without making that value where it can: every document of an
// aggregation passes here once per group field.
func appendValue(dst, tok []byte, fd *schema.Field) ([]byte, error) {
	if tok == nil || jsonscan.KindAt(tok, 0) == jsonscan.Null {
		return append(dst, 0x00), nil // keyenc's null
	}
	switch fd.Type {
	case schema.Int32, schema.Int64:
		if n, ok := jsonscan.ParseInt(tok); ok {
			return keyenc.AppendInt(dst, n), nil
		}
	case schema.Number:
		if v, err := strconv.ParseFloat(string(tok), 64); err == nil {
			return keyenc.AppendFloat(dst, v)
		}
	case schema.String, schema.UUID, schema.DateTime:
		if jsonscan.KindAt(tok, 0) == jsonscan.String {
			inner := tok[1 : len(tok)-1]
			if bytes.IndexByte(inner, '\\') < 0 {
				return keyenc.AppendStringBytes(dst, inner), nil
			}
		}
	}
	v, err := index.ScalarValue(tok, fd.Type)
	if err != nil || v == nil {
		return dst, fmt.Errorf("aggregate: field %s: %v", fd.Path, err)
	}
	return keyenc.AppendPack(dst, keyenc.Tuple{v})
}

// groupValues returns the keyenc encodings of a document's distinct
// values of a group field, from its token, in order; one null if it has
// none.
func groupValues(tok []byte, f *schema.Field) ([][]byte, error) {
	null := [][]byte{{0x00}} // keyenc's null
	if tok == nil || jsonscan.KindAt(tok, 0) == jsonscan.Null {
		return null, nil
	}
	if f.Type != schema.Array {
		enc, err := appendValue(nil, tok, f)
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
		enc, err := appendValue(nil, tok[at:end], f.Items)
		if err != nil {
			return nil, fmt.Errorf("aggregate: field %s: %w", f.Path, err)
		}
		out = append(out, enc)
	}
	if len(out) == 0 {
		return null, nil
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal), nil
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
			b = appendJSON(b, r.values[j])
		}
		b = append(b, '}')
		for j, a := range f.spec.Accs {
			b = append(b, ',')
			b = jsonscan.AppendQuote(b, a.Name)
			b = append(b, ':')
			b = appendJSON(b, r.finals[j])
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

// appendJSON renders a typed value as JSON: bytes in base64, as
// documents hold them; a float that JSON cannot hold (a sum past the
// float range) as null.
func appendJSON(b []byte, v any) []byte {
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
