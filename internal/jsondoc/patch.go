package jsondoc

import (
	"strings"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsonscan"
)

// Updates patch a document's bytes: a member that exists keeps its place
// and only its value changes; a new member goes at the end of its object.
// This is what the original server did, and clients compare bytes.

// Set returns doc with the value at the dot path set to value (JSON),
// creating the missing objects of the path; doc itself is not changed.
func Set(doc []byte, path string, value []byte) ([]byte, error) {
	parts := strings.Split(path, ".")
	at := jsonscan.SkipSpace(doc, 0)
	for depth, part := range parts {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return nil, apierror.Errorf(apierror.InvalidArgument, "cannot set '%s': '%s' is not an object", path, strings.Join(parts[:depth], "."))
		}
		ms, closing, err := Members(doc, at)
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
			return splice(doc, m.ValueStart, m.End, value), nil
		}
		at = m.ValueStart
	}
	return doc, nil
}

// Unset returns doc without the member at the dot path (doc itself if
// there is none).
func Unset(doc []byte, path string) ([]byte, error) {
	parts := strings.Split(path, ".")
	at := jsonscan.SkipSpace(doc, 0)
	for depth, part := range parts {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return doc, nil
		}
		ms, _, err := Members(doc, at)
		if err != nil {
			return nil, err
		}
		idx := -1
		for i, m := range ms {
			if m.Key == part {
				idx = i
			}
		}
		if idx < 0 {
			return doc, nil
		}
		if depth < len(parts)-1 {
			at = ms[idx].ValueStart
			continue
		}
		// Remove the member with one of the commas around it.
		start, end := ms[idx].Start, ms[idx].End
		switch {
		case idx > 0:
			start = ms[idx-1].End
		case len(ms) > 1:
			end = ms[1].Start
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

// Get returns the value at the dot path in doc (nil if a part of the path
// is missing or not an object); the slice aliases doc.
func Get(doc []byte, path string) ([]byte, error) {
	at := jsonscan.SkipSpace(doc, 0)
	for _, part := range strings.Split(path, ".") {
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return nil, nil
		}
		ms, _, err := Members(doc, at)
		if err != nil {
			return nil, err
		}
		m, ok := find(ms, part)
		if !ok {
			return nil, nil
		}
		at = m.ValueStart
	}
	end, err := jsonscan.End(doc, at)
	if err != nil {
		return nil, err
	}
	return doc[at:end], nil
}
