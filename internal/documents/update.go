package documents

import (
	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/schema"
)

// MaxUpdateFields bounds the paths of one update's operators together. Each path is patched into a matching document with a pass over
// the document's members (jsondoc.Set), so an update costs its width times
// the document's size: 1,000 paths took 0.8 s on one document of 2,000
// fields, 256 take about 0.2 s, and a $set of 9,999 fields took 13 s before
// there was a bound. Patching every path in one pass would lift this.
const MaxUpdateFields = 256

// update is a parsed update: the fields to set, in the order given, and the
// fields to remove.
type update struct {
	set   []setField
	arith []arithField // arith.go
	unset []string
	push  []pushField // arith.go
}

// width is how many paths the update changes.
func (u *update) width() int { return len(u.set) + len(u.arith) + len(u.unset) + len(u.push) }

type setField struct {
	path  string
	value []byte
}

// parseUpdate reads {"$set": {"path": value, ...}, "$unset": ["path", ...]},
// and the final API's $increment, $decrement, $multiply, $divide and $push
// (arith.go). $unset also takes an object ({"path": ""}), as MongoDB-style
// clients send. They apply in that order: $set, the arithmetic in the
// order given, $unset, $push, as the original applied them.
// Each $set value is validated against its field here, before any document
// is read, so that a bad update is refused even when it matches nothing, as
// the original did; the updated documents are validated again as a whole.
func parseUpdate(s *schema.Schema, fields []byte) (*update, error) {
	start, _, err := jsonscan.Whole(fields)
	if err != nil || jsonscan.KindAt(fields, start) != jsonscan.Object {
		return nil, apierror.Errorf(apierror.InvalidArgument, "fields must be a JSON object with $set or $unset")
	}
	ops, _, err := jsondoc.Members(fields, start)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "fields: %v", err)
	}
	u := &update{}
	for _, op := range ops {
		switch op.Key {
		case "$set":
			if jsonscan.KindAt(fields, op.ValueStart) != jsonscan.Object {
				return nil, apierror.Errorf(apierror.InvalidArgument, "$set takes an object")
			}
			ms, _, err := jsondoc.Members(fields, op.ValueStart)
			if err != nil {
				return nil, apierror.Errorf(apierror.InvalidArgument, "$set: %v", err)
			}
			if u.width()+len(ms) > MaxUpdateFields {
				return nil, tooWide()
			}
			for _, m := range ms {
				if f, ok := s.Field(m.Key); ok && f.PrimaryKey && jsonscan.KindAt(fields, m.ValueStart) == jsonscan.Null {
					return nil, apierror.Errorf(apierror.InvalidArgument, "primary key field can't be set as null")
				}
				value, err := s.ConformValue(m.Key, fields[m.ValueStart:m.End])
				if err != nil {
					return nil, err
				}
				u.set = append(u.set, setField{path: m.Key, value: value})
			}
		case "$unset":
			paths, err := unsetPaths(fields, op)
			if err != nil {
				return nil, err
			}
			u.unset = append(u.unset, paths...)
		case "$push":
			fs, err := parsePush(s, fields, op.ValueStart)
			if err != nil {
				return nil, err
			}
			u.push = append(u.push, fs...)
		default:
			if aop, ok := arithOps[op.Key]; ok {
				fs, err := parseArith(s, op.Key, aop, fields, op.ValueStart)
				if err != nil {
					return nil, err
				}
				u.arith = append(u.arith, fs...)
				break
			}
			return nil, apierror.Errorf(apierror.InvalidArgument, "unsupported update operator '%s'", op.Key)
		}
	}
	if u.width() > MaxUpdateFields {
		return nil, tooWide()
	}
	if u.width() == 0 {
		return nil, apierror.Errorf(apierror.InvalidArgument, "empty fields received")
	}
	for _, path := range u.unset {
		if f, ok := s.Field(path); ok && f.PrimaryKey {
			return nil, apierror.Errorf(apierror.InvalidArgument, "primary key field can't be unset")
		}
	}
	return u, nil
}

func tooWide() error {
	return apierror.Errorf(apierror.InvalidArgument, "update changes more than %d fields", MaxUpdateFields)
}

func unsetPaths(fields []byte, op jsondoc.Member) ([]string, error) {
	var paths []string
	switch jsonscan.KindAt(fields, op.ValueStart) {
	case jsonscan.Object:
		ms, _, err := jsondoc.Members(fields, op.ValueStart)
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "$unset: %v", err)
		}
		for _, m := range ms {
			paths = append(paths, m.Key)
		}
	case jsonscan.Array:
		arr, err := jsonscan.ArrayAt(fields, op.ValueStart)
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "$unset: %v", err)
		}
		for {
			at, ok, err := arr.Next()
			if err != nil {
				return nil, apierror.Errorf(apierror.InvalidArgument, "$unset: %v", err)
			}
			if !ok {
				break
			}
			end, _, err := jsonscan.StringEnd(fields, at)
			if err != nil || jsonscan.KindAt(fields, at) != jsonscan.String {
				return nil, apierror.Errorf(apierror.InvalidArgument, "$unset takes field names")
			}
			paths = append(paths, jsonscan.Unquote(fields[at+1:end-1]))
			arr.Resume(end)
		}
	default:
		return nil, apierror.Errorf(apierror.InvalidArgument, "$unset takes an array of field names")
	}
	return paths, nil
}

// apply returns doc with the update applied; doc itself is not changed.
func (u *update) apply(doc []byte) ([]byte, error) {
	out := doc
	var err error
	for _, f := range u.set {
		if out, err = jsondoc.Set(out, f.path, f.value); err != nil {
			return nil, err
		}
	}
	for _, a := range u.arith {
		if out, err = a.apply(out); err != nil {
			return nil, err
		}
	}
	for _, path := range u.unset {
		if out, err = jsondoc.Unset(out, path); err != nil {
			return nil, err
		}
	}
	for _, p := range u.push {
		if out, err = p.apply(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}
