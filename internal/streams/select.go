package streams

import "github.com/foliodb/folio/internal/changelog"

// Changes selects the document changes (insert, replace, update, delete)
// of the collection coll of database db in namespace ns: never messages,
// never DDL. It follows names, not ids, so a stream goes on across a drop
// and re-creation of the collection or its database, as the original's did.
func Changes(ns int64, db, coll string) Selector {
	return func(r *changelog.Record) (bool, error) {
		return r.Op.IsDocumentChange() && r.Collection == coll && r.DB == db && r.NS == ns, nil
	}
}

// Messages selects the messages published to the collection coll of
// database db in namespace ns for which match (nil: all) holds. Like
// Changes, it follows the collection by name.
func Messages(ns int64, db, coll string, match func(data []byte) (bool, error)) Selector {
	return func(r *changelog.Record) (bool, error) {
		if r.Op != changelog.Publish || r.Collection != coll || r.DB != db || r.NS != ns {
			return false, nil
		}
		if match == nil {
			return true, nil
		}
		return match(r.Data)
	}
}
