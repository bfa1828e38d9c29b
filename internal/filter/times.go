package filter

import (
	"bytes"
	"time"

	"github.com/foliodb/folio/internal/jsonscan"
)

// The documents' times as fields, as in the final Tigris server:
// {"_tigris_created_at":{"$gt":"2023-01-01T00:00:00Z"}} compares the time a
// document was created (or last updated: _tigris_updated_at), which Folio
// keeps in the document's record, beside its JSON, and a read returns in
// its metadata. No index holds them, so they are checked on each
// candidate document, and the filter's other conditions choose the plan.

// The names of the documents' times in filters.
const (
	CreatedAtField = "_tigris_created_at"
	UpdatedAtField = "_tigris_updated_at"
)

// Time compares a document's creation or update time with Value. A
// document never updated has no update time and matches no comparison of
// it.
type Time struct {
	Path string // CreatedAtField or UpdatedAtField
	Op   Op
	// Value is the filter's value as written. When it is an RFC 3339 time,
	// the instants are compared (at); otherwise, as the original compared
	// date-times, its text with the time's RFC 3339 text (UTC, nanoseconds
	// without trailing zeros), byte by byte.
	Value string

	at     time.Time
	isTime bool
}

func (*Time) node() {}

// Times are a document's times, for Matches; zero when it has none.
type Times struct {
	Created, Updated time.Time
}

// timeField parses the conditions on a document's time: a value, or an
// object of the comparisons, $in and $ne.
func (p *parser) timeField(path string, v int) ([]Node, error) {
	if jsonscan.KindAt(p.raw, v) != jsonscan.Object {
		n, err := p.timeValue(path, Eq, v)
		if err != nil {
			return nil, err
		}
		return []Node{n}, nil
	}
	ops, _, err := p.operators(path, v)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for _, op := range ops {
		switch {
		case op.op != 0:
			n, err := p.timeValue(path, op.op, op.at)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
		case op.name == "$ne":
			n, err := p.timeValue(path, Eq, op.at)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, &Not{Node: n})
		case op.name == "$in":
			n, err := p.anyOf(path, op.at, func(v int) (Node, error) { return p.timeValue(path, Eq, v) })
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, n)
		default:
			return nil, invalidf("%s does not apply to '%s', the document's time: compare it ($eq, $gt, $gte, $lt, $lte, $in, $ne)", op.name, path)
		}
	}
	return nodes, nil
}

// timeValue reads the string at raw[at] compared by op with a document's
// time.
func (p *parser) timeValue(path string, op Op, at int) (*Time, error) {
	end, _ := jsonscan.End(p.raw, at)
	if jsonscan.KindAt(p.raw, at) != jsonscan.String {
		return nil, invalidf("%s: field '%s' takes a date-time string, not %s", errValueType, path, shown(p.raw[at:end]))
	}
	if err := p.count(); err != nil {
		return nil, err
	}
	t := &Time{Path: path, Op: op, Value: unquote(p.raw[at+1:end-1], true)}
	if parsed, err := time.Parse(time.RFC3339Nano, t.Value); err == nil {
		t.at, t.isTime = parsed, true
	}
	return t, nil
}

// holds reports whether the comparison holds for the document's times.
func (t *Time) holds(ts *Times) bool {
	at := ts.Created
	if t.Path == UpdatedAtField {
		at = ts.Updated
	}
	if at.IsZero() {
		return false
	}
	if t.isTime {
		return t.Op.holds(at.Compare(t.at))
	}
	var buf [40]byte
	text := at.UTC().AppendFormat(buf[:0], time.RFC3339Nano)
	return t.Op.holds(bytes.Compare(text, []byte(t.Value)))
}
