package client

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// The gRPC transport translates between the JSON bodies the calls build
// (the HTTP API's) and protobuf, guided by a message's shape: its fields'
// numbers, JSON names and kinds. Only what the API's messages use is
// here, so the client needs no protobuf library (it imports the standard
// library only). The shapes themselves are generated (shapes_gen.go) from
// Folio's definitions of the wire, api/proto, by internal/shapegen.

//go:generate go run ./internal/shapegen -o shapes_gen.go

// kind is how a field is encoded, and how it reads in JSON.
type kind int

const (
	kString  kind = iota // string
	kBytes               // bytes; a base64 string in JSON, as protobuf's JSON has it
	kJSON                // bytes holding JSON (documents, filters, schemas), as they are in JSON
	kInt                 // int32 or int64 (varint)
	kBool                // bool (varint)
	kDouble              // double (fixed64)
	kTime                // google.protobuf.Timestamp; an RFC 3339 string in JSON
	kMessage             // a message of shape sub
	kMap                 // map<string, …> of entries of shape sub; an object in JSON
)

type field struct {
	num      uint64
	name     string
	kind     kind
	repeated bool
	sub      *shape
}

// shape is a message's fields; name is its protobuf name.
type shape struct {
	name   string
	fields []field
}

func msg(name string, fields ...field) *shape { return &shape{name: name, fields: fields} }

