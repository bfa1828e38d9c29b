package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// The final API's search indexes, under
// /v1/projects/{project}/search/indexes (the routes of tigris-client-go
// v1.0.0's search.pb.gw.go), answered in the original's shapes.
func (s *Server) searchIndexRoutes(handle func(string, func(http.ResponseWriter, *http.Request) error)) {
	const indexes = projectsPrefix + "/{db}/search/indexes"
	const docs = indexes + "/{index}/documents"
	handle("PUT "+indexes+"/{index}", s.createOrUpdateIndex)
	handle("GET "+indexes+"/{index}", s.getIndex)
	handle("DELETE "+indexes+"/{index}", s.deleteIndex)
	handle("GET "+indexes, s.listIndexes)
	handle("GET "+docs, s.indexGet)
	handle("POST "+docs+"/{id}", s.indexCreateByID)
	handle("POST "+docs, s.indexCreate)
	handle("PUT "+docs, s.indexCreateOrReplace)
	handle("PATCH "+docs, s.indexUpdate)
	handle("DELETE "+docs, s.indexDelete)
	handle("DELETE "+docs+"/deleteByQuery", s.indexDeleteByQuery)
	handle("POST "+docs+"/search", s.indexSearch)
}

type indexBody struct {
	Schema     json.RawMessage `json:"schema"`
	OnlyCreate bool            `json:"only_create"`
}

func (s *Server) createOrUpdateIndex(w http.ResponseWriter, r *http.Request) error {
	var body indexBody
	malformed := decode(r, &body, nil)
	req := ops.IndexRequest{Malformed: malformed, Project: r.PathValue("db"), Name: r.PathValue("index"), Schema: body.Schema, OnlyCreate: body.OnlyCreate}
	if _, err := s.ops.CreateOrUpdateIndex(r.Context(), caller(r), req); err != nil {
		return err
	}
	// The original answered "created" whether it created or changed one.
	writeJSON(w, http.StatusOK, statusMessage{Status: "created"})
	return nil
}

type indexInfo struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

func (s *Server) getIndex(w http.ResponseWriter, r *http.Request) error {
	req := ops.IndexRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db"), Name: r.PathValue("index")}
	info, err := s.ops.GetIndex(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Index indexInfo `json:"index"`
	}{indexInfo{Name: info.Name, Schema: info.Schema}})
	return nil
}

func (s *Server) deleteIndex(w http.ResponseWriter, r *http.Request) error {
	req := ops.IndexRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db"), Name: r.PathValue("index")}
	if err := s.ops.DeleteIndex(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "deleted"})
	return nil
}

// listIndexes reads the original's filter from the query, as the
// gateway put a GET's message fields: filter.type, filter.collection.
func (s *Server) listIndexes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := ops.ListIndexesRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db"),
		SourceType: q.Get("filter.type"), SourceOfColl: q.Get("filter.collection")}
	list, err := s.ops.ListIndexes(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := make([]indexInfo, len(list))
	for i, idx := range list {
		out[i] = indexInfo{Name: idx.Name, Schema: idx.Schema}
	}
	writeJSON(w, http.StatusOK, struct {
		Indexes []indexInfo `json:"indexes"`
	}{out})
	return nil
}

type docStatus struct {
	ID    string          `json:"id"`
	Error *docStatusError `json:"error"`
}

type docStatusError struct {
	Code    int32  `json:"code"`
	Message string `json:"message"`
}

func writeStatuses(w http.ResponseWriter, statuses []ops.DocStatus) {
	out := make([]docStatus, len(statuses))
	for i, st := range statuses {
		out[i].ID = st.ID
		if st.Err != nil {
			out[i].Error = &docStatusError{Code: st.OriginalCode(), Message: st.Err.Message}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Status []docStatus `json:"status"`
	}{out})
}

type indexDocumentsBody struct {
	Documents []json.RawMessage `json:"documents"`
	IDs       []string          `json:"ids"`
	Filter    json.RawMessage   `json:"filter"`
}

