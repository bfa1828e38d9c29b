package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// shape is what a sample's values of one field were: the JSON kinds seen,
// and for objects their fields and for arrays their elements. A schema is
// made from it once the sample is read.
type shape struct {
	kinds    map[string]bool // integer, number, string, boolean, object, array, null
	allDates bool            // every string seen is an RFC 3339 time
	fields   []string        // an object's, in order of first appearance
	props    map[string]*shape
	items    *shape
}

func newShape() *shape {
	return &shape{kinds: map[string]bool{}, allDates: true, props: map[string]*shape{}}
}

// add reads one JSON value from dec into the shape.
func (sh *shape) add(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			sh.kinds["array"] = true
			if sh.items == nil {
				sh.items = newShape()
			}
			for dec.More() {
				if err := sh.items.add(dec); err != nil {
					return err
				}
			}
		} else {
			sh.kinds["object"] = true
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return err
				}
				f := name.(string)
				if sh.props[f] == nil {
					sh.fields = append(sh.fields, f)
					sh.props[f] = newShape()
				}
				if err := sh.props[f].add(dec); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			sh.kinds["number"] = true
		} else {
			sh.kinds["integer"] = true
		}
	case string:
		sh.kinds["string"] = true
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			sh.allDates = false
		}
	case bool:
		sh.kinds["boolean"] = true
	case nil:
		sh.kinds["null"] = true
	}
	return nil
}

// writeSchema writes the shape as a JSON schema of a field named path.
func (sh *shape) writeSchema(b *bytes.Buffer, path string) error {
	var kinds []string
	for k := range sh.kinds {
		if k != "null" {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	if slices.Equal(kinds, []string{"integer", "number"}) {
		kinds = []string{"number"}
	}
	switch {
	case len(kinds) == 0: // only nulls: nothing says what it holds
		b.WriteString(`{"type":"string"}`)
	case len(kinds) > 1:
		return fmt.Errorf("field %s holds %s in the sample: a schema names one type; create the collection with a schema (folio collection create)", path, strings.Join(kinds, " and "))
	case kinds[0] == "string" && sh.allDates:
		b.WriteString(`{"type":"string","format":"date-time"}`)
	case kinds[0] == "object":
		b.WriteString(`{"type":"object","properties":`)
		if err := sh.writeProperties(b, path+".", ""); err != nil {
			return err
		}
		b.WriteString("}")
	case kinds[0] == "array":
		b.WriteString(`{"type":"array","items":`)
		if err := sh.items.writeSchema(b, path+"[]"); err != nil {
			return err
		}
		b.WriteString("}")
	default:
		fmt.Fprintf(b, `{"type":%q}`, kinds[0])
	}
	return nil
}

// writeProperties writes an object's properties; lead, if any, is a
// first property of its own.
func (sh *shape) writeProperties(b *bytes.Buffer, prefix, lead string) error {
	b.WriteString("{" + lead)
	for i, f := range sh.fields {
		if i > 0 || lead != "" {
			b.WriteString(",")
		}
		name, _ := json.Marshal(f)
		b.Write(name)
		b.WriteString(":")
		if err := sh.props[f].writeSchema(b, prefix+f); err != nil {
			return err
		}
	}
	b.WriteString("}")
	return nil
}

// inferSchema makes a collection's schema from a sample of its documents.
// The key is keyField if given; else "id" when every document has one of
// its own, unique in the sample; else a generated uuid "id".
func inferSchema(coll string, sample []json.RawMessage, keyField string) (json.RawMessage, error) {
	root := newShape()
	for _, doc := range sample {
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := root.add(dec); err != nil {
			return nil, err
		}
	}
	key, generated, err := pickKey(root, sample, keyField)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	title, _ := json.Marshal(coll)
	fmt.Fprintf(&b, `{"title":%s,"properties":`, title)
	lead := ""
	if generated {
		lead = `"id":{"type":"string","format":"uuid","autoGenerate":true}`
	}
	if err := root.writeProperties(&b, "", lead); err != nil {
		return nil, usageError{err.Error()}
	}
	keyName, _ := json.Marshal(key)
	fmt.Fprintf(&b, `,"primary_key":[%s]}`, keyName)
	return b.Bytes(), nil
}

// pickKey chooses the key field of an inferred schema, and says whether it
// is generated rather than found in the data.
func pickKey(root *shape, sample []json.RawMessage, keyField string) (string, bool, error) {
	field, given := keyField, keyField != ""
	if !given {
		if root.props["id"] == nil {
			return "id", true, nil
		}
		field = "id"
	}
	if why := notAKey(root, sample, field); why != "" {
		if given {
			return "", false, usagef("--primary-key %s: %s", field, why)
		}
		return "", false, usagef("id cannot be the key: %s; pick the key with --primary-key", why)
	}
	return field, false, nil
}

// notAKey says why field cannot be a key of the sample, or "".
func notAKey(root *shape, sample []json.RawMessage, field string) string {
	sh := root.props[field]
	if sh == nil {
		return "no document of the sample has it"
	}
	if len(sh.kinds) != 1 || !sh.kinds["integer"] && !sh.kinds["string"] {
		return "a key is an integer or a string in every document"
	}
	seen := make(map[string]int, len(sample))
	for i, doc := range sample {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(doc, &fields); err != nil {
			return err.Error()
		}
		v, ok := fields[field]
		if !ok {
			return fmt.Sprintf("document %d of the sample has none", i+1)
		}
		if j, dup := seen[string(v)]; dup {
			return fmt.Sprintf("documents %d and %d of the sample both have %s", j, i+1, v)
		}
		seen[string(v)] = i + 1
	}
	return ""
}

// printSchema shows an inferred schema: indented for a person, else as a
// JSON line {"schema":…}.
func printSchema(w io.Writer, schema json.RawMessage, indented bool, sampled int) error {
	if !indented {
		_, err := fmt.Fprintf(w, "{\"schema\":%s,\"sampled\":%d}\n", schema, sampled)
		return err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, schema, "", "  "); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "schema inferred from %d records:\n%s\n", sampled, b.Bytes())
	return err
}
