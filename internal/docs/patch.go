package docs

import (
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/status"
)

// Documents are kept as the bytes the client sent, so updates patch those
// bytes: a member that exists keeps its place and only its value changes; a
// new member goes at the end of its object. This is what the original
// server did, and clients compare bytes.

// member is one member of an object: its key and where it lies in the text.
type member struct {
	key             string
	start           int // the key's opening quote
	valueStart, end int // the value, and the offset just past it
}

// members lists the members of the object at doc[i] and returns the offset
// of its closing brace.
func members(doc []byte, i int) ([]member, int, error) {
	obj, err := jsonscan.ObjectAt(doc, i)
	if err != nil {
		return nil, 0, err
	}
	var out []member
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
		out = append(out, member{key: name, start: start, valueStart: value, end: end})
		pos = end
	}
}

func find(ms []member, key string) (member, bool) {
	for _, m := range ms {
		if m.key == key {
			return m, true
		}
	}
	return member{}, false
}

// setPath returns doc with the value at the dot path set to value (JSON).
func setPath(doc []byte, path string, value []byte) ([]byte, error) {
	parts := strings.Split(path, ".")
	at := jsonscan.SkipSpace(doc, 0)
	for depth, part := range parts {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return nil, status.Errorf(status.InvalidArgument, "cannot set '%s': '%s' is not an object", path, strings.Join(parts[:depth], "."))
		}
		ms, closing, err := members(doc, at)
		if err != nil {
			return nil, err
		}
		m, ok := find(ms, part)
		if !ok {
			// Build the missing rest of the path as nested objects and
			// append it as the object's last member.
			var add []byte
			if len(ms) > 0 {
				add = append(add, ',')
			}
			add = jsonscan.AppendQuote(add, part)
			add = append(add, ':')
			for _, p := range parts[depth+1:] {
				add = append(add, '{')
				add = jsonscan.AppendQuote(add, p)
				add = append(add, ':')
			}
			add = append(add, value...)
			for range parts[depth+1:] {
				add = append(add, '}')
			}
			return splice(doc, closing, closing, add), nil
		}
		if depth == len(parts)-1 {
			return splice(doc, m.valueStart, m.end, value), nil
		}
		at = m.valueStart
	}
	return doc, nil
}

// unsetPath returns doc without the member at the dot path (doc itself if
// there is none).
func unsetPath(doc []byte, path string) ([]byte, error) {
	parts := strings.Split(path, ".")
	at := jsonscan.SkipSpace(doc, 0)
	for depth, part := range parts {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return doc, nil
		}
		ms, _, err := members(doc, at)
		if err != nil {
			return nil, err
		}
		idx := -1
		for i, m := range ms {
			if m.key == part {
				idx = i
			}
		}
		if idx < 0 {
			return doc, nil
		}
		if depth < len(parts)-1 {
			at = ms[idx].valueStart
			continue
		}
		// Remove the member with one of the commas around it.
		start, end := ms[idx].start, ms[idx].end
		switch {
		case idx > 0:
			start = ms[idx-1].end
		case len(ms) > 1:
			end = ms[1].start
		}
		return splice(doc, start, end, nil), nil
	}
	return doc, nil
}

func splice(doc []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(doc)-(to-from)+len(with))
	out = append(out, doc[:from]...)
	out = append(out, with...)
	return append(out, doc[to:]...)
}

// project returns the document with only the top-level members named in
// include (in the document's own order), or without those in exclude.
func project(doc []byte, include, exclude map[string]bool) ([]byte, error) {
	if len(include) == 0 && len(exclude) == 0 {
		return doc, nil
	}
	ms, _, err := members(doc, jsonscan.SkipSpace(doc, 0))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(doc))
	out = append(out, '{')
	for _, m := range ms {
		if (len(include) > 0 && !include[m.key]) || exclude[m.key] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, doc[m.start:m.end]...)
	}
	return append(out, '}'), nil
}
