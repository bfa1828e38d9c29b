package changelog

import (
	"encoding/binary"
	"errors"

	"github.com/foliodb/folio/internal/keyspace"
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

	// DDL. Key is empty; names and ids say what the change was about.

	CollectionCreated // a collection created; Rev is 1, Data its schema
	SchemaChanged     // a collection's schema changed; Rev is the new revision, Data the schema
	CollectionDropped // a collection dropped with its documents
	DatabaseDropped   // a database dropped; its collections' drops come before it
)

var opNames = [...]string{
	Insert: "insert", Replace: "replace", Update: "update", Delete: "delete", Publish: "publish",
	CollectionCreated: "collection_created", SchemaChanged: "schema_changed",
	CollectionDropped: "collection_dropped", DatabaseDropped: "database_dropped",
}

// IsDocumentChange reports whether o is a change to a document (insert,
// replace, update or delete), as opposed to a message or DDL.
func (o Op) IsDocumentChange() bool { return o >= Insert && o <= Delete }

// IsDDL reports whether o is a change to the catalog.
func (o Op) IsDDL() bool { return o >= CollectionCreated && o <= DatabaseDropped }

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
	Op Op
	// NS is the namespace of the database (keyspace.DefaultNamespace on
	// records written before namespaces).
	NS         int64
	DB         string
	DBID       int64
	Collection string
	CollID     int64
	// Rev is the collection's schema revision: the new one on
	// CollectionCreated and SchemaChanged, the one a document or message
	// was validated against on the others (zero on records written before
	// revisions were logged, and on drops).
	Rev  int64
	Key  []byte // the document's storage key (holds its primary key values)
	Data []byte // the document, message or schema after the change; none on delete or drop
	// Before is the document before the change: on update, on delete and
	// on a replace of a document that existed; none on insert, on a
	// replace that created its document, and on everything else. A
	// filtered stream needs it to tell an update that moves a document
	// out of its filter, and a delete of a document it matched, from
	// changes that never concerned it.
	Before []byte
	// NoBefore is set on document changes decoded from records written
	// before Before was logged (format versions 1 to 3): their Before is
	// unknown, not absent.
	NoBefore bool
	// Expired is set on a delete of a document past its ttl, by the
	// sweeper or by a write over it: the server deleted it, not a client.
	Expired bool
}

// The record format's versions. Version 1 had no Rev, version 2 no NS,
// version 3 no Before, version 4 no flags; Decode still reads them all,
// since data directories written before version 5 hold such records until
// the trimmer removes them, and Encode writes only version 5.
const (
	recordVersion1 = 1
	recordVersion2 = 2
	recordVersion3 = 3
	recordVersion4 = 4
	recordVersion  = 5
)

// The flags of a version 5 record, a byte after Before.
const flagExpired = 1 << 0

// Encode serializes r: a version byte, the op, then the fields, each
// length-prefixed (uvarint) or varint-encoded: NS, DB, DBID, Collection,
// CollID, Rev, Key, Data, Before; then a byte of flags (Expired).
func (r *Record) Encode() []byte {
	b := make([]byte, 0, 48+len(r.DB)+len(r.Collection)+len(r.Key)+len(r.Data)+len(r.Before))
	b = append(b, recordVersion, byte(r.Op))
	b = binary.AppendVarint(b, r.NS)
	b = appendBytes(b, []byte(r.DB))
	b = binary.AppendVarint(b, r.DBID)
	b = appendBytes(b, []byte(r.Collection))
	b = binary.AppendVarint(b, r.CollID)
	b = binary.AppendVarint(b, r.Rev)
	b = appendBytes(b, r.Key)
	b = appendBytes(b, r.Data)
	b = appendBytes(b, r.Before)
	var flags byte
	if r.Expired {
		flags |= flagExpired
	}
	return append(b, flags)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

var errCorrupt = errors.New("changelog: corrupt record")

// Decode parses a record written by Encode, of any version. Key and Data
// alias b.
func Decode(b []byte) (Record, error) {
	var r Record
	if len(b) < 2 || b[0] < recordVersion1 || b[0] > recordVersion {
		return r, errCorrupt
	}
	version := b[0]
	r.Op = Op(b[1])
	d := decoder{b: b[2:]}
	r.NS = keyspace.DefaultNamespace // the only one before version 3
	if version >= 3 {
		r.NS = d.varint()
	}
	r.DB = string(d.bytes())
	r.DBID = d.varint()
	r.Collection = string(d.bytes())
	r.CollID = d.varint()
	if version >= 2 {
		r.Rev = d.varint()
	}
	r.Key = d.bytes()
	r.Data = d.bytes()
	if version > recordVersion3 {
		r.Before = d.bytes()
	} else {
		r.NoBefore = r.Op.IsDocumentChange()
	}
	if version >= recordVersion && !d.err {
		if len(d.b) == 0 || d.b[0]&^flagExpired != 0 {
			return Record{}, errCorrupt
		}
		r.Expired = d.b[0]&flagExpired != 0
		d.b = d.b[1:]
	}
	if d.err || len(d.b) != 0 {
		return Record{}, errCorrupt
	}
	if len(r.Data) == 0 {
		r.Data = nil
	}
	if len(r.Before) == 0 {
		r.Before = nil
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
