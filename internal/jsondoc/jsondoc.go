// Package jsondoc works on JSON documents as the bytes a client sent:
// listing an object's members, projecting top-level fields and patching
// members in place. Folio stores documents and messages as those bytes, and
// clients compare bytes, so nothing here re-encodes what it does not change.
package jsondoc

import "github.com/foliodb/folio/internal/jsonscan"

// Member is one member of an object: its key and where it lies in the text.
type Member struct {
	Key        string
	Start      int // the key's opening quote
	ValueStart int // the value
	End        int // the offset just past the value
}

// Members lists the members of the object at doc[i] and returns the offset
// of its closing brace.
func Members(doc []byte, i int) ([]Member, int, error) {
	obj, err := jsonscan.ObjectAt(doc, i)
	if err != nil {
		return nil, 0, err
	}
	var out []Member
	pos := i + 1 // just past '{' or past the previous value
	for {
		key, escaped, value, ok, err := obj.Next()
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			return out, obj.End() - 1, nil
		}
		start := jsonscan.SkipSpace(doc, pos)
		if doc[start] == ',' {
			start = jsonscan.SkipSpace(doc, start+1)
		}
		name := string(key)
		if escaped {
			name = jsonscan.Unquote(key)
		}
		end, err := jsonscan.End(doc, value)
		if err != nil {
			return nil, 0, err
		}
		obj.Resume(end)
		out = append(out, Member{Key: name, Start: start, ValueStart: value, End: end})
		pos = end
	}
}

func find(ms []Member, key string) (Member, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m, true
		}
	}
	return Member{}, false
}
