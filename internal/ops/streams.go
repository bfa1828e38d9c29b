package ops

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/streams"
)

// EventsRequest opens a stream of a documents collection's changes.
type EventsRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef  // the collection is looked up in it
	// StartAfter is the position of an item of an earlier stream: the new
	// one continues after it. Empty starts from now.
	StartAfter string
	// Filter (JSON; none: every change) narrows the stream to the changes
	// of the documents it matches, before or after the change
	// (streams.Matching); Collation is the filter's.
	Filter    []byte
	Collation Collation
}

// SubscribeRequest opens a stream of the messages published to a messages
// collection.
type SubscribeRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	StartAfter     string
	Filter         []byte // JSON; none selects every message
	Collation      Collation
	Partitions     []int64
}

// StreamItem is one item of an events or subscribe stream.
type StreamItem struct {
	// TxID is the id of the transaction that made the change: its commit
	// position. Every item of one transaction has the same.
	TxID [8]byte
	// Collection and Op ("insert", "replace", "update", "delete",
	// "publish") say what changed; Key is the document's storage key and
	// Data the document or message after the change (none on delete).
	Collection string
	Op         string
	Key, Data  []byte
	// Last is set on the stream's last item of its transaction.
	Last bool
	// LeftFilter is set on a change whose document the stream's filter
	// matched before it and does not after: the client drops it.
	LeftFilter bool
	// Expired is set on a delete of a document past its ttl.
	Expired bool
	// Position resumes a stream after this item (StartAfter).
	Position string
}

// Stream is an open events or subscribe stream. Next and Close are for one
// consumer goroutine.
type Stream struct {
	sub   *streams.Subscription
	items []StreamItem
}

// Next returns the items of the next committed transaction the stream
// selects, waiting for one until ctx is done or the stream ends (at
// shutdown, or when its consumer fell too far behind). The items are valid
// until the next call.
func (s *Stream) Next(ctx context.Context) ([]StreamItem, error) {
	// The last batch's items are the transport's no more: let go of the
	// changes they point into before waiting, so that an idle stream does
	// not keep its last transaction alive.
	clear(s.items)
	s.items = s.items[:0]
	batch, err := s.sub.Next(ctx)
	if err != nil {
		return nil, apiError(ctx, err)
	}
	for i := range batch {
		ev := &batch[i]
		it := StreamItem{Collection: ev.Record.Collection, Op: ev.Record.Op.String(), Key: ev.Record.Key, Data: ev.Record.Data,
			Last: ev.Last, LeftFilter: ev.Left, Expired: ev.Record.Expired, Position: ev.Cursor.String()}
		binary.BigEndian.PutUint64(it.TxID[:], uint64(ev.Cursor.Pos))
		s.items = append(s.items, it)
	}
	return s.items, nil
}

// Ready reports whether Next has items to return without waiting: a
// transport flushes its buffer when there are none.
func (s *Stream) Ready() bool { return s.sub.Ready() }

// Close ends the stream.
func (s *Stream) Close() { s.sub.Close() }

// Events opens a stream of the changes of a documents collection.
func (o *Ops) Events(ctx context.Context, c Caller, req EventsRequest) (_ *Stream, err error) {
	ctx, op, err := o.open(ctx, c, "Events")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	start, err := parseStart(req.StartAfter)
	if err != nil {
		return nil, err
	}
	coll, err := o.lookup(ctx, c, db, req.Collection, req.Tx)
	if err != nil {
		return nil, err
	}
	if coll.Schema.CollectionType() != schema.Documents {
		return nil, apierror.Errorf(apierror.InvalidArgument, "events is only supported on collection type of 'documents'")
	}
	// The filter is parsed once, against the schema the collection has
	// now, and runs where the hub reads the log: a change that does not
	// concern it is never queued for the stream.
	match, err := streamFilter(req.Filter, coll, req.Collation)
	if err != nil {
		return nil, err
	}
	return o.openStream(ctx, start, streams.ChangesMatching(c.ns(), db.stored, req.Collection, match))
}