func str(num uint64, name string) field     { return field{num: num, name: name, kind: kString} }
func bin(num uint64, name string) field     { return field{num: num, name: name, kind: kBytes} }
func raw(num uint64, name string) field     { return field{num: num, name: name, kind: kJSON} }
func integer(num uint64, name string) field { return field{num: num, name: name, kind: kInt} }
func boolean(num uint64, name string) field { return field{num: num, name: name, kind: kBool} }
func double(num uint64, name string) field  { return field{num: num, name: name, kind: kDouble} }
func stamp(num uint64, name string) field   { return field{num: num, name: name, kind: kTime} }
func sub(num uint64, name string, s *shape) field {
	return field{num: num, name: name, kind: kMessage, sub: s}
}
func mapOf(num uint64, name string, entry *shape) field {
	return field{num: num, name: name, kind: kMap, sub: entry}
}
func rep(f field) field { f.repeated = true; return f }

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// encode writes the JSON object body (nil: {}) as a message of shape s,
// with the string members of params (path parameters: db, collection)
// added. A member s has no field for is an error: the gRPC API cannot
// carry what the call asked.
func (s *shape) encode(body []byte, params map[string]string) ([]byte, error) {
	members := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &members); err != nil {
			return nil, err
		}
	}
	for k, v := range params {
		members[k], _ = json.Marshal(v)
	}
	var out []byte
	for _, f := range s.fields {
		v, ok := members[f.name]
		if !ok {
			continue
		}
		delete(members, f.name)
		if isNull(v) {
			continue
		}
		values := []json.RawMessage{v}
		if f.repeated {
			values = nil
			if err := json.Unmarshal(v, &values); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
		for _, v := range values {
			var err error
			if out, err = f.append(out, v); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	for name := range members {
		return nil, fmt.Errorf("the gRPC API has no member %q here", name)
	}
	return out, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// append writes one value of f, given as JSON.
func (f field) append(out []byte, v json.RawMessage) ([]byte, error) {
	switch f.kind {
	case kString, kBytes:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		b := []byte(s)
		if f.kind == kBytes {
			var err error
			if b, err = base64.StdEncoding.DecodeString(s); err != nil {
				return nil, err
			}
		}
		return appendBytes(out, f.num, b), nil
	case kJSON:
		return appendBytes(out, f.num, v), nil
	case kInt, kBool:
		var n int64
		switch string(bytes.TrimSpace(v)) {
		case "true":
			n = 1
		case "false":
		default:
			if err := json.Unmarshal(v, &n); err != nil {
				return nil, err
			}
		}
		return binary.AppendUvarint(appendTag(out, f.num, wireVarint), uint64(n)), nil
	case kDouble:
		var x float64
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint64(appendTag(out, f.num, wireFixed64), math.Float64bits(x)), nil
	case kMessage:
		b, err := f.sub.encode(v, nil)
		if err != nil {
			return nil, err
		}
		return appendBytes(out, f.num, b), nil
	}
	return nil, fmt.Errorf("cannot encode a field of kind %d", f.kind)
}

func appendTag(out []byte, num uint64, wire int) []byte {
	return binary.AppendUvarint(out, num<<3|uint64(wire))
}

func appendBytes(out []byte, num uint64, b []byte) []byte {
	out = binary.AppendUvarint(appendTag(out, num, wireBytes), uint64(len(b)))
	return append(out, b...)
}

var errTruncated = errors.New("a truncated protobuf message")

// decode reads a message of shape s as the JSON object the HTTP API
// answers: members in field order, unset fields left out (but for
// repeated fields and maps: [] and {}, as HTTP has those it answers),
// fields s does not name skipped.
func (s *shape) decode(b []byte) (json.RawMessage, error) {
	values := make([][]json.RawMessage, len(s.fields))
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errTruncated
		}
		b = b[n:]
		num, wire := tag>>3, int(tag&7)
		var val []byte // the value's bytes (length-delimited) or its varint/fixed bits
		var bits uint64
		switch wire {
		case wireVarint:
			if bits, n = binary.Uvarint(b); n <= 0 {
				return nil, errTruncated
			}
		case wireFixed64:
			if n = 8; len(b) < n {
				return nil, errTruncated
			}
			bits = binary.LittleEndian.Uint64(b)
		case wireFixed32:
			if n = 4; len(b) < n {
				return nil, errTruncated
			}
			bits = uint64(binary.LittleEndian.Uint32(b))
		case wireBytes:
			l, m := binary.Uvarint(b)
			if m <= 0 || uint64(len(b)-m) < l {
				return nil, errTruncated
			}
			val, n = b[m:m+int(l)], m+int(l)
		default:
			return nil, fmt.Errorf("protobuf wire type %d is not supported", wire)
		}
		b = b[n:]
		i := s.index(num)
		if i < 0 {
			continue
		}
		v, err := s.fields[i].value(val, bits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.fields[i].name, err)
		}
		if s.fields[i].repeated || s.fields[i].kind == kMap {
			values[i] = append(values[i], v)
		} else {
			values[i] = []json.RawMessage{v}
		}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, f := range s.fields {
		if len(values[i]) == 0 && !f.repeated && f.kind != kMap {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		writeJSON(&out, f.name)
		out.WriteByte(':')
		switch {
		case f.kind == kMap:
			// Each entry decoded as {"key":…,"value":…}: merged into one object.
			out.WriteByte('{')
			for j, e := range values[i] {
				var entry struct {
					Key   string          `json:"key"`
					Value json.RawMessage `json:"value"`
				}
				if err := json.Unmarshal(e, &entry); err != nil {
					return nil, err
				}
				if j > 0 {
					out.WriteByte(',')
				}
				writeJSON(&out, entry.Key)
				out.WriteByte(':')
				if entry.Value == nil {
					entry.Value = f.sub.zero("value")
				}
				out.Write(entry.Value)
			}
			out.WriteByte('}')
		case f.repeated:
			out.WriteByte('[')
			for j, v := range values[i] {
				if j > 0 {
					out.WriteByte(',')
				}
				out.Write(v)
			}
			out.WriteByte(']')
		default:
			out.Write(values[i][0])
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func (s *shape) index(num uint64) int {
	for i, f := range s.fields {
		if f.num == num {
			return i
		}
	}
	return -1
}

// zero is the JSON of the field named name when the message lacks it, as
// protobuf reads an unset field: a map entry without its value.
func (s *shape) zero(name string) json.RawMessage {
	i := slices.IndexFunc(s.fields, func(f field) bool { return f.name == name })
	if i < 0 {
		return json.RawMessage("null")
	}
	switch s.fields[i].kind {
	case kString, kBytes:
		return json.RawMessage(`""`)
	case kInt, kDouble:
		return json.RawMessage("0")
	case kBool:
		return json.RawMessage("false")
	case kMessage, kMap:
		return json.RawMessage("{}")
	}
	return json.RawMessage("null")
}

// value is one value of f as JSON, from its bytes or bits.
func (f field) value(val []byte, bits uint64) (json.RawMessage, error) {
	switch f.kind {
	case kString:
		return json.Marshal(string(val))
	case kBytes:
		return json.Marshal(base64.StdEncoding.EncodeToString(val))
	case kJSON:
		if len(val) == 0 {
			return json.RawMessage("null"), nil
		}
		return bytes.Clone(val), nil
	case kInt:
		return json.RawMessage(strconv.FormatInt(int64(bits), 10)), nil
	case kBool:
		return json.RawMessage(strconv.FormatBool(bits != 0)), nil
	case kDouble:
		return json.Marshal(math.Float64frombits(bits))
	case kTime:
		ts, err := shapeTimestamp.decode(val)
		if err != nil {
			return nil, err
		}
		var t struct {
			Seconds int64 `json:"seconds"`
			Nanos   int64 `json:"nanos"`
		}
		if err := json.Unmarshal(ts, &t); err != nil {
			return nil, err
		}
		return json.Marshal(time.Unix(t.Seconds, t.Nanos).UTC().Format(time.RFC3339Nano))
	case kMessage:
		return f.sub.decode(val)
	case kMap:
		return f.sub.decode(val)
	}
	return nil, fmt.Errorf("cannot decode a field of kind %d", f.kind)
}
