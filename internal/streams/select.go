package streams

import "github.com/foliodb/folio/internal/changelog"

// Changes selects the document changes (insert, replace, update, delete)
// of the collection coll of database db in namespace ns: never messages,
// never DDL. It follows names, not ids, so a stream goes on across a drop
// and re-creation of the collection or its database, as the original's did.
func Changes(ns int64, db, coll string) Selector { return ChangesMatching(ns, db, coll, nil) }

// ChangesMatching is Changes narrowed by a filter, match (nil: all): it
// selects the changes that concern the documents match holds for, before
// or after the change (Matching has the rule).
func ChangesMatching(ns int64, db, coll string, match func(doc []byte) (bool, error)) Selector {
	return func(r *changelog.Record) (Verdict, error) {
		if !r.Op.IsDocumentChange() || r.Collection != coll || r.DB != db || r.NS != ns {
			return Skip, nil
		}
		if match == nil {
			return Take, nil
		}
		return Matching(r, match)
	}
}

// Matching is what a stream whose filter is match makes of the document
// change r. A client keeps a view of the documents the filter matches by
// applying what it gets, so it must get every change that alters that
// view and may get nothing else:
//
//   - insert: taken if the new document matches;
//   - update and replace: taken if the document after the change matches
//     (whether or not it did before: one that moves into the filter is
//     the change it is); if only the document before matched, taken as
//     leaving the filter (TakeLeaving), so the client drops it; if neither,
//     skipped; a replace that created its document is an insert;
//   - delete: taken if the deleted document matched, skipped otherwise.
//
// Records written before the log kept the document before a change
// (r.NoBefore) cannot be told apart: an update or replace whose new
// document does not match is taken as leaving, and every delete is taken,
// so a client's view still ends right (dropping a document it does not
// hold changes nothing), at the cost of a few changes it did not need.
func Matching(r *changelog.Record, match func(doc []byte) (bool, error)) (Verdict, error) {
	switch r.Op {
	case changelog.Delete:
		if r.Before == nil {
			return Take, nil // unknown: a delete concerns the view at most once
		}
		return verdict(match(r.Before))
	case changelog.Insert:
		return verdict(match(r.Data))
	}
	if ok, err := match(r.Data); err != nil || ok {
		return verdict(ok, err)
	}
	switch {
	case r.Before != nil:
		ok, err := match(r.Before)
		if err != nil || !ok {
			return Skip, err
		}
		return TakeLeaving, nil
	case r.NoBefore:
		return TakeLeaving, nil
	}
	return Skip, nil // a replace that created its document: an insert
}

func verdict(ok bool, err error) (Verdict, error) {
	if err != nil || !ok {
		return Skip, err
	}
	return Take, nil
}

// Messages selects the messages published to the collection coll of
// database db in namespace ns for which match (nil: all) holds. Like
// Changes, it follows the collection by name.
func Messages(ns int64, db, coll string, match func(data []byte) (bool, error)) Selector {
	return func(r *changelog.Record) (Verdict, error) {
		if r.Op != changelog.Publish || r.Collection != coll || r.DB != db || r.NS != ns {
			return Skip, nil
		}
		if match == nil {
			return Take, nil
		}
		return verdict(match(r.Data))
	}
}