func (s *Server) indexDocumentsRequest(r *http.Request) ops.IndexDocumentsRequest {
	var body indexDocumentsBody
	req := ops.IndexDocumentsRequest{Malformed: decode(r, &body, nil), Project: r.PathValue("db"), Index: r.PathValue("index"),
		IDs: body.IDs, Filter: body.Filter}
	for _, d := range body.Documents {
		req.Documents = append(req.Documents, d)
	}
	return req
}

type indexWriteCall func(ctx context.Context, c ops.Caller, req ops.IndexDocumentsRequest) ([]ops.DocStatus, error)

func (s *Server) indexWrite(w http.ResponseWriter, r *http.Request, call indexWriteCall) error {
	statuses, err := call(r.Context(), caller(r), s.indexDocumentsRequest(r))
	if err != nil {
		return err
	}
	writeStatuses(w, statuses)
	return nil
}

func (s *Server) indexCreate(w http.ResponseWriter, r *http.Request) error {
	return s.indexWrite(w, r, s.ops.IndexCreate)
}

func (s *Server) indexCreateOrReplace(w http.ResponseWriter, r *http.Request) error {
	return s.indexWrite(w, r, s.ops.IndexCreateOrReplace)
}

func (s *Server) indexUpdate(w http.ResponseWriter, r *http.Request) error {
	return s.indexWrite(w, r, s.ops.IndexUpdate)
}

func (s *Server) indexDelete(w http.ResponseWriter, r *http.Request) error {
	return s.indexWrite(w, r, s.ops.IndexDelete)
}

func (s *Server) indexCreateByID(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Document json.RawMessage `json:"document"`
	}
	id := r.PathValue("id")
	req := ops.IndexDocumentsRequest{Malformed: decode(r, &body, nil), Project: r.PathValue("db"), Index: r.PathValue("index"),
		IDs: []string{id}}
	if len(body.Document) > 0 {
		req.Documents = [][]byte{body.Document}
	}
	if err := s.ops.IndexCreateByID(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ID string `json:"id"`
	}{id})
	return nil
}

// indexGet reads the ids from the query (?ids=1&ids=2), as the gateway
// put a GET's repeated field; a missing id is a null in its place.
func (s *Server) indexGet(w http.ResponseWriter, r *http.Request) error {
	req := ops.IndexDocumentsRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db"), Index: r.PathValue("index"),
		IDs: r.URL.Query()["ids"]}
	docs, err := s.ops.IndexGet(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := make([]*searchHit, len(docs))
	for i, d := range docs {
		if d != nil {
			out[i] = &searchHit{Data: d.Data, Metadata: metadata{CreatedAt: timestamp(d.CreatedAt), UpdatedAt: timestamp(d.UpdatedAt)}}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Documents []*searchHit `json:"documents"`
	}{out})
	return nil
}

func (s *Server) indexDeleteByQuery(w http.ResponseWriter, r *http.Request) error {
	n, err := s.ops.IndexDeleteByQuery(r.Context(), caller(r), s.indexDocumentsRequest(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Count int `json:"count"`
	}{n})
	return nil
}

// indexSearch streams a search's pages, one {"result":...} line per page,
// as a collection's search does.
func (s *Server) indexSearch(w http.ResponseWriter, r *http.Request) error {
	var body searchBody
	malformed := decode(r, &body, nil)
	req := ops.IndexSearchRequest{Index: r.PathValue("index"),
		SearchRequest: ops.SearchRequest{Malformed: malformed, DB: r.PathValue("db"), GroupBy: body.GroupBy, Vector: body.Vector,
			Q: body.Q, SearchFields: body.SearchFields, Filter: body.Filter, Facet: body.Facet, Sort: body.Sort,
			IncludeFields: body.IncludeFields, ExcludeFields: body.ExcludeFields,
			Page: clampInt(int64(body.Page)), PageSize: clampInt(int64(body.PageSize)), Collation: body.Collation.ops()}}
	stream := searchStream(w, s.publicFor(r), req.Page > 0)
	err := s.ops.IndexSearch(r.Context(), caller(r), req, func(p ops.SearchPage) error {
		tail, err := searchChunkTail(p)
		if err != nil {
			return err
		}
		return stream.sendAppend(func(b []byte) []byte { return appendSearchChunk(b, p, tail) })
	})
	return stream.finish(err)
}
