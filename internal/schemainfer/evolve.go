package schemainfer

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/foliodb/folio/internal/jsonscan"
)

// Evolve returns a collection's schema (its stored JSON) with the fields
// of docs that it lacks added, inferred as Infer would, at the top level
// and inside objects that have properties; added tells whether it added
// any. Fields the schema has keep their definitions: a value of another
// type stays the writer's error, as a schema change of a field's type is
// not an evolution a write may make silently.
func Evolve(existing json.RawMessage, docs []json.RawMessage) (_ json.RawMessage, added bool, err error) {
	root, err := shapeOf(docs)
	if err != nil {
		return nil, false, err
	}
	names, top, err := members(existing)
	if err != nil {
		return nil, false, fmt.Errorf("schemainfer: the stored schema: %w", err)
	}
	props, added, err := mergeProperties(top["properties"], root, "")
	if err != nil || !added {
		return existing, false, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(n)
		b.Write(name)
		b.WriteByte(':')
		if n == "properties" {
			b.Write(props)
		} else {
			b.Write(top[n])
		}
	}
	b.WriteByte('}')
	return b.Bytes(), true, nil
}

// mergeProperties adds to a properties object the fields of sh it lacks.
func mergeProperties(raw json.RawMessage, sh *shape, prefix string) (json.RawMessage, bool, error) {
	names, defs, err := members(raw)
	if err != nil {
		return nil, false, err
	}
	added := false
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(name string, def []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		n, _ := json.Marshal(name)
		b.Write(n)
		b.WriteByte(':')
		b.Write(def)
	}
	for _, n := range names {
		def := defs[n]
		if sub := sh.props[n]; sub != nil && sub.kinds["object"] {
			merged, more, err := mergeObject(def, sub, prefix+n)
			if err != nil {
				return nil, false, err
			}
			def, added = merged, added || more
		}
		write(n, def)
	}
	for _, f := range sh.fields {
		if _, ok := defs[f]; ok {
			continue
		}
		var def bytes.Buffer
		if err := sh.props[f].writeSchema(&def, prefix+f, false); err != nil {
			return nil, false, err
		}
		write(f, def.Bytes())
		added = true
	}
	b.WriteByte('}')
	return b.Bytes(), added, nil
}

// mergeObject adds new fields to the definition of an object field that
// has properties; other definitions come back as they are.
func mergeObject(def json.RawMessage, sh *shape, path string) (json.RawMessage, bool, error) {
	names, members, err := members(def)
	if err != nil {
		return nil, false, err
	}
	var typ string
	_ = json.Unmarshal(members["type"], &typ)
	if typ != "object" || members["properties"] == nil {
		return def, false, nil
	}
	props, added, err := mergeProperties(members["properties"], sh, path+".")
	if err != nil || !added {
		return def, false, err
	}
	members["properties"] = props
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(n)
		b.Write(name)
		b.WriteByte(':')
		b.Write(members[n])
	}
	b.WriteByte('}')
	return b.Bytes(), true, nil
}

// members reads a JSON object's members, keeping their order (a schema's
// order is its fields' order).
func members(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if jsonscan.KindAt(raw, jsonscan.SkipSpace(raw, 0)) != jsonscan.Object {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	return jsonscan.Members[json.RawMessage](raw)
}
