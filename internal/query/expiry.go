package query

import (
	"fmt"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Expired documents (a collection whose schema has a ttl) are left out
// here, where every lookup's candidates come out of Run: reads, point
// reads, counts that read documents, updates and deletes by filter all
// take their documents from Run, so none of them sees a document from
// the instant it expires, swept or not. A caller that builds its own
// iterator over documents wraps it with Live.

// now is the request's time, or the clock's when the caller gave none.
func (r Request) now() time.Time {
	if r.Now.IsZero() {
		return time.Now()
	}
	return r.Now
}

// Live returns it without the documents that have expired at now, for a
// collection whose schema has a ttl; it returns it itself otherwise. doc
// reads the document out of a stored value, as Request.Doc.
func Live(it Iterator, coll *catalog.Collection, doc func([]byte) ([]byte, error), now time.Time) Iterator {
	ttl := coll.Schema.TTL()
	if ttl == nil || it == nil {
		return it
	}
	return &liveIterator{it: it, ttl: ttl, doc: doc, now: now}
}

// liveIterator skips expired candidates: one parse of the ttl field's
// value per candidate, nothing else decoded.
type liveIterator struct {
	it  Iterator
	ttl *schema.TTL
	doc func([]byte) ([]byte, error)
	now time.Time
	err error
}

func (l *liveIterator) Next() bool {
	for l.err == nil && l.it.Next() {
		data := l.it.Value()
		if l.doc != nil {
			var err error
			if data, err = l.doc(data); err != nil {
				l.err = fmt.Errorf("%w at %x", err, l.it.Key())
				return false
			}
		}
		if !l.ttl.Expired(data, l.now) {
			return true
		}
	}
	return false
}

func (l *liveIterator) Key() []byte   { return l.it.Key() }
func (l *liveIterator) Value() []byte { return l.it.Value() }
func (l *liveIterator) Close() error  { return l.it.Close() }

func (l *liveIterator) Err() error {
	if l.err != nil {
		return l.err
	}
	return l.it.Err()
}

// ExpiredRange is the range of the ttl field's index entries that holds
// every document expired at now whose value is written in UTC ("Z", as
// the server's own stamps are): entries sort by the value's text, which
// orders UTC times by time up to the second. It ends after the second
// the cutoff falls in, so it may hold a few documents that expire within
// that second: whoever reads it checks each document (TTL.Expired). A
// value written with a positive offset sorts later than its time and is
// found once UTC reaches its local text (at most the offset later); one
// with a negative offset sorts earlier and is met, and passed over, until
// it expires. ok is false for a collection without a ttl.
func ExpiredRange(coll *catalog.Collection, now time.Time) (r kv.Range, ok bool) {
	ttl := coll.Schema.TTL()
	if ttl == nil {
		return kv.Range{}, false
	}
	prefix := index.FieldPrefix(coll.ID, ttl.Field.Path, index.Exact)
	next := ttl.Cutoff(now).UTC().Truncate(time.Second).Add(time.Second)
	// Every valid date-time is longer than its first 19 characters, so
	// the values before this bound are those whose first 19 characters
	// (date and time to the second) are at most the cutoff's.
	bound := next.Format("2006-01-02T15:04:05")
	end := keyenc.AppendString(append([]byte(nil), prefix...), bound)
	return kv.Range{Begin: prefix, End: end}, true
}
