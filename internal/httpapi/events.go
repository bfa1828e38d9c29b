package httpapi

import (
	"encoding/base64"
	"net/http"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/status"
	"github.com/foliodb/folio/internal/streams"
)

// startOptions are the options every log stream takes. StartAfter is a
// position an item of an earlier stream carried; without it the stream
// starts at "now".
type startOptions struct {
	StartAfter string `json:"start_after"`
}

func (o startOptions) cursor() (*streams.Cursor, error) {
	if o.StartAfter == "" {
		return nil, nil
	}
	c, err := streams.ParseCursor("start_after", o.StartAfter)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// events streams the changes of a documents collection (reference §7).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Options startOptions `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	start, err := req.Options.cursor()
	if err != nil {
		return err
	}
	coll, err := s.lookup(r, dbName, collName)
	if err != nil {
		return err
	}
	if coll.Schema.CollectionType() != schema.Documents {
		return status.Errorf(status.InvalidArgument, "events is only supported on collection type of 'documents'")
	}
	return s.serveStream(w, r, start, streams.Changes(dbName, collName), eventChunk)
}

// lookup finds the collection a stream is about, in the request's
// transaction if it has one. Only the start is checked: the stream then
// follows the collection by name, across drops and re-creations.
func (s *Server) lookup(r *http.Request, dbName, collName string) (*catalog.Collection, error) {
	var coll *catalog.Collection
	err := s.inTx(r, dbName, func(tx kv.Tx) error {
		var err error
		coll, err = s.collection(r, tx, dbName, collName)
		return err
	})
	return coll, err
}

// serveStream sends what the subscription selects, from start (or from
// now), one {"result":...} line per item, until the client goes away or the
// stream ends. The status line and headers go out as soon as the stream is
// in place, so a client knows that everything committed from then on will
// reach it; body bytes only when there is an item.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, start *streams.Cursor, sel streams.Selector, render func([]byte, *streams.Event) []byte) error {
	ctx := r.Context()
	var after streams.Cursor
	if start != nil {
		after = *start
	} else {
		last, err := s.store.LastPosition(ctx)
		if err != nil {
			return err
		}
		after = streams.After(last)
	}
	sub, err := s.hub.Subscribe(ctx, after, sel)
	if err != nil {
		return err
	}
	defer sub.Close()
	st := newStream(w)
	if st.flusher == nil {
		return status.Errorf(status.Internal, "streaming is not supported by this connection")
	}
	st.start()
	st.flusher.Flush()
	var buf []byte
	for unflushed := 0; ; {
		batch, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil // the client went away: nobody to tell
			}
			return st.finish(err)
		}
		buf = buf[:0]
		for i := range batch {
			buf = append(buf, `{"result":`...)
			buf = render(buf, &batch[i])
			buf = append(buf, "}\n"...)
		}
		if _, err := st.w.Write(buf); err != nil {
			return nil
		}
		// A consumer that keeps up gets each batch at once; one that is
		// behind gets what is waiting with one flush (one write to the
		// connection) instead of one per item.
		if unflushed++; !sub.Ready() || unflushed == maxUnflushed {
			st.flusher.Flush()
			unflushed = 0
		}
	}
}

// maxUnflushed bounds the batches written between two flushes.
const maxUnflushed = 64

// eventChunk renders a change event:
// {"event":{"tx_id":…,"collection":…,"op":…,"key":…,"data":…,"last":…,"position":…}}.
// Bytes are base64 (standard, padded) as protobuf's JSON has them; data is
// the document as stored, absent on delete.
func eventChunk(b []byte, ev *streams.Event) []byte {
	rec := &ev.Record
	b = append(b, `{"event":{"tx_id":"`...)
	b = base64.StdEncoding.AppendEncode(b, streams.TxID(ev.Cursor.Pos))
	b = append(b, `","collection":`...)
	b = jsonscan.AppendQuote(b, rec.Collection)
	b = append(b, `,"op":"`...)
	b = append(b, rec.Op.String()...)
	b = append(b, `","key":"`...)
	b = base64.StdEncoding.AppendEncode(b, rec.Key)
	b = append(b, '"')
	if rec.Data != nil {
		b = append(b, `,"data":`...)
		b = append(b, rec.Data...)
	}
	if ev.Last {
		b = append(b, `,"last":true`...)
	} else {
		b = append(b, `,"last":false`...)
	}
	b = append(b, `,"position":"`...)
	b = append(b, ev.Cursor.String()...)
	return append(b, `"}}`...)
}
