package httpapi

import (
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// indexBuildRequest reads the body of an index-build call: only a branch.
func indexBuildRequest(r *http.Request) ops.IndexBuildRequest {
	var body struct {
		Branch string `json:"branch"`
	}
	malformed := decode(r, &body, nil)
	return ops.IndexBuildRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch), Collection: r.PathValue("collection")}
}

// collectionIndex is the final API's CollectionIndex.
type collectionIndex struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Fields is left out of the system indexes', as the original did.
	Fields []indexField `json:"fields,omitempty"`
}

type indexField struct {
	Name string `json:"name"`
}

func collectionIndexes(in []ops.CollectionIndex) []collectionIndex {
	out := make([]collectionIndex, len(in))
	for i, x := range in {
		out[i] = collectionIndex{Name: x.Name, State: x.State, Fields: make([]indexField, len(x.Fields))}
		for j, f := range x.Fields {
			out[i].Fields[j] = indexField{Name: f}
		}
	}
	return out
}

func (s *Server) buildCollectionIndex(w http.ResponseWriter, r *http.Request) error {
	indexes, err := s.ops.BuildCollectionIndex(r.Context(), caller(r), indexBuildRequest(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Indexes []collectionIndex `json:"indexes"`
	}{collectionIndexes(indexes)})
	return nil
}

func (s *Server) buildSearchIndex(w http.ResponseWriter, r *http.Request) error {
	st, err := s.ops.BuildSearchIndex(r.Context(), caller(r), indexBuildRequest(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{st})
	return nil
}
