package filter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

// This file checks Matches against a brute-force evaluator that shares no
// code with it: documents are decoded with encoding/json into maps, paths
// are followed through the maps, and values are compared with the standard
// library.

// bruteCompare evaluates one comparison on a decoded document.
func bruteCompare(doc map[string]any, path string, typ schema.Type, op Op, want any, ci bool) bool {
	var v any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[seg]; !ok {
			return false
		}
	}
	var c int
	switch typ {
	case schema.Int32, schema.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		got, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return false
		}
		c = compareInts(got, want.(int64))
	case schema.Number:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		got, _ := strconv.ParseFloat(n.String(), 64)
		w := want.(float64)
		c = map[bool]int{true: -1, false: 0}[got < w] + map[bool]int{true: 1, false: 0}[got > w]
	case schema.String, schema.UUID, schema.DateTime:
		got, ok := v.(string)
		if !ok {
			return false
		}
		w := want.(string)
		if ci {
			got, w = strings.ToLower(got), strings.ToLower(w)
		}
		c = strings.Compare(got, w)
	case schema.Bytes:
		s, ok := v.(string)
		if !ok {
			return false
		}
		got, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return false
		}
		c = bytes.Compare(got, want.([]byte))
	case schema.Bool:
		got, ok := v.(bool)
		if !ok {
			return false
		}
		c = compareInts(boolInt(got), boolInt(want.(bool)))
	default:
		return false
	}
	switch op {
	case Eq:
		return c == 0
	case Gt:
		return c > 0
	case Gte:
		return c >= 0
	case Lt:
		return c < 0
	case Lte:
		return c <= 0
	}
	panic("bad op")
}

func compareInts(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func decodeDoc(t testing.TB, doc []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	return m
}

// bruteTree evaluates a parsed tree on a decoded document.
func bruteTree(n Node, doc map[string]any) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *And:
		for _, c := range n.Nodes {
			if !bruteTree(c, doc) {
				return false
			}
		}
		return true
	case *Or:
		for _, c := range n.Nodes {
			if bruteTree(c, doc) {
				return true
			}
		}
		return false
	case *Comparison:
		return bruteCompare(doc, n.Path, n.Type, n.Op, n.Value, n.CaseInsensitive)
	case *Not:
		return !bruteTree(n.Node, doc)
	case *Exists:
		v, _ := bruteValue(doc, n.Path)
		return (v != nil) == n.Want
	case *Like:
		v, _ := bruteValue(doc, n.Path)
		s, ok := v.(string)
		if !ok {
			return false
		}
		pattern := n.Pattern
		if n.CaseInsensitive {
			s, pattern = strings.ToLower(s), strings.ToLower(pattern)
		}
		switch n.Op {
		case Contains:
			return strings.Contains(s, pattern)
		case NotContains:
			return !strings.Contains(s, pattern)
		case Regex:
			return regexp.MustCompile(map[bool]string{true: "(?i)"}[n.CaseInsensitive] + n.Pattern).MatchString(v.(string))
		}
	}
	panic("bad node")
}

