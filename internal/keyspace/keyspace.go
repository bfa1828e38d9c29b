// Package keyspace is the one place where Folio's keys are laid out. Every
// key is a keyenc tuple, so ranges of keys are ranges of values:
//
//	("c", "d", namespace id, db name)        → database record (JSON)
//	("c", "c", db id, collection name)       → collection record (JSON)
//	("c", "x", db id, search index name)     → search index record (JSON, as a
//	                                           collection's; see catalog)
//	("c", "id")                              → the last id handed out
//	("c", "v", collection id, version)       → a schema the collection had at
//	                                           that schema version (see catalog)
//	("d", collection id, primary key...)     → document record (see docs)
//	("i", collection id, field path, kind, value, primary key...)
//	                                         → index entry, empty (see index)
//	("s", collection id, "size")             → counter: bytes of documents
//	("s", collection id, "count")            → counter: number of documents
//	("s", collection id, "seq", field)       → counter: last int32 key generated
//	("m", collection id, partition, time, node)
//	                                         → message (see messages)
//	("a", "ns", namespace name)              → namespace record (see auth)
//	("a", "nsid", namespace id)              → the name of the namespace holding that id
//	("a", "app", application id)             → application record
//	("a", "key", key id)                     → token signing key
//	("n", node id)                           → a node's registration (see cluster)
//	("t", namespace id, "ns", key)           → namespace metadata: a JSON value (see tenant)
//	("t", namespace id, "app", app id, key)  → an application's (user) metadata
//	("t", namespace id, "quota")             → the namespace's quotas (see tenant)
//	("k", "r", db id, cache name)            → cache record (JSON, see cache)
//	("k", "e", db id, cache name, key)       → cache entry: expiry and value
//	("k", "x", expiry ms, db id, cache name, key)
//	                                         → expiry index entry, empty: what
//	                                           the cache's sweep reclaims
//
// Databases belong to a namespace (a tenant): only their records carry the
// namespace's id, since everything below a database is keyed by ids that
// are unique across namespaces. Data directories written before namespaces
// existed hold database records without one ("c", "d", db name); the
// catalog moves them into DefaultNamespace when a node starts.
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
	tagAuth     = "a"
	tagNode     = "n"
	tagTenant   = "t"
	tagCache    = "k"
)

// DefaultNamespace is the id of the namespace every database belongs to
// when authentication is off, and the one that held every database before
// there were namespaces.
const DefaultNamespace int64 = 1

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

// Database is the key of a database's record in namespace ns.
func Database(ns int64, name string) []byte { return pack(tagCatalog, "d", ns, name) }

// Databases is the range of every database record of namespace ns.
func Databases(ns int64) kv.Range { return prefix(tagCatalog, "d", ns) }

// AllDatabases is the range of every database record of every namespace
// (and of the records written before namespaces, see LegacyDatabase).
func AllDatabases() kv.Range { return prefix(tagCatalog, "d") }

// DatabaseKey decodes a database record's key into its namespace and
// name. A record written before namespaces (("c", "d", name)) has
// legacy set and ns zero.
func DatabaseKey(key []byte) (ns int64, name string, legacy bool, err error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return 0, "", false, err
	}
	switch {
	case len(t) == 3 && t[0] == tagCatalog && t[1] == "d":
		if name, ok := t[2].(string); ok {
			return 0, name, true, nil
		}
	case len(t) == 4 && t[0] == tagCatalog && t[1] == "d":
		ns, ok1 := t[2].(int64)
		name, ok2 := t[3].(string)
		if ok1 && ok2 {
			return ns, name, false, nil
		}
	}
	return 0, "", false, errors.New("keyspace: not a database key")
}

// Collection is the key of a collection's record.
func Collection(dbID int64, name string) []byte { return pack(tagCatalog, "c", dbID, name) }

// Collections is the range of every collection record of a database.
func Collections(dbID int64) kv.Range { return prefix(tagCatalog, "c", dbID) }

// SearchIndex is the key of a search index's record: a catalog entity of
// its own kind, whose names are apart from the collections' and which no
// collection call reaches. Its documents are keyed by its id as a
// collection's are (Document and the other data keys).
func SearchIndex(dbID int64, name string) []byte { return pack(tagCatalog, "x", dbID, name) }

