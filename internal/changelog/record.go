// Package changelog defines what Folio writes into the kv change log: one
// Record per changed document or published message, appended in the same
// transaction as the change, so that the log's commit order is the order of
// the changes and every stream (events, subscriptions, the search indexer)
// is a reader of the log with a position.
package changelog

import (
	"encoding/binary"
	"errors"
)

// Op is what happened to a document.
type Op uint8

// The operations, named as the events stream names them.
const (
	Insert  Op = iota + 1 // a document inserted by insert
	Replace               // a document written by replace (new or not)
	Update                // a document changed by update
	Delete                // a document removed
	Publish               // a message published to a messages collection
)

var opNames = [...]string{Insert: "insert", Replace: "replace", Update: "update", Delete: "delete", Publish: "publish"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "unknown"
}

// Record is one change. Names are kept next to ids: a stream follows a
// collection by name across drops and re-creations, while ids tell the
// incarnations apart.
type Record struct {
	Op         Op
	DB         string
	DBID       int64
	Collection string
	CollID     int64
	Key        []byte // the document's storage key (holds its primary key values)
	Data       []byte // the document or message after the change; none on delete
}

const recordVersion = 1

// Encode serializes r: a version byte, the op, then the fields, each
// length-prefixed (uvarint) or varint-encoded.
func (r *Record) Encode() []byte {
	b := make([]byte, 0, 24+len(r.DB)+len(r.Collection)+len(r.Key)+len(r.Data))
	b = append(b, recordVersion, byte(r.Op))
	b = appendBytes(b, []byte(r.DB))
	b = binary.AppendVarint(b, r.DBID)
	b = appendBytes(b, []byte(r.Collection))
	b = binary.AppendVarint(b, r.CollID)
	b = appendBytes(b, r.Key)
	return appendBytes(b, r.Data)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

var errCorrupt = errors.New("changelog: corrupt record")

// Decode parses a record written by Encode. Key and Data alias b.
func Decode(b []byte) (Record, error) {
	var r Record
	if len(b) < 2 || b[0] != recordVersion {
		return r, errCorrupt
	}
	r.Op = Op(b[1])
	d := decoder{b: b[2:]}
	r.DB = string(d.bytes())
	r.DBID = d.varint()
	r.Collection = string(d.bytes())
	r.CollID = d.varint()
	r.Key = d.bytes()
	r.Data = d.bytes()
	if d.err || len(d.b) != 0 {
		return Record{}, errCorrupt
	}
	if len(r.Data) == 0 {
		r.Data = nil
	}
	return r, nil
}

type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.err = true
		d.b = nil
		return nil
	}
	v := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err = true
		d.b = nil
		return 0
	}
	d.b = d.b[k:]
	return v
}
