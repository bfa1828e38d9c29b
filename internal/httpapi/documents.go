package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/ops"
)

// metadata is the API's ResponseMetadata; times are RFC 3339 with
// nanoseconds, and absent ones are left out.
type metadata struct {
	CreatedAt string `json:"created_at,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
	DeletedAt string `json:"deleted_at,omitempty"`
}

// headerSchemaSignOff set to "true" on an insert or replace keeps the
// members of its documents that the schema does not know, as the
// original's header of this name turned validation off (see
// ops.WriteDocumentsRequest.SchemaSignedOff).
const headerSchemaSignOff = "Tigris-Schema-Sign-Off"

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// collation is the API's collation object, {"case":"ci"}.
type collation struct {
	Case string `json:"case"`
}

func (c collation) ops() ops.Collation { return ops.Collation{Case: c.Case} }

type writeOptions struct {
	Collation collation   `json:"collation"`
	Limit     int64Option `json:"limit"`
}

type writeResponse struct {
	Metadata      metadata          `json:"metadata"`
	Status        string            `json:"status"`
	Keys          []json.RawMessage `json:"keys,omitempty"`
	ModifiedCount int               `json:"modified_count,omitempty"`
}

func (s *Server) insert(w http.ResponseWriter, r *http.Request) error {
	return s.writeDocuments(w, r, "inserted", s.ops.Insert)
}

func (s *Server) replace(w http.ResponseWriter, r *http.Request) error {
	return s.writeDocuments(w, r, "replaced", s.ops.Replace)
}

func (s *Server) writeDocuments(w http.ResponseWriter, r *http.Request, done string, write func(context.Context, ops.Caller, ops.WriteDocumentsRequest) (*ops.WriteResult, error)) error {
	var body struct {
		Documents []json.RawMessage `json:"documents"`
		Options   struct{}          `json:"options"`
		Branch    string            `json:"branch"`
	}
	malformed := decode(r, &body, writeOnlyOptions)
	req := ops.WriteDocumentsRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch), Tx: txRef(r),
		Documents: make([][]byte, len(body.Documents)), SchemaSignedOff: r.Header.Get(headerSchemaSignOff) == "true"}
	for i, d := range body.Documents {
		req.Documents[i] = d
	}
	res, err := write(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{CreatedAt: timestamp(res.Time)}, Status: done, Keys: res.Keys})
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter  json.RawMessage `json:"filter"`
		Fields  json.RawMessage `json:"fields"`
		Options writeOptions    `json:"options"`
		Branch  string          `json:"branch"`
	}
	malformed := decode(r, &body, filterWriteOptions)
	res, err := s.ops.Update(r.Context(), caller(r), ops.UpdateRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch), Tx: txRef(r),
		Filter: body.Filter, Fields: body.Fields, Collation: body.Options.Collation.ops(), Limit: int64(body.Options.Limit)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{UpdatedAt: timestamp(res.Time)}, Status: "updated", ModifiedCount: res.Modified})
	return nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter  json.RawMessage `json:"filter"`
		Options writeOptions    `json:"options"`
		Branch  string          `json:"branch"`
	}
	malformed := decode(r, &body, filterWriteOptions)
	res, err := s.ops.Delete(r.Context(), caller(r), ops.DeleteRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch), Tx: txRef(r),
		Filter: body.Filter, Collation: body.Options.Collation.ops(), Limit: int64(body.Options.Limit)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, writeResponse{Metadata: metadata{DeletedAt: timestamp(res.Time)}, Status: "deleted", ModifiedCount: res.Modified})
	return nil
}

// readMembers are the members of a read body that rawMembers decodes.
var readMembers = []string{"filter", "fields", "sort", "branch"}

// decodeRead reads the body of a read (and of an explain).
func decodeRead(r *http.Request) ops.ReadRequest {
	var body struct {
		Filter json.RawMessage `json:"filter"`
		Fields json.RawMessage `json:"fields"`
		Sort   json.RawMessage `json:"sort"`
		// Count, Folio's own member of an explain's body, explains a
		// count of the filter rather than a read.
		Count   bool `json:"count"`
		Options struct {
			Limit     int64Option `json:"limit"`
			Skip      int64Option `json:"skip"`
			Offset    []byte      `json:"offset"` // base64 in JSON
			Collation collation   `json:"collation"`
		} `json:"options"`
		Branch string `json:"branch"`
	}
	// Most reads are only a filter, perhaps with fields, a sort or (in the
	// 2023 API) a branch: those skip encoding/json's reflection, a
	// twentieth of a point read's CPU.
	malformed := decodeFast(r, &body, readOptions, func(b []byte) bool {
		var branch json.RawMessage
		if !rawMembers(b, readMembers, []*json.RawMessage{&body.Filter, &body.Fields, &body.Sort, &branch}) {
			return false
		}
		// A branch that is not a plain string: encoding/json decides.
		return branch == nil || plainString(branch, &body.Branch)
	})
	return ops.ReadRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch), Tx: txRef(r),
		Filter: body.Filter, Fields: body.Fields, Sort: body.Sort, Limit: int64(body.Options.Limit), Skip: int64(body.Options.Skip),
		Offset: body.Options.Offset, Collation: body.Options.Collation.ops(), Count: body.Count}
}

// read streams what a collection holds, one {"result":...} line per item:
// documents/read and messages/read alike; or answers it as one object when
// asked to (acceptsOneObject).
func (s *Server) read(w http.ResponseWriter, r *http.Request) error {
	req := decodeRead(r)
	if acceptsOneObject(r) {
		return s.readOneObject(w, r, req)
	}
	stream := newBatchedStream(w, s.publicFor(r))
	err := s.ops.Read(r.Context(), caller(r), req, func(item ops.Item) error {
		return stream.sendAppend(func(b []byte) []byte { return appendReadChunk(b, item) })
	})
	return stream.finish(err)
}

// explain answers how a read's filter is looked up: the plan, the
// documents it fetched and matched, and the keys it read.
//
// On a 2023 route the answer also has the 2023 API's members: the
// collection, the filter and sort as given, and read_type, whether an index
// serves the filter ("secondary index") or the primary key does, or
// nothing does ("primary index", as the original said of a full scan too).
func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	req := decodeRead(r)
	ex, err := s.ops.Explain(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := explanation{Plan: ex.Plan, Candidates: ex.Candidates, Matched: ex.Matched, KeysRead: ex.KeysRead}
	if isProjectRoute(r) {
		out.Collection, out.Filter, out.Sorting = req.Collection, string(req.Filter), string(req.Sort)
		out.ReadType = "primary index"
		if strings.HasPrefix(ex.Plan, "index") {
			out.ReadType = "secondary index"
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type explanation struct {
	Plan       string `json:"plan"`
	Candidates int    `json:"candidates"`
	Matched    int    `json:"matched"`
	KeysRead   int64  `json:"keys_read"`
	// The 2023 API's.
	Collection string `json:"collection,omitempty"`
	ReadType   string `json:"read_type,omitempty"`
	Filter     string `json:"filter,omitempty"`
	Sorting    string `json:"sorting,omitempty"`
}

// appendDocument appends a stored document to a stream's line. A document
// is stored as its client wrote it, which may be pretty-printed: a line
// break (which JSON allows only between tokens) would split the line, so
// such a document is compacted on the way out. Nothing (never stored, but
// cheap to guard) is null.
func appendDocument(b, doc []byte) []byte {
	if len(doc) == 0 {
		return append(b, "null"...)
	}
	// Two IndexBytes (vectorized) rather than ContainsAny's byte loop:
	// every document of every read passes here.
	if bytes.IndexByte(doc, '\n') >= 0 || bytes.IndexByte(doc, '\r') >= 0 {
		var out bytes.Buffer
		if err := json.Compact(&out, doc); err == nil {
			return append(b, out.Bytes()...)
		}
	}
	return append(b, doc...)
}

// appendReadChunk renders one read item:
// {"data":...,"metadata":...,"resume_token":...}.
func appendReadChunk(b []byte, item ops.Item) []byte {
	b = append(b, `{"data":`...)
	b = appendDocument(b, item.Data)
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
