package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/ops"
)

// startOptions are the options every log stream takes. StartAfter is a
// position an item of an earlier stream carried; without it the stream
// starts at "now".
type startOptions struct {
	StartAfter string `json:"start_after"`
}

// events streams the changes of a documents collection (reference §7).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter  json.RawMessage `json:"filter"`
		Options struct {
			startOptions
			Collation collation `json:"collation"`
		} `json:"options"`
	}
	malformed := decode(r, &body, eventsOptions)
	st, err := s.ops.Events(r.Context(), caller(r), ops.EventsRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Tx: txRef(r),
		StartAfter: body.Options.StartAfter, Filter: body.Filter, Collation: body.Options.Collation.ops()})
	if err != nil {
		return err
	}
	return s.serveStream(w, r, st, eventChunk)
}

// subscribe streams the messages published to a messages collection from
// now (or after a position), narrowed by a filter (reference §7).
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter  json.RawMessage `json:"filter"`
		Options struct {
			startOptions
			Partitions []int64Option `json:"partitions"`
			Collation  collation     `json:"collation"`
		} `json:"options"`
	}
	malformed := decode(r, &body, subscribeOptions)
	partitions := make([]int64, len(body.Options.Partitions))
	for i, p := range body.Options.Partitions {
		partitions[i] = int64(p)
	}
	st, err := s.ops.Subscribe(r.Context(), caller(r), ops.SubscribeRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Tx: txRef(r),
		StartAfter: body.Options.StartAfter, Filter: body.Filter, Collation: body.Options.Collation.ops(), Partitions: partitions})
	if err != nil {
		return err
	}
	return s.serveStream(w, r, st, messageChunk)
}

// serveStream sends what an open stream selects, one {"result":...} line
// per item, until the client goes away or the stream ends. The status line
// and headers go out at once, so a client knows that everything committed
// from then on will reach it; body bytes only when there is an item.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, src *ops.Stream, render func([]byte, *ops.StreamItem) []byte) error {
	defer src.Close()
	ctx := r.Context()
	st := newStream(w, s.publicFor(r))
	if st.flusher == nil {
		return apierror.Errorf(apierror.Internal, "streaming is not supported by this connection")
	}
	// A client that does not read would block a write for good, and hold
	// its stream (its queue, its place) with it: every write has a
	// deadline (statusWriter), and one that passes it ends the request.
	st.start()
	st.flusher.Flush()
	var buf []byte
	for unflushed := 0; ; {
		items, err := src.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil // the client went away: nobody to tell
			}
			return st.finish(err)
		}
		buf = buf[:0]
		for i := range items {
			buf = append(buf, `{"result":`...)
			buf = render(buf, &items[i])
			buf = append(buf, "}\n"...)
		}
		if _, err := st.w.Write(buf); err != nil {
			return nil
		}
		// A consumer that keeps up gets each batch at once; one that is
		// behind gets what is waiting with one flush (one write to the
		// connection) instead of one per item.
		if unflushed++; !src.Ready() || unflushed == maxUnflushed {
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
// the document as stored (compacted if it was stored pretty-printed),
// absent on delete. "left_filter":true follows "last" on a filtered
// stream's change that took its document out of the filter, and only there;
// "expired":true after it on a delete of a document past its ttl.
func eventChunk(b []byte, ev *ops.StreamItem) []byte {
	b = append(b, `{"event":{"tx_id":"`...)
	b = base64.StdEncoding.AppendEncode(b, ev.TxID[:])
	b = append(b, `","collection":`...)
	b = jsonscan.AppendQuote(b, ev.Collection)
	b = append(b, `,"op":"`...)
	b = append(b, ev.Op...)
	b = append(b, `","key":"`...)
	b = base64.StdEncoding.AppendEncode(b, ev.Key)
	b = append(b, '"')
	if ev.Data != nil {
		b = append(b, `,"data":`...)
		b = appendDocument(b, ev.Data)
	}
	if ev.Last {
		b = append(b, `,"last":true`...)
	} else {
		b = append(b, `,"last":false`...)
	}
	if ev.LeftFilter {
		b = append(b, `,"left_filter":true`...)
	}
	if ev.Expired {
		b = append(b, `,"expired":true`...)
	}
	b = append(b, `,"position":"`...)
	b = append(b, ev.Position...)
	return append(b, `"}}`...)
}

// messageChunk renders a message: {"message":…,"position":…}.
func messageChunk(b []byte, ev *ops.StreamItem) []byte {
	b = append(b, `{"message":`...)
	b = appendDocument(b, ev.Data)
	b = append(b, `,"position":"`...)
	b = append(b, ev.Position...)
	return append(b, `"}`...)
}
