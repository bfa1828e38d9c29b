package documents

import (
	"math"
	"math/big"
	"strconv"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// The final Tigris API's arithmetic update operators:
//
//	{"$increment": {"n": 1}, "$decrement": {...}, "$multiply": {...}, "$divide": {...}}
//
// As in the original, a document without the field (or with null there)
// keeps it so; on an integer field the operand must be a whole number and
// $divide truncates toward zero. Unlike the original, integers are
// computed exactly as int64 (not through float64), and a result past the
// field's range is a 400 for the whole update rather than a value wrapped
// or rounded.

type arithOp uint8

const (
	opIncrement arithOp = iota + 1
	opDecrement
	opMultiply
	opDivide
)

var arithOps = map[string]arithOp{"$increment": opIncrement, "$decrement": opDecrement, "$multiply": opMultiply, "$divide": opDivide}

var arithNames = [...]string{opIncrement: "$increment", opDecrement: "$decrement", opMultiply: "$multiply", opDivide: "$divide"}

// arithField is one field of an arithmetic operator.
type arithField struct {
	path    string
	op      arithOp
	typ     schema.Type // Int32, Int64 or Number
	integer int64       // the operand, on integer fields
	number  float64     // the operand, on number fields
}

// parseArith reads the members of an arithmetic operator, whose object is
// at fields[at].
func parseArith(s *schema.Schema, name string, op arithOp, fields []byte, at int) ([]arithField, error) {
	if jsonscan.KindAt(fields, at) != jsonscan.Object {
		return nil, apierror.Errorf(apierror.InvalidArgument, "%s takes an object of fields and numbers", name)
	}
	ms, _, err := jsondoc.Members(fields, at)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "%s: %v", name, err)
	}
	out := make([]arithField, 0, len(ms))
	for _, m := range ms {
		f, ok := s.Field(m.Key)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s: field '%s' is not in the schema", name, m.Key)
		}
		val := fields[m.ValueStart:m.End]
		if jsonscan.KindAt(val, 0) != jsonscan.Number {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s' takes a number", name, m.Key)
		}
		a := arithField{path: m.Key, op: op, typ: f.Type}
		switch f.Type {
		case schema.Int32, schema.Int64:
			n, ok := jsonscan.ParseInt(val)
			if !ok {
				// 2.0 or 1e3: whole, read exactly (not through float64,
				// which rounds past 2^53).
				r, isRat := new(big.Rat).SetString(string(val))
				if !isRat || !r.IsInt() || !r.Num().IsInt64() {
					return nil, apierror.Errorf(apierror.InvalidArgument, "floating operations are not allowed on integer field '%s'", m.Key)
				}
				n = r.Num().Int64()
			}
			a.integer = n
			if op == opDivide && n == 0 {
				return nil, apierror.Errorf(apierror.InvalidArgument, "division by 0 is not allowed")
			}
		case schema.Number:
			x, err := strconv.ParseFloat(string(val), 64)
			if err != nil {
				return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s': %v", name, m.Key, err)
			}
			a.number = x
			if op == opDivide && x == 0 {
				return nil, apierror.Errorf(apierror.InvalidArgument, "division by 0 is not allowed")
			}
		default:
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s applies to integer and number fields, and '%s' is not one", name, m.Key)
		}
		out = append(out, a)
	}
	return out, nil
}

// apply returns doc with the operator applied to its field.
func (a arithField) apply(doc []byte) ([]byte, error) {
	cur, err := jsondoc.Get(doc, a.path)
	if err != nil {
		return nil, err
	}
	if cur == nil || jsonscan.KindAt(cur, 0) == jsonscan.Null {
		return doc, nil
	}
	var out []byte
	switch a.typ {
	case schema.Int32, schema.Int64:
		n, ok := jsonscan.ParseInt(cur)
		if !ok {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s': the stored value %s is not an integer", arithNames[a.op], a.path, cur)
		}
		r, ok := a.integerResult(n)
		if !ok || a.typ == schema.Int32 && (r < math.MinInt32 || r > math.MaxInt32) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s' overflows the field: %d %s %d", arithNames[a.op], a.path, n, arithSymbol[a.op], a.integer)
		}
		out = strconv.AppendInt(nil, r, 10)
	case schema.Number:
		x, err := strconv.ParseFloat(string(cur), 64)
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s': the stored value %s is not a number", arithNames[a.op], a.path, cur)
		}
		r := a.numberResult(x)
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "%s of '%s' overflows the field: %v %s %v", arithNames[a.op], a.path, x, arithSymbol[a.op], a.number)
		}
		out = strconv.AppendFloat(nil, r, 'g', -1, 64)
	}
	return jsondoc.Set(doc, a.path, out)
}