// bruteValue is the decoded value at path in doc (nil if missing or null).
func bruteValue(doc map[string]any, path string) (any, bool) {
	var v any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// The random world: a schema, and small pools of values per type so that
// equalities happen often.
const propSchema = `{"title":"c","properties":{
	"i":{"type":"integer"},"i32":{"type":"integer","format":"int32"},"n":{"type":"number"},"s":{"type":"string"},
	"b":{"type":"boolean"},"y":{"type":"string","format":"byte"},"u":{"type":"string","format":"uuid"},
	"d":{"type":"string","format":"date-time"},"arr":{"type":"array","items":{"type":"integer"}},
	"o":{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"p":{"type":"object","properties":{"n":{"type":"number"}}}}}
}}`

type pooled struct {
	json  string // as written in a document or filter
	value any    // as the brute-force evaluator wants it
}

var pools = map[schema.Type][]pooled{}

func init() {
	for _, n := range []int64{-3, -1, 0, 1, 2, 3, math.MinInt64, math.MaxInt64, 1 << 53, 1<<53 + 1} {
		pools[schema.Int64] = append(pools[schema.Int64], pooled{strconv.FormatInt(n, 10), n})
	}
	for _, n := range []int64{-2, 0, 1, 2, math.MinInt32, math.MaxInt32} {
		pools[schema.Int32] = append(pools[schema.Int32], pooled{strconv.FormatInt(n, 10), n})
	}
	for _, p := range []struct {
		text string
		v    float64
	}{{"-1.5", -1.5}, {"0", 0}, {"-0.0", 0}, {"1", 1}, {"1.0", 1}, {"1e0", 1}, {"2.5", 2.5}, {"25e-1", 2.5}, {"1e300", 1e300}, {"3", 3}} {
		pools[schema.Number] = append(pools[schema.Number], pooled{p.text, p.v})
	}
	for _, s := range []string{"", "a", "A", "ab", "Ab", "aB", "b", "é", "É", "ß", "SS", "zz", `a"b`, "ÀB", "àb", "a\\b", "\u2028"} {
		pools[schema.String] = append(pools[schema.String], pooled{"", s})
	}
	for _, s := range []string{"", "a", "ab", "\x00", "\xff", "\xff\x00"} {
		pools[schema.Bytes] = append(pools[schema.Bytes], pooled{`"` + base64.StdEncoding.EncodeToString([]byte(s)) + `"`, []byte(s)})
	}
	for _, s := range []string{"1b4e28ba-2fa1-11d2-883f-0016d3cca427", "1B4E28BA-2FA1-11D2-883F-0016D3CCA427", "00000000-0000-0000-0000-000000000000"} {
		pools[schema.UUID] = append(pools[schema.UUID], pooled{`"` + s + `"`, s})
	}
	for _, s := range []string{"2022-09-16T17:42:34Z", "2022-09-16T17:42:34.5Z", "2021-01-01T00:00:00+01:00"} {
		pools[schema.DateTime] = append(pools[schema.DateTime], pooled{`"` + s + `"`, s})
	}
	pools[schema.Bool] = []pooled{{"true", true}, {"false", false}}
}

// pick returns a random pool value of type t, written as JSON (strings with
// random escapes).
func pick(r *rand.Rand, t schema.Type) pooled {
	p := pools[t][r.IntN(len(pools[t]))]
	if t == schema.String {
		p.json = randomQuote(r, p.value.(string))
	}
	return p
}

// randomQuote writes s as a JSON string, escaping some characters that need
// no escaping.
func randomQuote(r *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case r.IntN(4) == 0 && c < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var scalarPaths = []struct {
	path string
	typ  schema.Type
}{
	{"i", schema.Int64}, {"i32", schema.Int32}, {"n", schema.Number}, {"s", schema.String}, {"b", schema.Bool},
	{"y", schema.Bytes}, {"u", schema.UUID}, {"d", schema.DateTime}, {"o.s", schema.String}, {"o.i", schema.Int64},
	{"o.p.n", schema.Number},
}

// randomDoc writes a document of propSchema with random members present,
// null or absent, in random order with random spacing.
func randomDoc(r *rand.Rand) []byte {
	sp := func() string { return []string{"", "", " ", "\n  "}[r.IntN(4)] }
	var obj func(fields map[string]func() string) string
	obj = func(fields map[string]func() string) string {
		var members []string
		for name, gen := range fields { // map order is random enough
			switch x := r.IntN(10); {
			case x < 2:
				continue
			case x < 3:
				members = append(members, sp()+`"`+name+`"`+sp()+":"+sp()+"null")
			default:
				members = append(members, sp()+`"`+name+`"`+sp()+":"+sp()+gen())
			}
		}
		return "{" + strings.Join(members, ",") + sp() + "}"
	}
	val := func(t schema.Type) func() string { return func() string { return pick(r, t).json } }
	return []byte(obj(map[string]func() string{
		"i": val(schema.Int64), "i32": val(schema.Int32), "n": val(schema.Number), "s": val(schema.String),
		"b": val(schema.Bool), "y": val(schema.Bytes), "u": val(schema.UUID), "d": val(schema.DateTime),
		"arr": func() string { return "[1,2," + pick(r, schema.Int64).json + "]" },
		"o": func() string {
			return obj(map[string]func() string{
				"s": val(schema.String), "i": val(schema.Int64),
				"p": func() string { return obj(map[string]func() string{"n": val(schema.Number)}) },
			})
		},
	}))
}

// genNode is a random filter as the generator knows it: its JSON and its
// meaning.
type genNode struct {
	json string
	eval func(doc map[string]any, ci bool) bool
}

var genOps = []struct {
	name string
	op   Op
}{{"$eq", Eq}, {"$gt", Gt}, {"$gte", Gte}, {"$lt", Lt}, {"$lte", Lte}}

// randomMembers returns the members of a random filter object.
func randomMembers(r *rand.Rand, depth int) []genNode {
	var out []genNode
	used := map[string]bool{}
	for n := 1 + r.IntN(3); n > 0; n-- {
		if depth < 3 && r.IntN(4) == 0 {
			name := []string{"$and", "$or"}[r.IntN(2)]
			if used[name] {
				continue
			}
			used[name] = true
			var kids []genNode
			for k := 2 + r.IntN(2); k > 0; k-- {
				ms := randomMembers(r, depth+1)
				var parts []string
				for _, m := range ms {
					parts = append(parts, m.json)
				}
				kids = append(kids, genNode{"{" + strings.Join(parts, ",") + "}", allOf(ms)})
			}
			var parts []string
			for _, k := range kids {
				parts = append(parts, k.json)
			}
			isAnd := name == "$and"
			out = append(out, genNode{
				json: `"` + name + `":[` + strings.Join(parts, ",") + "]",
				eval: func(doc map[string]any, ci bool) bool {
					for _, k := range kids {
						if k.eval(doc, ci) != isAnd {
							return !isAnd
						}
					}
					return isAnd
				},
			})
			continue
		}
		f := scalarPaths[r.IntN(len(scalarPaths))]
		if used[f.path] {
			continue
		}
		used[f.path] = true
		out = append(out, randomCondition(r, f.path, f.typ))
	}
	if len(out) == 0 {
		return randomMembers(r, depth)
	}
	return out
}

func allOf(ms []genNode) func(map[string]any, bool) bool {
	return func(doc map[string]any, ci bool) bool {
		for _, m := range ms {
			if !m.eval(doc, ci) {
				return false
			}
		}
		return true
	}
}

// randomCondition returns the conditions on one field: an equality or one
// or two operators, maybe with a field collation.
func randomCondition(r *rand.Rand, path string, typ schema.Type) genNode {
	value := func() pooled {
		p := pick(r, typ)
		if typ == schema.Number && r.IntN(3) == 0 {
			// An integer literal on a number field.
			n := r.IntN(5) - 2
			return pooled{strconv.Itoa(n), float64(n)}
		}
		return p
	}
	if r.IntN(3) == 0 {
		v := value()
		return genNode{`"` + path + `":` + v.json, func(doc map[string]any, ci bool) bool {
			return bruteCompare(doc, path, typ, Eq, v.value, ci && typ == schema.String)
		}}
	}
	type cond struct {
		op Op
		v  pooled
	}
	var conds []cond
	var parts []string
	first := r.IntN(len(genOps))
	for k := 0; k < 1+r.IntN(2); k++ {
		o := genOps[(first+k*2)%len(genOps)]
		v := value()
		conds = append(conds, cond{o.op, v})
		parts = append(parts, `"`+o.name+`":`+v.json)
	}
	fieldCI := -1 // -1: none given, 0: cs, 1: ci
	if r.IntN(3) == 0 {
		fieldCI = r.IntN(2)
		member := `"collation":{"case":"` + []string{"cs", "ci"}[fieldCI] + `"}`
		parts = slices.Insert(parts, r.IntN(len(parts)+1), member)
	}
	return genNode{`"` + path + `":{` + strings.Join(parts, ",") + "}", func(doc map[string]any, ci bool) bool {
		if fieldCI >= 0 {
			ci = fieldCI == 1
		}
		for _, c := range conds {
			if !bruteCompare(doc, path, typ, c.op, c.v.value, ci && typ == schema.String) {
				return false
			}
		}
		return true
	}}
}

func TestMatchesAgainstBruteForce(t *testing.T) {
	s := mustSchema(t, propSchema)
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([][]byte, 200)
	decoded := make([]map[string]any, len(docs))
	for i := range docs {
		docs[i] = randomDoc(r)
		if err := s.Validate(docs[i]); err != nil {
			t.Fatalf("generated document %s is invalid: %v", docs[i], err)
		}
		decoded[i] = decodeDoc(t, docs[i])
	}
	matched, total := 0, 0
	for range 3000 {
		ms := randomMembers(r, 0)
		var parts []string
		for _, m := range ms {
			parts = append(parts, m.json)
		}
		raw := "{" + strings.Join(parts, ",") + "}"
		ci := r.IntN(2) == 0
		coll := Collation{Case: map[bool]string{true: "ci", false: []string{"", "cs"}[r.IntN(2)]}[ci]}
		f, err := Parse([]byte(raw), s, coll)
		if err != nil {
			t.Fatalf("Parse(%s): %v", raw, err)
		}
		want := allOf(ms)
		for i, doc := range docs {
			got, err := f.Matches(doc)
			if err != nil {
				t.Fatal(err)
			}
			if w := want(decoded[i], ci); got != w {
				t.Fatalf("filter %s (collation %q)\ndocument %s\nMatches = %v, brute force = %v\ntree %s", raw, coll.Case, doc, got, w, show(f.Root))
			}
			if b := bruteTree(f.Root, decoded[i]); b != got {
				t.Fatalf("filter %s on %s: parsed tree evaluates to %v, Matches %v", raw, doc, b, got)
			}
			total++
			if got {
				matched++
			}
		}
	}
	// Guard against a generator that never (or always) matches.
	if matched < total/100 || matched > total*99/100 {
		t.Errorf("%d of %d evaluations matched: the generator is not exercising both outcomes", matched, total)
	}
	t.Logf("%d of %d evaluations matched", matched, total)
}
