package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Event is a change to one document of a collection.
type Event[T any] struct {
	// TxID is the same for the events of one transaction.
	TxID       string
	Collection string
	// Op is "insert", "replace", "update" or "delete".
	Op string
	// Key is the document's storage key (it holds the primary-key
	// values).
	Key []byte
	// Data is the document after the change; nil for a delete.
	Data *T
	// Last is set on the transaction's last event in this stream.
	Last bool
	// LeftFilter is set, on a stream narrowed by Matching, on a change
	// whose document the filter matched before and does not after: a view
	// of the matching documents drops it.
	LeftFilter bool
	// Expired is set on a delete of a document past its collection's
	// ttl, made by the server.
	Expired bool
	// Position, given to StartAfter, resumes a stream right after this
	// event.
	Position string
}

// Events streams the changes of a documents collection in commit order,
// from now or from StartAfter, until ctx is done (the last item is then
// ctx's error). It never ends by itself: when the connection is lost, or
// the server restarts or ends the stream (UNAVAILABLE, RESOURCE_EXHAUSTED),
// it reconnects and resumes right after the last event it yielded, for up
// to Options.StreamReconnect. Options: StartAfter, Matching,
// CaseInsensitive (for Matching's filter).
func (c *Collection[T]) Events(ctx context.Context, opts ...Option) iter.Seq2[Event[T], error] {
	return func(yield func(Event[T], error) bool) {
		o := collect(opts)
		c.follow(ctx, routeEvents, o.startAfter, func(after string) any {
			type eventsOpts struct {
				StartAfter string     `json:"start_after"`
				Collation  *collation `json:"collation,omitempty"`
			}
			return struct {
				Filter  Filter     `json:"filter,omitzero"`
				Options eventsOpts `json:"options"`
			}{o.filter, eventsOpts{after, o.collation()}}
		}, func(raw json.RawMessage) (string, bool) {
			var item struct {
				Event struct {
					TxID       string          `json:"tx_id"`
					Collection string          `json:"collection"`
					Op         string          `json:"op"`
					Key        []byte          `json:"key"`
					Data       json.RawMessage `json:"data"`
					Last       bool            `json:"last"`
					LeftFilter bool            `json:"left_filter"`
					Expired    bool            `json:"expired"`
					Position   string          `json:"position"`
				} `json:"event"`
			}
			if err := json.Unmarshal(raw, &item); err != nil {
				return "", yield(Event[T]{}, fmt.Errorf("events of %s: decode an event: %w", c.name, err))
			}
			e := item.Event
			ev := Event[T]{TxID: e.TxID, Collection: e.Collection, Op: e.Op, Key: e.Key, Last: e.Last, LeftFilter: e.LeftFilter, Expired: e.Expired, Position: e.Position}
			if len(e.Data) > 0 {
				ev.Data = new(T)
				if err := json.Unmarshal(e.Data, ev.Data); err != nil {
					return e.Position, yield(ev, fmt.Errorf("events of %s: decode a document: %w", c.name, err))
				}
			}
			return e.Position, yield(ev, nil)
		}, func(err error) { yield(Event[T]{}, err) })
	}
}

// Message is a message received from a messages collection.
type Message[T any] struct {
	Data T
	// Position, given to StartAfter, resumes a subscription right after
	// this message.
	Position string
}

// Publish publishes messages to a messages collection, all or none, and
// returns their storage keys. In a transaction they are published at
// commit.
func (c *Collection[T]) Publish(ctx context.Context, msgs ...T) ([]string, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	var res struct {
		Keys []string `json:"keys"`
	}
	err := c.call(ctx, routePublish, map[string]any{"messages": msgs}, &res)
	return res.Keys, err
}

// Subscribe streams the messages published to a messages collection that
// filter selects, in commit order, from now or from StartAfter, and
// reconnects and resumes as Events does. Options: StartAfter,
// CaseInsensitive.
func (c *Collection[T]) Subscribe(ctx context.Context, filter Filter, opts ...Option) iter.Seq2[Message[T], error] {
	return func(yield func(Message[T], error) bool) {
		o := collect(opts)
		c.follow(ctx, routeSubscribe, o.startAfter, func(after string) any {
			type subscribeOpts struct {
				StartAfter string     `json:"start_after,omitempty"`
				Collation  *collation `json:"collation,omitempty"`
			}
			return struct {
				Filter  Filter        `json:"filter,omitzero"`
				Options subscribeOpts `json:"options"`
			}{filter, subscribeOpts{after, o.collation()}}
		}, func(raw json.RawMessage) (string, bool) {
			var item struct {
				Message  json.RawMessage `json:"message"`
				Position string          `json:"position"`
			}
			var m Message[T]
			err := json.Unmarshal(raw, &item)
			if err == nil {
				m.Position = item.Position
				err = json.Unmarshal(item.Message, &m.Data)
			}
			if err != nil {
				return item.Position, yield(m, fmt.Errorf("subscription to %s: decode a message: %w", c.name, err))
			}
			return item.Position, yield(m, nil)
		}, func(err error) { yield(Message[T]{}, err) })
	}
}

// follow runs a stream that resumes: it opens it at after, hands each
// item to item (which answers the item's position and whether to go on),
// and when the stream breaks in a way a reconnect can mend, opens it
// again after the last position, until ctx is done or
// Options.StreamReconnect passes after it was lost without a new one. fail gets the
// error that ends it, if any.
func (c *Collection[T]) follow(ctx context.Context, r *route, after string, body func(after string) any, item func(json.RawMessage) (string, bool), fail func(error)) {
	client := c.s.db.c
	lost := time.Now() // when the stream was last lost (or first tried)
	for attempt := 0; ; attempt++ {
		opened, stopped := false, false
		req := c.s.request(r, c.name, body(after))
		req.opened = func() { opened = true }
		err := client.stream(ctx, req, func(raw json.RawMessage) bool {
			pos, goOn := item(raw)
			if pos != "" {
				after = pos
			}
			stopped = !goOn
			return goOn
		})
		if stopped {
			return
		}
		if opened {
			attempt = 0
			if err == nil {
				// Streams never end by themselves: the server went away.
				err = errors.New("the server ended the stream")
			}
			lost = time.Now()
		}
		if ctx.Err() != nil {
			fail(ctx.Err())
			return
		}
		if !resumable(err) || client.opts.StreamReconnect < 0 || time.Since(lost) > client.opts.StreamReconnect {
			fail(fmt.Errorf("%s of %s: %w", strings.TrimPrefix(r.path, "/v1/databases/{db}/collections/{collection}/"), c.name, err))
			return
		}
		if sleep(ctx, backoff(attempt+1, err)+100*time.Millisecond) != nil {
			fail(ctx.Err())
			return
		}
	}
}

// resumable tells whether reconnecting can mend what ended a stream: a
// lost connection, a server shutting down or busy, a stream cut off for
// falling behind. Refusals of the request itself cannot be mended.
func resumable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == Unavailable || e.Code == ResourceExhausted
	}
	return true
}
