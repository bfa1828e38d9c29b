// Package messages holds the operations of messages collections (schemas
// with "collection_type": "messages"): publish and read. Subscribing is a
// stream over the change log (package streams): a published message is
// stored under its collection's message keys and appended to the log as a
// changelog.Publish record in the same transaction, so a subscriber sees
// exactly the committed messages, in commit order.
//
// Like the document operations, each takes the transaction it runs in, so a
// publish can be part of a client's transaction and is then seen by nobody
// (subscribers included) before that transaction commits.
package messages

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Partitions is the number of partitions of a messages collection. As in
// the original there is one, partition 0; the key layout has room for more.
const Partitions = 1

// DefaultMaxMessageSize bounds a message's JSON: it and its value header
// must fit in one kv value.
const DefaultMaxMessageSize = kv.DefaultMaxValueSize - 1024

// Service runs message operations.
type Service struct {
	// MaxMessageSize bounds a message's JSON in bytes.
	MaxMessageSize int
	// Now tells the time messages are stamped with; tests may set it.
	Now func() time.Time

	node int64        // this process's id in message keys
	last atomic.Int64 // the newest stamp handed out, in Unix nanoseconds
}

// New returns a Service with the default limits.
func New() *Service {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("messages: no randomness for the node id: " + err.Error())
	}
	return &Service{
		MaxMessageSize: DefaultMaxMessageSize,
		Now:            func() time.Time { return time.Now().UTC() },
		node:           int64(binary.BigEndian.Uint64(b[:]) >> 1),
	}
}

// Require refuses op on a collection that is not a messages collection,
// with the original's message.
func Require(coll *catalog.Collection, op string) error {
	if coll.Schema.CollectionType() != schema.Messages {
		return apierror.Errorf(apierror.InvalidArgument, "%s is only supported on collection type of 'messages'", op)
	}
	return nil
}

// CheckPartition refuses a partition that does not exist, with the
// original's message.
func CheckPartition(p int64) error {
	if p < 0 || p >= Partitions {
		return apierror.Errorf(apierror.InvalidArgument, "Invalid partition number `%d`", p)
	}
	return nil
}

// PublishResult is what a publish reports.
type PublishResult struct {
	// Time is when the first message was stamped: the response's
	// created_at.
	Time time.Time
	// Keys are the messages' storage keys, in the order given; each is a
	// resume token of a read.
	Keys [][]byte
}

// Publish validates every message against the collection's schema and
// stores them in partition, in the order given. If any is invalid nothing
// is written.
func (s *Service) Publish(ctx context.Context, tx kv.Tx, coll *catalog.Collection, partition int64, msgs [][]byte) (*PublishResult, error) {
	if err := Require(coll, "publish"); err != nil {
		return nil, err
	}
	if err := CheckPartition(partition); err != nil {
		return nil, err
	}
	// Validate all first, so that a bad message costs no writes.
	conformed := make([][]byte, len(msgs))
	for i, m := range msgs {
		if len(m) > s.MaxMessageSize {
			return nil, apierror.Errorf(apierror.InvalidArgument, "message of %d bytes exceeds the maximum of %d bytes", len(m), s.MaxMessageSize)
		}
		var err error
		if conformed[i], err = coll.Schema.Conform(m); err != nil {
			return nil, err
		}
	}
	msgs = conformed
	res := &PublishResult{Keys: make([][]byte, len(msgs))}
	var added int64
	for i, m := range msgs {
		stamp := s.stamp()
		if i == 0 {
			res.Time = time.Unix(0, stamp).UTC()
		}
		key := keyspace.Message(coll.ID, partition, stamp, s.node)
		val := encodeValue(m)
		if err := tx.Set(key, val); err != nil {
			return nil, fmt.Errorf("publish to %s: %w", coll.Name, err)
		}
		r := changelog.Record{Op: changelog.Publish, NS: coll.DB.NS, DB: coll.DB.Name, DBID: coll.DB.ID, Collection: coll.Name, CollID: coll.ID, Rev: coll.Rev, Key: key, Data: m}
		if err := tx.AppendLog(r.Encode()); err != nil {
			return nil, fmt.Errorf("publish to %s: %w", coll.Name, err)
		}
		res.Keys[i] = key
		added += int64(len(val))
	}
	// Statistics by atomic adds: concurrent publishers never conflict.
	if err := tx.Add(keyspace.Size(coll.ID), added); err != nil {
		return nil, err
	}
	if err := tx.Add(keyspace.Count(coll.ID), int64(len(msgs))); err != nil {
		return nil, err
	}
	return res, nil
}