// SearchIndexes is the range of every search index record of a database.
func SearchIndexes(dbID int64) kv.Range { return prefix(tagCatalog, "x", dbID) }

// SchemaVersion is the key of the schema a collection had at a schema
// version, kept when a later version replaced it.
func SchemaVersion(collID, version int64) []byte { return pack(tagCatalog, "v", collID, version) }

// SchemaVersions is the range of a collection's kept schemas, in version
// order.
func SchemaVersions(collID int64) kv.Range { return prefix(tagCatalog, "v", collID) }

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

// DocumentKey decodes the key of a document of collection collID (a read's
// resume token) into its primary key values, with Unpack's types. It fails
// for anything else: another collection's key, or bytes that are no key.
func DocumentKey(collID int64, key []byte) ([]any, error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return nil, err
	}
	if len(t) < 3 || t[0] != tagDocument || t[1] != collID {
		return nil, errors.New("keyspace: not a document key of the collection")
	}
	return t[2:], nil
}

// Documents is the range of every document of a collection.
func Documents(collID int64) kv.Range { return prefix(tagDocument, collID) }

// IndexField is the prefix of the index entries of one field and kind.
func IndexField(collID int64, path string, kind int64) []byte {
	return AppendIndexField(make([]byte, 0, 24+len(path)), collID, path, kind)
}

// AppendIndexField appends IndexField(collID, path, kind) to dst. It
// writes the elements as pack would, without boxing them: an insert builds
// a key for every field of its document, and the boxes and the separate
// prefix were three allocations of each.
func AppendIndexField(dst []byte, collID int64, path string, kind int64) []byte {
	dst = keyenc.AppendString(dst, tagIndex)
	dst = keyenc.AppendInt(dst, collID)
	dst = keyenc.AppendString(dst, path)
	return keyenc.AppendInt(dst, kind)
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
	_, partition, unixNano, err = messageKey(key)
	return partition, unixNano, err
}

// IsMessageKey reports whether key is the key of a message of collection
// collID (a read's resume token).
func IsMessageKey(collID int64, key []byte) bool {
	coll, _, _, err := messageKey(key)
	return err == nil && coll == collID
}

func messageKey(key []byte) (collID, partition, unixNano int64, err error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(t) != 5 || t[0] != tagMessage {
		return 0, 0, 0, errors.New("keyspace: not a message key")
	}
	collID, ok0 := t[1].(int64)
	partition, ok1 := t[2].(int64)
	unixNano, ok2 := t[3].(int64)
	_, ok3 := t[4].(int64)
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, errors.New("keyspace: malformed message key")
	}
	return collID, partition, unixNano, nil
}

// CollectionData is every range that holds a collection's data, for
// clearing when it is dropped.
func CollectionData(collID int64) []kv.Range {
	return []kv.Range{Documents(collID), Indexes(collID), Stats(collID), Messages(collID), SchemaVersions(collID)}
}

// Namespace is the key of a namespace's record.
func Namespace(name string) []byte { return pack(tagAuth, "ns", name) }

// Namespaces is the range of every namespace record.
func Namespaces() kv.Range { return prefix(tagAuth, "ns") }

// NamespaceID is the key that reserves a namespace id.
func NamespaceID(id int64) []byte { return pack(tagAuth, "nsid", id) }

// Application is the key of an application's record.
func Application(id string) []byte { return pack(tagAuth, "app", id) }

// Applications is the range of every application record.
func Applications() kv.Range { return prefix(tagAuth, "app") }

// Invitation is the key of the invitation of an email to a namespace.
func Invitation(email, ns string) []byte { return pack(tagAuth, "inv", email, ns) }

// InvitationsOf is the range of an email's invitations, to any namespace.
func InvitationsOf(email string) kv.Range { return prefix(tagAuth, "inv", email) }

// Invitations is the range of every invitation.
func Invitations() kv.Range { return prefix(tagAuth, "inv") }

// SigningKey is the key of a token signing key.
func SigningKey(id string) []byte { return pack(tagAuth, "key", id) }

