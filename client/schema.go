package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SchemaOf makes the JSON schema of a collection named name from the Go
// struct T: each exported field is a property named by its `json` tag (or
// its Go name), in the struct's order, of the type its Go type maps to
// (ints: integer, int32 with format int32; floats: number; bool: boolean;
// string: string; []byte: string of format byte; time.Time: string of
// format date-time; slices: array; structs: object; maps: an object with
// any members). The `tigris` tag, as the official clients and Folio's
// generated model types write it, marks the key and generated values:
//
//	ID   int64  `json:"id" tigris:"primaryKey:1,autoGenerate"`
//	Name string `json:"name"`
//
// `json:"-"` or `tigris:"-"` leaves a field out; the fields of an embedded
// struct are the outer struct's. Without a key the server adds a generated
// uuid "id" (docs/api.md "Schemas").
func SchemaOf[T any](name string) ([]byte, error) {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema of %s: %s is not a struct", name, t)
	}
	var keys []keyPart
	props, err := structProperties(t, "", &keys, 0)
	if err != nil {
		return nil, fmt.Errorf("schema of %s from %s: %w", name, t, err)
	}
	var b bytes.Buffer
	b.WriteString(`{"title":`)
	writeJSON(&b, name)
	b.WriteString(`,"properties":`)
	b.Write(props)
	if len(keys) > 0 {
		slices.SortStableFunc(keys, func(a, b keyPart) int { return a.order - b.order })
		names := make([]string, len(keys))
		for i, k := range keys {
			if i > 0 && k.order == keys[i-1].order {
				return nil, fmt.Errorf("schema of %s: fields %s and %s are both primaryKey:%d", name, keys[i-1].field, k.field, k.order)
			}
			names[i] = k.field
		}
		b.WriteString(`,"primary_key":`)
		writeJSON(&b, names)
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// keyPart is a field of the primary key and its place in it.
type keyPart struct {
	field string
	order int
}

// maxSchemaDepth stops a struct that contains itself.
const maxSchemaDepth = 16

// structProperties writes the "properties" object of struct t, in field
// order. Key fields are collected in keys only at the top level (prefix
// "").
func structProperties(t reflect.Type, prefix string, keys *[]keyPart, depth int) ([]byte, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s nests more than %d levels (a struct that contains itself?)", t, maxSchemaDepth)
	}
	var b bytes.Buffer
	b.WriteString("{")
	n := 0
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for f := range t.Fields() {
			name, skip := jsonName(f)
			tag := f.Tag.Get("tigris")
			if skip || tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && ft.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
				if err := walk(ft); err != nil {
					return err
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			prop, err := property(ft, prefix+name, depth)
			if err != nil {
				return err
			}
			key, auto, err := parseTigrisTag(tag)
			if err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			if key > 0 {
				if prefix != "" {
					return fmt.Errorf("field %s%s: a primary key field must be at the top level", prefix, name)
				}
				*keys = append(*keys, keyPart{field: name, order: key})
			}
			if auto {
				prop = append(prop[:len(prop)-1], `,"autoGenerate":true}`...)
			}
			if n > 0 {
				b.WriteString(",")
			}
			n++
			writeJSON(&b, name)
			b.WriteString(":")
			b.Write(prop)
		}
		return nil
	}
	if err := walk(t); err != nil {
		return nil, err
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
)

// property is the schema of one field of Go type t.
func property(t reflect.Type, path string, depth int) ([]byte, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return []byte(`{"type":"string","format":"date-time"}`), nil
	case t == rawMessageType:
		return nil, fmt.Errorf("field %s: json.RawMessage has no schema type: use a struct or a map", path)
	}
	switch t.Kind() {
	case reflect.Bool:
		return []byte(`{"type":"boolean"}`), nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return []byte(`{"type":"integer","format":"int32"}`), nil
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return []byte(`{"type":"integer"}`), nil
	case reflect.Uint, reflect.Uint64:
		return nil, fmt.Errorf("field %s: unsigned 64-bit integers do not fit the schema's int64", path)
	case reflect.Float32, reflect.Float64:
		return []byte(`{"type":"number"}`), nil
	case reflect.String:
		return []byte(`{"type":"string"}`), nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return []byte(`{"type":"string","format":"byte"}`), nil
		}
		items, err := property(t.Elem(), path+"[]", depth+1)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"type":"array","items":`), items...), '}'), nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("field %s: a map's keys must be strings", path)
		}
		return []byte(`{"type":"object"}`), nil
	case reflect.Struct:
		props, err := structProperties(t, path+".", nil, depth+1)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"type":"object","properties":`), props...), '}'), nil
	case reflect.Interface:
		return nil, fmt.Errorf("field %s: an interface has no schema type", path)
	}
	return nil, fmt.Errorf("field %s: %s has no schema type", path, t)
}

// jsonName is the name encoding/json gives a field, and whether it leaves
// it out.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, false
	}
	return f.Name, false
}

// parseTigrisTag reads `tigris:"primaryKey:N,autoGenerate"` (also in
// snake case, as the official Go client accepts it): the key order (0 if
// not a key field) and whether the server generates the value.
func parseTigrisTag(tag string) (key int, auto bool, err error) {
	if tag == "" {
		return 0, false, nil
	}
	for part := range strings.SplitSeq(tag, ",") {
		name, arg, hasArg := strings.Cut(strings.TrimSpace(part), ":")
		switch name {
		case "primaryKey", "primary_key":
			key = 1
			if hasArg {
				if key, err = strconv.Atoi(arg); err != nil || key < 1 {
					return 0, false, fmt.Errorf("tigris tag %q: the key's order must be a number from 1", tag)
				}
			}
		case "autoGenerate", "auto_generate":
			auto = true
		default:
			return 0, false, fmt.Errorf("tigris tag %q: unknown %q (want primaryKey:N, autoGenerate or -)", tag, part)
		}
	}
	return key, auto, nil
}

func writeJSON(b *bytes.Buffer, v any) {
	enc, _ := json.Marshal(v)
	b.Write(enc)
}
