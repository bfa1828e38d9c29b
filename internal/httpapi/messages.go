package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/docs"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/status"
	"github.com/foliodb/folio/internal/streams"
)

type publishResponse struct {
	Metadata metadata `json:"metadata"`
	Status   string   `json:"status"`
	Keys     [][]byte `json:"keys"` // base64 in JSON
}

// publish stores messages in a messages collection (reference §7), in the
// client's transaction if the request carries one.
func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Options  struct {
			Partition int64 `json:"partition"`
		} `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Messages) == 0 {
		return status.Errorf(status.InvalidArgument, "empty messages received")
	}
	if len(req.Messages) > s.cfg.MaxDocumentsPerRequest {
		return status.Errorf(status.InvalidArgument, "%d messages in one request, the limit is %d", len(req.Messages), s.cfg.MaxDocumentsPerRequest)
	}
	if err := messages.CheckPartition(req.Options.Partition); err != nil {
		return err
	}
	msgs := make([][]byte, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = m
	}
	var res *messages.PublishResult
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		res, err = s.messages.Publish(r.Context(), tx, coll, req.Options.Partition, msgs)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, publishResponse{Metadata: metadata{CreatedAt: timestamp(res.Time)}, Status: "published", Keys: res.Keys})
	return nil
}

// subscribe streams the messages published to a messages collection from
// now (or after a position), narrowed by a filter (reference §7).
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Filter  json.RawMessage `json:"filter"`
		Options struct {
			startOptions
			Partitions []int64          `json:"partitions"`
			Collation  filter.Collation `json:"collation"`
		} `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	for _, p := range req.Options.Partitions {
		if err := messages.CheckPartition(p); err != nil {
			return err
		}
	}
	start, err := req.Options.cursor()
	if err != nil {
		return err
	}
	coll, err := s.lookup(r, dbName, collName)
	if err != nil {
		return err
	}
	if err := messages.Require(coll, "subscribe"); err != nil {
		return err
	}
	var match func([]byte) (bool, error)
	if !isNull(req.Filter) {
		f, err := filter.Parse(req.Filter, coll.Schema, req.Options.Collation)
		if err != nil {
			return err
		}
		if !f.MatchesAll() {
			match = f.Matches
		}
	}
	return s.serveStream(w, r, start, streams.Messages(dbName, collName, match), messageChunk)
}

// messageChunk renders a message: {"message":…,"position":…}.
func messageChunk(b []byte, ev *streams.Event) []byte {
	b = append(b, `{"message":`...)
	b = append(b, ev.Record.Data...)
	b = append(b, `,"position":"`...)
	b = append(b, ev.Cursor.String()...)
	return append(b, `"}`...)
}

// readItems streams a read of what a collection holds: its documents, or
// the stored messages of a messages collection. The original served
// documents/read and messages/read with one operation, so both paths read
// either kind.
func (s *Server) readItems(ctx context.Context, tx kv.Tx, coll *catalog.Collection, rr docs.ReadRequest, st *stream) error {
	if coll.Schema.CollectionType() != schema.Messages {
		return s.docs.Read(ctx, tx, coll, rr, func(item docs.ReadItem) error {
			return st.send(readChunk(item))
		})
	}
	if len(rr.Sort) > 0 {
		return status.Errorf(status.InvalidArgument, "sort is not supported on messages collections: messages are read in publish order")
	}
	mr := messages.ReadRequest{Filter: rr.Filter, Include: rr.Include, Exclude: rr.Exclude, Limit: rr.Limit, Skip: rr.Skip, After: rr.After}
	return s.messages.Read(ctx, tx, coll, mr, func(m messages.Item) error {
		return st.send(readChunk(docs.ReadItem{Data: m.Data, CreatedAt: m.CreatedAt, ResumeToken: m.ResumeToken}))
	})
}