// SigningKeys is the range of every token signing key.
func SigningKeys() kv.Range { return prefix(tagAuth, "key") }

// NamespaceMetadata is the key of a namespace's metadata value named key.
func NamespaceMetadata(ns int64, key string) []byte { return pack(tagTenant, ns, "ns", key) }

// UserMetadata is the key of an application's metadata value named key,
// in its namespace.
func UserMetadata(ns int64, app, key string) []byte { return pack(tagTenant, ns, "app", app, key) }

// ApplicationMetadata is the range of an application's metadata values:
// what deleting the application clears.
func ApplicationMetadata(ns int64, app string) kv.Range { return prefix(tagTenant, ns, "app", app) }

// NamespaceQuota is the key of a namespace's quotas.
func NamespaceQuota(ns int64) []byte { return pack(tagTenant, ns, "quota") }

// Tenant is the range of everything kept for a namespace besides its
// databases and applications (its metadata and quotas): what deleting the
// namespace clears.
func Tenant(ns int64) kv.Range { return prefix(tagTenant, ns) }

// Node is the key of a node's registration.
func Node(id string) []byte { return pack(tagNode, id) }

// Nodes is the range of every node's registration.
func Nodes() kv.Range { return prefix(tagNode) }

// Cache is the key of a cache's record: caches belong to a project (a
// database), and go with it (DatabaseCaches).
func Cache(dbID int64, name string) []byte { return pack(tagCache, "r", dbID, name) }

// Caches is the range of every cache record of a database.
func Caches(dbID int64) kv.Range { return prefix(tagCache, "r", dbID) }

// AllCaches is the range of every cache record of every database.
func AllCaches() kv.Range { return prefix(tagCache, "r") }

// CacheEntry is the key of a cache's entry.
func CacheEntry(dbID int64, cache, key string) []byte {
	return pack(tagCache, "e", dbID, cache, key)
}

// CacheEntries is the range of every entry of a cache, in key order.
func CacheEntries(dbID int64, cache string) kv.Range { return prefix(tagCache, "e", dbID, cache) }

// CacheEntryKey decodes a cache entry's key into the key the client gave.
func CacheEntryKey(key []byte) (string, error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return "", err
	}
	if len(t) != 5 || t[0] != tagCache || t[1] != "e" {
		return "", errors.New("keyspace: not a cache entry key")
	}
	k, ok := t[4].(string)
	if !ok {
		return "", errors.New("keyspace: malformed cache entry key")
	}
	return k, nil
}

// CacheExpiry is the key of an expiry index entry: the entry of cache's
// key expires at unixMs. The time leads, so that what has expired by now
// is one range from the start (CacheExpiredBy).
func CacheExpiry(unixMs, dbID int64, cache, key string) []byte {
	return pack(tagCache, "x", unixMs, dbID, cache, key)
}

// CacheExpiredBy is the range of the expiry index entries of the entries
// that expire at or before unixMs.
func CacheExpiredBy(unixMs int64) kv.Range {
	return kv.Range{Begin: pack(tagCache, "x"), End: kv.PrefixEnd(pack(tagCache, "x", unixMs))}
}

// CacheExpiryKey decodes an expiry index entry's key.
func CacheExpiryKey(key []byte) (unixMs, dbID int64, cache, k string, err error) {
	t, err := keyenc.Unpack(key)
	if err != nil {
		return 0, 0, "", "", err
	}
	if len(t) != 6 || t[0] != tagCache || t[1] != "x" {
		return 0, 0, "", "", errors.New("keyspace: not a cache expiry key")
	}
	unixMs, ok0 := t[2].(int64)
	dbID, ok1 := t[3].(int64)
	cache, ok2 := t[4].(string)
	k, ok3 := t[5].(string)
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return 0, 0, "", "", errors.New("keyspace: malformed cache expiry key")
	}
	return unixMs, dbID, cache, k, nil
}

// DatabaseCaches is every range that holds a database's caches (their
// records and entries), for clearing when it is dropped. Their expiry
// index entries stay until their time: the sweep finds no entry behind
// them and clears them then.
func DatabaseCaches(dbID int64) []kv.Range {
	return []kv.Range{Caches(dbID), prefix(tagCache, "e", dbID)}
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
