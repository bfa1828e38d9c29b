// Package keyspace is the one place where Folio's keys are laid out. Every
// key is a keyenc tuple, so ranges of keys are ranges of values:
//
//	("c", "d", db name)                      → database record (JSON)
//	("c", "c", db id, collection name)       → collection record (JSON)
//	("c", "id")                              → the last id handed out
//	("d", collection id, primary key...)     → document record (see docs)
//	("i", collection id, field path, kind, value, primary key...)
//	                                         → index entry, empty (see index)
//	("s", collection id, "size")             → counter: bytes of documents
//	("s", collection id, "count")            → counter: number of documents
//	("s", collection id, "seq", field)       → counter: last int32 key generated
//	("m", collection id, partition, time, node)
//	                                         → message (see messages)
//
// Data keys carry ids, not names: dropping a collection unlinks its name and
// clears its id's ranges, and a collection created again under the same name
// gets a new id, so it starts empty whatever was left behind.
package keyspace

import (
	"errors"

	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/kv"
)

// The first element of every key: what kind of thing the key holds.
const (
	tagCatalog  = "c"
	tagDocument = "d"
	tagIndex    = "i"
	tagStat     = "s"
	tagMessage  = "m"
)

func pack(t ...any) []byte {
	b, err := keyenc.Pack(t)
	if err != nil {
		// Keys are built from names, ids and validated key values: an
		// unencodable element is a bug in the caller.
		panic("keyspace: " + err.Error())
	}
	return b
}

func prefix(t ...any) kv.Range {
	return kv.PrefixRange(pack(t...))
}

// Database is the key of a database's record.
func Database(name string) []byte { return pack(tagCatalog, "d", name) }

// Databases is the range of every database record.
func Databases() kv.Range { return prefix(tagCatalog, "d") }

// Collection is the key of a collection's record.
func Collection(dbID int64, name string) []byte { return pack(tagCatalog, "c", dbID, name) }

// Collections is the range of every collection record of a database.
func Collections(dbID int64) kv.Range { return prefix(tagCatalog, "c", dbID) }

// LastID is the key of the id counter for databases and collections.
func LastID() []byte { return pack(tagCatalog, "id") }

// Document is the key of a document; pk holds its primary key values in key
// order (int64, float64, string, []byte).
func Document(collID int64, pk []any) ([]byte, error) {
	t := make(keyenc.Tuple, 0, 2+len(pk))
	t = append(t, tagDocument, collID)
	t = append(t, pk...)
	return keyenc.Pack(t)
}

// Documents is the range of every document of a collection.
func Documents(collID int64) kv.Range { return prefix(tagDocument, collID) }

// IndexField is the prefix of the index entries of one field and kind.
func IndexField(collID int64, path string, kind int64) []byte {
	return pack(tagIndex, collID, path, kind)
}

// Indexes is the range of every index entry of a collection.
func Indexes(collID int64) kv.Range { return prefix(tagIndex, collID) }

// Count is the counter of a collection's documents.
func Count(collID int64) []byte { return pack(tagStat, collID, "count") }

// Size is the counter of the bytes of a collection's documents.
func Size(collID int64) []byte { return pack(tagStat, collID, "size") }

// IndexSize is the counter of the bytes of a collection's index entries'
// keys (their values are empty).
func IndexSize(collID int64) []byte { return pack(tagStat, collID, "isize") }

// Sequence is the counter behind an int32 autoGenerate key field.
func Sequence(collID int64, field string) []byte { return pack(tagStat, collID, "seq", field) }

// Stats is the range of every counter of a collection.
func Stats(collID int64) kv.Range { return prefix(tagStat, collID) }

// Message is the key of a message of a messages collection: its partition,
// its publish time in Unix nanoseconds and the publishing node's id. The
// time leads so that a partition's messages are in publish-time order; the
// node id keeps two nodes that publish in the same nanosecond apart. The
// commit position cannot be in the key: it is assigned only at commit,
// after the key is written.
func Message(collID, partition, unixNano, node int64) []byte {
	return pack(tagMessage, collID, partition, unixNano, node)
}

// Messages is the range of every message of a collection, all partitions.
func Messages(collID int64) kv.Range { return prefix(tagMessage, collID) }

// MessagePartition is the range of the messages of one partition.
func MessagePartition(collID, partition int64) kv.Range {
	return prefix(tagMessage, collID, partition)
}

// MessageKey decodes a message key into its partition and publish time.
func MessageKey(key []byte) (partition, unixNano int64, err error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return 0, 0, err
	}
	if len(t) != 5 || t[0] != tagMessage {
		return 0, 0, errors.New("keyspace: not a message key")
	}
	partition, ok1 := t[2].(int64)
	unixNano, ok2 := t[3].(int64)
	if !ok1 || !ok2 {
		return 0, 0, errors.New("keyspace: malformed message key")
	}
	return partition, unixNano, nil
}

// CollectionData is every range that holds a collection's data, for
// clearing when it is dropped.
func CollectionData(collID int64) []kv.Range {
	return []kv.Range{Documents(collID), Indexes(collID), Stats(collID), Messages(collID)}
}

// LastString decodes a key and returns its last element, which must be a
// string (the name in a catalog key).
func LastString(key []byte) (string, error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return "", err
	}
	if len(t) == 0 {
		return "", errors.New("keyspace: empty key")
	}
	s, ok := t[len(t)-1].(string)
	if !ok {
		return "", errors.New("keyspace: key does not end with a name")
	}
	return s, nil
}
