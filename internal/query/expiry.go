package query

import (
	"bytes"
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

// ExpiredSpan is a range of the ttl field's index entries that may hold
// expired documents: those before Second (where the cutoff's second
// begins) have expired if their value is in UTC, those from it on are
// checked one by one.
type ExpiredSpan struct {
	kv.Range
	Second []byte
}

// ExpiredRanges are the ranges of the ttl field's index entries that hold
// every document expired at now whose value is written in UTC ("Z", as
// the server's own stamps are), in key order: entries sort by the value's
// text, which orders UTC times by time up to the second. RFC 3339 allows
// a lower-case "t" (and "z"), and such a value sorts after every
// upper-case one of its day and before the next day, so there are two:
// the entries up to the cutoff's second, and the lower-case ones of the
// cutoff's day up to its second. Each ends after the second the cutoff
// falls in, so it may hold a few documents that expire within that
// second: whoever reads it checks each document (TTL.Expired). A value
// written with a positive offset sorts later than its time and is found
// once UTC reaches its local text (at most the offset later); one with a
// negative offset sorts earlier and is met, and passed over, until it
// expires. ok is false for a collection without a ttl.
func ExpiredRanges(coll *catalog.Collection, now time.Time) (spans []ExpiredSpan, ok bool) {
	ttl := coll.Schema.TTL()
	if ttl == nil {
		return nil, false
	}
	prefix := index.FieldPrefix(coll.ID, ttl.Field.Path, index.Exact)
	second := ttl.Cutoff(now).UTC().Truncate(time.Second)
	// Every valid date-time is longer than its first 19 characters, so
	// the values before a bound of 19 are those whose first 19 characters
	// (date and time to the second) are at most the bound's.
	at := func(text string) []byte { return keyenc.AppendString(bytes.Clone(prefix), text) }
	next := second.Add(time.Second)
	spans = []ExpiredSpan{{
		Range:  kv.Range{Begin: prefix, End: at(next.Format("2006-01-02T15:04:05"))},
		Second: at(second.Format("2006-01-02T15:04:05")),
	}}
	if next.YearDay() == second.YearDay() {
		// When the second ends a day, the first range ends at the next
		// day's first bound, past every lower-case time of this one: the
		// two must not overlap, or a document would be met twice.
		day := second.Format("2006-01-02t")
		spans = append(spans, ExpiredSpan{
			Range:  kv.Range{Begin: at(day), End: at(day + next.Format("15:04:05"))},
			Second: at(day + second.Format("15:04:05")),
		})
	}
	return spans, true
}
