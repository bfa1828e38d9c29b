package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/docs"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
)

// metadata is the API's ResponseMetadata; times are RFC 3339 with
// nanoseconds, and absent ones are left out.
type metadata struct {
	CreatedAt string `json:"created_at,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
	DeletedAt string `json:"deleted_at,omitempty"`
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

type writeOptions struct {
	Collation filter.Collation `json:"collation"`
}

type writeResponse struct {
	Metadata      metadata          `json:"metadata"`
	Status        string            `json:"status"`
	Keys          []json.RawMessage `json:"keys,omitempty"`
	ModifiedCount int               `json:"modified_count,omitempty"`
}

func (s *Server) insert(w http.ResponseWriter, r *http.Request) error {
	return s.writeDocuments(w, r, "inserted", s.docs.Insert)
}

func (s *Server) replace(w http.ResponseWriter, r *http.Request) error {
	return s.writeDocuments(w, r, "replaced", s.docs.Replace)
}

// writeFunc is docs.Service.Insert or Replace.
type writeFunc func(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*docs.WriteResult, error)

func (s *Server) writeDocuments(w http.ResponseWriter, r *http.Request, done string, op writeFunc) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Documents []json.RawMessage `json:"documents"`
		Options   struct{}          `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Documents) == 0 {
		return status.Errorf(status.InvalidArgument, "empty documents received")
	}
	if len(req.Documents) > s.cfg.MaxDocumentsPerRequest {
		return status.Errorf(status.InvalidArgument, "%d documents in one request, the limit is %d", len(req.Documents), s.cfg.MaxDocumentsPerRequest)
	}
	documents := make([][]byte, len(req.Documents))
	for i, d := range req.Documents {
		documents[i] = d
	}
	var res *docs.WriteResult
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		res, err = op(r.Context(), tx, coll, documents)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{CreatedAt: timestamp(res.Time)}, Status: done, Keys: res.Keys})
	return nil
}

// parseFilter reads a request's filter, which must be present.
func parseFilter(raw json.RawMessage, coll *catalog.Collection, c filter.Collation) (filter.Filter, error) {
	if isNull(raw) {
		return filter.Filter{}, status.Errorf(status.InvalidArgument, "filter is a required field")
	}
	return filter.Parse(raw, coll.Schema, c)
}

// filteredWrite runs fn in the request's transaction with the collection
// and its parsed filter: the shared part of update and delete.
func (s *Server) filteredWrite(r *http.Request, dbName, collName string, rawFilter json.RawMessage, c filter.Collation, fn func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) error) error {
	return s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		f, err := parseFilter(rawFilter, coll, c)
		if err != nil {
			return err
		}
		return fn(tx, coll, f)
	})
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Filter  json.RawMessage `json:"filter"`
		Fields  json.RawMessage `json:"fields"`
		Options writeOptions    `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if isNull(req.Fields) {
		return status.Errorf(status.InvalidArgument, "empty fields received")
	}
	if isNull(req.Filter) {
		return status.Errorf(status.InvalidArgument, "filter is a required field")
	}
	var res *docs.WriteResult
	err = s.filteredWrite(r, dbName, collName, req.Filter, req.Options.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		res, err = s.docs.Update(r.Context(), tx, coll, f, req.Fields)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{UpdatedAt: timestamp(res.Time)}, Status: "updated", ModifiedCount: res.Modified})
	return nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Filter  json.RawMessage `json:"filter"`
		Options writeOptions    `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if isNull(req.Filter) {
		return status.Errorf(status.InvalidArgument, "filter is a required field")
	}
	var res *docs.WriteResult
	err = s.filteredWrite(r, dbName, collName, req.Filter, req.Options.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		res, err = s.docs.Delete(r.Context(), tx, coll, f)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{DeletedAt: timestamp(res.Time)}, Status: "deleted"})
	return nil
}

type readOptions struct {
	Limit     int64            `json:"limit"`
	Skip      int64            `json:"skip"`
	Offset    []byte           `json:"offset"` // base64 in JSON
	Collation filter.Collation `json:"collation"`
}