var arithSymbol = [...]string{opIncrement: "+", opDecrement: "-", opMultiply: "*", opDivide: "/"}

// integerResult is n op the operand, and false on overflow.
func (a arithField) integerResult(n int64) (int64, bool) {
	m := a.integer
	switch a.op {
	case opIncrement:
		r := n + m
		return r, (r > n) == (m > 0) || m == 0
	case opDecrement:
		r := n - m
		return r, (r < n) == (m > 0) || m == 0
	case opMultiply:
		r := n * m
		overflow := n != 0 && (r/n != m || n == -1 && m == math.MinInt64 || m == -1 && n == math.MinInt64)
		return r, !overflow
	case opDivide:
		if n == math.MinInt64 && m == -1 {
			return 0, false
		}
		return n / m, true
	}
	return 0, false
}

func (a arithField) numberResult(x float64) float64 {
	switch a.op {
	case opIncrement:
		return x + a.number
	case opDecrement:
		return x - a.number
	case opMultiply:
		return x * a.number
	case opDivide:
		return x / a.number
	}
	return math.NaN()
}

// pushField is one field of $push: {"$push": {"tags": "x"}} appends "x" to
// the array tags (making [x] where there is none).
type pushField struct {
	path  string
	value []byte
}

// parsePush reads $push's object at fields[at].
func parsePush(s *schema.Schema, fields []byte, at int) ([]pushField, error) {
	if jsonscan.KindAt(fields, at) != jsonscan.Object {
		return nil, apierror.Errorf(apierror.InvalidArgument, "$push takes an object of fields and values")
	}
	ms, _, err := jsondoc.Members(fields, at)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "$push: %v", err)
	}
	out := make([]pushField, 0, len(ms))
	for _, m := range ms {
		f, ok := s.Field(m.Key)
		if !ok || f.Type != schema.Array {
			return nil, apierror.Errorf(apierror.InvalidArgument, "$push applies to array fields, and '%s' is not one", m.Key)
		}
		// Validate (and conform, e.g. a 64-bit integer sent as a string)
		// the value as the one element of an array of the field.
		one := append(append([]byte{'['}, fields[m.ValueStart:m.End]...), ']')
		conformed, err := s.ConformValue(m.Key, one)
		if err != nil {
			return nil, err
		}
		out = append(out, pushField{path: m.Key, value: conformed[1 : len(conformed)-1]})
	}
	return out, nil
}

// apply returns doc with the value appended to the field's array.
func (p pushField) apply(doc []byte) ([]byte, error) {
	cur, err := jsondoc.Get(doc, p.path)
	if err != nil {
		return nil, err
	}
	var arr []byte
	switch {
	case cur == nil || jsonscan.KindAt(cur, 0) == jsonscan.Null:
		arr = append(append([]byte{'['}, p.value...), ']')
	case jsonscan.KindAt(cur, 0) != jsonscan.Array:
		return nil, apierror.Errorf(apierror.InvalidArgument, "$push: '%s' is not an array in the document", p.path)
	default:
		body := cur[1 : len(cur)-1]
		arr = append(arr, '[')
		if jsonscan.SkipSpace(body, 0) < len(body) {
			arr = append(append(arr, body...), ',')
		}
		arr = append(append(arr, p.value...), ']')
	}
	return jsondoc.Set(doc, p.path, arr)
}