// streamFilter parses a stream's filter: nil if it has none or matches
// everything.
func streamFilter(raw []byte, coll *catalog.Collection, col Collation) (func([]byte) (bool, error), error) {
	if isNull(raw) {
		return nil, nil
	}
	f, err := filter.Parse(raw, coll.Schema, col.filter())
	if err != nil || f.MatchesAll() {
		return nil, err
	}
	return f.Matches, nil
}

// Subscribe opens a stream of the messages published to a messages
// collection, narrowed by a filter.
func (o *Ops) Subscribe(ctx context.Context, c Caller, req SubscribeRequest) (_ *Stream, err error) {
	ctx, op, err := o.open(ctx, c, "Subscribe")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	for _, p := range req.Partitions {
		if err := messages.CheckPartition(p); err != nil {
			return nil, err
		}
	}
	start, err := parseStart(req.StartAfter)
	if err != nil {
		return nil, err
	}
	coll, err := o.lookup(ctx, c, db, req.Collection, req.Tx)
	if err != nil {
		return nil, err
	}
	if err := messages.Require(coll, "subscribe"); err != nil {
		return nil, err
	}
	match, err := streamFilter(req.Filter, coll, req.Collation)
	if err != nil {
		return nil, err
	}
	return o.openStream(ctx, start, streams.Messages(c.ns(), db.stored, req.Collection, match))
}

// parseStart reads a stream's start position; nil means "from now".
func parseStart(token string) (*streams.Cursor, error) {
	if token == "" {
		return nil, nil
	}
	c, err := streams.ParseCursor("start_after", token)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// lookup finds the collection a stream is about, in the request's
// transaction if it has one. Only the start is checked: the stream then
// follows the collection by name, across drops and re-creations.
func (o *Ops) lookup(ctx context.Context, c Caller, db target, coll string, tx TxRef) (*catalog.Collection, error) {
	// The stream itself has no deadline; finding its collection has.
	ctx, cancel := o.bounded(ctx)
	defer cancel()
	var found *catalog.Collection
	err := o.inCollection(ctx, c, db, coll, tx, func(_ kv.Tx, coll *catalog.Collection) error {
		found = coll
		return nil
	})
	return found, apiError(ctx, err)
}

// openStream subscribes to the change log from start (or from now) with
// the selector. Once it returns, everything committed afterwards reaches
// the stream.
func (o *Ops) openStream(ctx context.Context, start *streams.Cursor, sel streams.Selector) (*Stream, error) {
	var after streams.Cursor
	if start != nil {
		after = *start
	} else {
		last, err := o.store.LastPosition(ctx)
		if err != nil {
			return nil, err
		}
		after = streams.After(last)
	}
	sub, err := o.hub.Subscribe(ctx, after, sel)
	if err != nil {
		return nil, err
	}
	return &Stream{sub: sub}, nil
}

// PublishRequest stores messages in a messages collection.
type PublishRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Messages       [][]byte // each a JSON object
	Partition      int64
}

// PublishResult is what a publish reports.
type PublishResult struct {
	Time time.Time
	// Keys are the messages' keys in the order given; each is a read's
	// resume token.
	Keys [][]byte
}

// Publish validates and stores messages, all or none, in the request's
// transaction: subscribers see them once it commits.
func (o *Ops) Publish(ctx context.Context, c Caller, req PublishRequest) (_ *PublishResult, err error) {
	ctx, op, err := o.open(ctx, c, "Publish")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	if len(req.Messages) == 0 {
		return nil, apierror.Errorf(apierror.InvalidArgument, "empty messages received")
	}
	if len(req.Messages) > o.cfg.MaxDocumentsPerRequest {
		return nil, apierror.Errorf(apierror.InvalidArgument, "%d messages in one request, the limit is %d", len(req.Messages), o.cfg.MaxDocumentsPerRequest)
	}
	if err := messages.CheckPartition(req.Partition); err != nil {
		return nil, err
	}
	var res *messages.PublishResult
	err = o.inCollection(ctx, c, db, req.Collection, req.Tx, func(tx kv.Tx, coll *catalog.Collection) (err error) {
		if res, err = o.messages.Publish(ctx, tx, coll, req.Partition, req.Messages); err != nil {
			return err
		}
		return o.checkStorage(ctx, tx, c)
	})
	if err != nil {
		return nil, err
	}
	return &PublishResult{Time: res.Time, Keys: res.Keys}, nil
}