// parseFields reads a read's projection: {"a":1,"b":true} returns only those
// fields, {"a":0} or {"a":false} everything but them.
func parseFields(raw json.RawMessage) (include, exclude map[string]bool, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, status.Errorf(status.InvalidArgument, "fields must be an object of field names to 1/true or 0/false")
	}
	include, exclude = map[string]bool{}, map[string]bool{}
	for name, v := range fields {
		switch string(bytes.TrimSpace(v)) {
		case "1", "true":
			include[name] = true
		case "0", "false":
			exclude[name] = true
		default:
			return nil, nil, status.Errorf(status.InvalidArgument, "field '%s' in fields must be 1, 0, true or false", name)
		}
	}
	if len(include) > 0 && len(exclude) > 0 {
		return nil, nil, status.Errorf(status.InvalidArgument, "fields cannot both include and exclude fields")
	}
	return include, exclude, nil
}

// readRequest is the body of a read (and of an explain).
type readRequest struct {
	Filter  json.RawMessage `json:"filter"`
	Fields  json.RawMessage `json:"fields"`
	Sort    json.RawMessage `json:"sort"`
	Options readOptions     `json:"options"`
}

// decodeRead reads and checks a read's body, all but the filter (which
// needs the collection's schema).
func decodeRead(r *http.Request) (*readRequest, docs.ReadRequest, error) {
	var req readRequest
	if err := decode(r, &req); err != nil {
		return nil, docs.ReadRequest{}, err
	}
	if isNull(req.Filter) {
		return nil, docs.ReadRequest{}, status.Errorf(status.InvalidArgument, "filter is a required field")
	}
	if req.Options.Limit < 0 || req.Options.Skip < 0 {
		return nil, docs.ReadRequest{}, status.Errorf(status.InvalidArgument, "limit and skip must not be negative")
	}
	include, exclude, err := parseFields(req.Fields)
	if err != nil {
		return nil, docs.ReadRequest{}, err
	}
	sort, err := parseSort(req.Sort)
	if err != nil {
		return nil, docs.ReadRequest{}, err
	}
	return &req, docs.ReadRequest{Include: include, Exclude: exclude, Limit: req.Options.Limit, Skip: req.Options.Skip, After: req.Options.Offset, Sort: sort}, nil
}

// parseSort reads [{"field":"$asc"}, {"other":"$desc"}].
func parseSort(raw json.RawMessage) ([]docs.SortField, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []map[string]string
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, status.Errorf(status.InvalidArgument, `sort must be an array such as [{"field":"$asc"}]`)
	}
	var out []docs.SortField
	for _, item := range items {
		if len(item) != 1 {
			return nil, status.Errorf(status.InvalidArgument, "each sort item names one field")
		}
		for path, order := range item {
			switch order {
			case "$asc":
				out = append(out, docs.SortField{Path: path})
			case "$desc":
				out = append(out, docs.SortField{Path: path, Desc: true})
			default:
				return nil, status.Errorf(status.InvalidArgument, "sort order of '%s' must be $asc or $desc, not '%s'", path, order)
			}
		}
	}
	return out, nil
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	req, rr, err := decodeRead(r)
	if err != nil {
		return err
	}
	stream := newBatchedStream(w)
	// A read is one transaction that only reads: it never conflicts, so it
	// is never retried, and nothing is sent twice.
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		if rr.Filter, err = parseFilter(req.Filter, coll, req.Options.Collation); err != nil {
			return err
		}
		return s.readItems(r.Context(), tx, coll, rr, stream)
	})
	return stream.finish(err)
}

// explain answers how a read's filter is looked up: the plan, the
// documents it fetched and matched, and the keys it read. It is Folio's
// own endpoint, for developers and operators.
func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	req, rr, err := decodeRead(r)
	if err != nil {
		return err
	}
	var ex *docs.Explanation
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		if rr.Filter, err = parseFilter(req.Filter, coll, req.Options.Collation); err != nil {
			return err
		}
		ex, err = s.docs.Explain(r.Context(), tx, coll, rr)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ex)
	return nil
}

// readChunk renders one read item: {"data":...,"metadata":...,"resume_token":...}.
func readChunk(item docs.ReadItem) []byte {
	b := make([]byte, 0, len(item.Data)+160)
	b = append(b, `{"data":`...)
	b = append(b, item.Data...)
	b = append(b, `,"metadata":{"created_at":"`...)
	b = item.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if !item.UpdatedAt.IsZero() {
		b = append(b, `,"updated_at":"`...)
		b = item.UpdatedAt.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = append(b, `},"resume_token":"`...)
	b = base64.StdEncoding.AppendEncode(b, item.ResumeToken)
	return append(b, `"}`...)
}
