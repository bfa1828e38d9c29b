package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/foliodb/folio/internal/ops"
)

// The 2023 API (/v1/projects/{project}/database/...) makes the same calls
// as the 2022 one (/v1/databases/{db}/...), on the same handlers: its
// routes name the project {db} too, since a project is what a database
// was, and a request may name a branch in its body (or, on a GET, its
// query). On a 2022 route a branch is not read: every 2022 request is on
// main.

// projectsPrefix starts every route of the 2023 API's database calls.
const projectsPrefix = "/v1/projects"

// isProjectRoute reports whether a request came by a 2023 route. The
// path's prefix tells: no 2022 route starts with it.
func isProjectRoute(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, projectsPrefix) }

// branchOf is the branch a request is on: the body's branch member, or on
// a GET its query's branch, on a 2023 route; "" (main) on a 2022 one.
func branchOf(r *http.Request, body string) string {
	if !isProjectRoute(r) {
		return ""
	}
	if body == "" && r.Method == http.MethodGet {
		return r.URL.Query().Get("branch")
	}
	return body
}

// plainString stores a JSON string without escapes into s, and reports
// whether raw was one: the fast path of a read body's branch.
func plainString(raw json.RawMessage, s *string) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || strings.ContainsAny(string(raw[1:len(raw)-1]), `"\`) {
		return false
	}
	*s = string(raw[1 : len(raw)-1])
	return true
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	req := ops.DatabaseRequest{Malformed: decode(r, &optionsOnly{}, noOptions), DB: r.PathValue("db")}
	if err := s.ops.CreateProject(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "project created successfully", Status: "created"})
	return nil
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) error {
	req := ops.DatabaseRequest{Malformed: decode(r, &optionsOnly{}, noOptions), DB: r.PathValue("db")}
	if err := s.ops.DeleteProject(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "project deleted successfully", Status: "dropped"})
	return nil
}

type projectInfo struct {
	Project string `json:"project"`
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	list, err := s.ops.ListProjects(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := make([]projectInfo, len(list))
	for i, p := range list {
		out[i] = projectInfo{Project: p.Name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": out})
	return nil
}

// branchRequest decodes a create or delete branch: the names are in the
// path, the body has nothing Folio reads.
func branchRequest(r *http.Request) ops.BranchRequest {
	return ops.BranchRequest{Malformed: decode(r, &struct{}{}, nil), DB: r.PathValue("db"), Branch: r.PathValue("branch")}
}

func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.CreateBranch(r.Context(), caller(r), branchRequest(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "created"})
	return nil
}

func (s *Server) deleteBranch(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.DeleteBranch(r.Context(), caller(r), branchRequest(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "deleted"})
	return nil
}

type branchInfo struct {
	Branch string `json:"branch"`
}

func (s *Server) listBranches(w http.ResponseWriter, r *http.Request) error {
	req := ops.DatabaseRequest{Malformed: decode(r, &struct{}{}, nil), DB: r.PathValue("db")}
	list, err := s.ops.ListBranches(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := make([]branchInfo, len(list))
	for i, b := range list {
		out[i] = branchInfo{Branch: b}
	}
	writeJSON(w, http.StatusOK, map[string]any{"branches": out})
	return nil
}

type collectionStatus struct {
	Status string `json:"status"`
}

// createOrUpdateCollections applies several schemas at once, all or none.
// A schema that fails is an error response, as every other failure is,
// whose message names the schema's index. The original answered 200 with
// the error and its index (failedAtIndex) in the body, after applying the
// schemas before it; the final Go client turns either into an error.
func (s *Server) createOrUpdateCollections(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Schemas    []json.RawMessage `json:"schemas"`
		OnlyCreate bool              `json:"only_create"`
		Options    struct{}          `json:"options"`
		Branch     string            `json:"branch"`
	}
	malformed := decode(r, &body, noOptions)
	req := ops.CreateCollectionsRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch), Tx: txRef(r),
		Schemas: make([][]byte, len(body.Schemas)), OnlyCreate: body.OnlyCreate}
	for i, sch := range body.Schemas {
		req.Schemas[i] = sch
	}
	res, err := s.ops.CreateOrUpdateCollections(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	// As the original: "created" for a collection changed too.
	out := make([]collectionStatus, len(res.Collections))
	for i := range out {
		out[i] = collectionStatus{Status: "created"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"resp": out})
	return nil
}

// projectRoutes adds the 2023 API's routes of projects, branches and
// database calls, as the final clients' gateway defines them. The project
// is {db}, for the shared handlers. Calls the final API added beside
// these (count, import, the index builds) go in this block too.
func (s *Server) projectRoutes(handle func(pattern string, h func(http.ResponseWriter, *http.Request) error)) {
	const project = projectsPrefix + "/{db}"
	const db = project + "/database"
	const coll = db + "/collections/{collection}"

	// The gateway lists with GET; POST is accepted too, as 2022 lists are.
	handle("GET "+projectsPrefix, s.listProjects)
	handle("POST "+projectsPrefix, s.listProjects)
	handle("POST "+project+"/create", s.createProject)
	handle("DELETE "+project+"/delete", s.deleteProject)
	handle("POST "+db+"/describe", s.describeDatabase)

	handle("GET "+db+"/branches", s.listBranches)
	handle("POST "+db+"/branches", s.listBranches)
	handle("POST "+db+"/branches/{branch}/create", s.createBranch)
	handle("DELETE "+db+"/branches/{branch}/delete", s.deleteBranch)

	handle("POST "+db+"/transactions/begin", s.beginTransaction)
	handle("POST "+db+"/transactions/commit", s.commitTransaction)
	handle("POST "+db+"/transactions/rollback", s.rollbackTransaction)

	handle("GET "+db+"/collections", s.listCollections)
	handle("POST "+db+"/collections", s.listCollections)
	handle("POST "+db+"/collections/createOrUpdate", s.createOrUpdateCollections)
	handle("POST "+coll+"/createOrUpdate", s.createOrUpdateCollection)
	handle("DELETE "+coll+"/drop", s.dropCollection)
	handle("POST "+coll+"/describe", s.describeCollection)

	handle("POST "+coll+"/documents/insert", s.insert)
	handle("PUT "+coll+"/documents/replace", s.replace)
	handle("PUT "+coll+"/documents/update", s.update)
	handle("DELETE "+coll+"/documents/delete", s.delete)
	handle("POST "+coll+"/documents/read", s.read)
	handle("POST "+coll+"/documents/search", s.search)
	handle("POST "+coll+"/documents/explain", s.explain)
	// The document calls that have no 2022 path.
	handle("POST "+coll+"/documents/count", s.count)
	handle("POST "+coll+"/documents/aggregate", s.aggregate)
	handle("POST "+coll+"/documents/import", s.importDocuments)
	handle("POST "+coll+"/documents/index", s.buildCollectionIndex)
	handle("POST "+coll+"/documents/search/index", s.buildSearchIndex)
}