// stamp returns the time for the next message, in Unix nanoseconds,
// strictly after every stamp this process handed out before: messages of
// one request, and of one process, keep their order in the key space even
// when the clock stands still or steps back.
func (s *Service) stamp() int64 {
	for {
		last := s.last.Load()
		now := max(s.Now().UnixNano(), last+1)
		if s.last.CompareAndSwap(last, now) {
			return now
		}
	}
}

// A message is stored as a version byte and its JSON exactly as sent. Its
// time is in its key.
const valueVersion = 1

func encodeValue(msg []byte) []byte {
	v := make([]byte, 1+len(msg))
	v[0] = valueVersion
	copy(v[1:], msg)
	return v
}

var errCorrupt = errors.New("messages: corrupt stored message")

// Decode returns the JSON of a stored message value (aliasing it).
func Decode(v []byte) ([]byte, error) {
	if len(v) < 1 || v[0] != valueVersion {
		return nil, errCorrupt
	}
	return v[1:], nil
}

// FetchMany reads the stored messages at keys, as search hits read them,
// in one read (one round trip on PostgreSQL): found[i] is false where there
// is none (its collection dropped since it was indexed), items[i] holds it
// otherwise. Their Data is the caller's.
func (s *Service) FetchMany(ctx context.Context, tx kv.Tx, keys [][]byte) (items []Item, found []bool, err error) {
	vs, err := tx.GetMany(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	items, found = make([]Item, len(keys)), make([]bool, len(keys))
	for i, v := range vs {
		if v == nil {
			continue
		}
		if items[i], found[i], err = item(keys[i], v); err != nil {
			return nil, nil, err
		}
	}
	return items, found, nil
}

// item decodes the stored message v under key.
func item(key, v []byte) (Item, bool, error) {
	msg, err := Decode(v)
	if err != nil {
		return Item{}, false, fmt.Errorf("%w at %x", err, key)
	}
	_, nanos, err := keyspace.MessageKey(key)
	if err != nil {
		return Item{}, false, fmt.Errorf("messages: key %x: %w", key, err)
	}
	return Item{Data: bytes.Clone(msg), CreatedAt: time.Unix(0, nanos).UTC(), ResumeToken: key}, true, nil
}

// ReadRequest describes a read of stored messages.
type ReadRequest struct {
	Filter filter.Filter
	// Include or Exclude name the top-level fields to return or leave out.
	Include, Exclude map[string]bool
	// Limit caps the messages returned (0: no cap); Skip passes over the
	// first matches.
	Limit, Skip int64
	// After resumes a read after the message whose resume token it is.
	After []byte
}

// Item is one message of a read.
type Item struct {
	Data        []byte
	CreatedAt   time.Time
	ResumeToken []byte // pass as ReadRequest.After to continue after this message
}

// Read calls emit for each stored message matching the request, in the
// order of their publish times (which is the commit order for messages of
// one process and one request; subscribers get the exact commit order).
// Data in an item is valid only during the call.
func (s *Service) Read(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest, emit func(Item) error) error {
	r := keyspace.Messages(coll.ID)
	if req.After != nil && kv.CompareKeys(req.After, r.Begin) >= 0 {
		r.Begin = kv.KeyAfter(req.After)
		if r.Empty() {
			r.End = r.Begin
		}
	}
	it := tx.Scan(ctx, r, kv.ScanOptions{})
	defer it.Close()
	skipped, sent := int64(0), int64(0)
	for it.Next() {
		msg, err := Decode(it.Value())
		if err != nil {
			return fmt.Errorf("%w at %x", err, it.Key())
		}
		ok, err := req.Filter.Matches(msg)
		if err != nil {
			return fmt.Errorf("messages: stored message at %x: %w", it.Key(), err)
		}
		if !ok {
			continue
		}
		if skipped < req.Skip {
			skipped++
			continue
		}
		_, nanos, err := keyspace.MessageKey(it.Key())
		if err != nil {
			return fmt.Errorf("messages: key %x: %w", it.Key(), err)
		}
		data, err := jsondoc.Project(msg, req.Include, req.Exclude)
		if err != nil {
			return fmt.Errorf("messages: stored message at %x: %w", it.Key(), err)
		}
		if err := emit(Item{Data: data, CreatedAt: time.Unix(0, nanos).UTC(), ResumeToken: it.Key()}); err != nil {
			return err
		}
		if sent++; req.Limit > 0 && sent >= req.Limit {
			return nil
		}
	}
	return it.Err()
}
