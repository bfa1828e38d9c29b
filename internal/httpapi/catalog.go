package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// emptyObject is the metadata the API sends: the original's metadata
// messages had no fields in this era.
var emptyObject = json.RawMessage(`{}`)

// optionsOnly is the body of the requests that take nothing but options,
// none of which Folio reads yet; decoding into it still refuses options of
// the wrong type, as the original did.
type optionsOnly struct {
	Options struct{} `json:"options"`
}

// databaseBody is the body of the requests that name only a database (or
// a collection) by their path: options, and the branch of the 2023 API.
type databaseBody struct {
	Options struct{} `json:"options"`
	Branch  string   `json:"branch"`
}

type statusMessage struct {
	Message string `json:"message"`
	Status  string `json:"status"`
}

type databaseInfo struct {
	DB       string          `json:"db"`
	Metadata json.RawMessage `json:"metadata"`
}

type collectionInfo struct {
	Collection string          `json:"collection"`
	Metadata   json.RawMessage `json:"metadata"`
}

type collectionDescription struct {
	Collection string          `json:"collection"`
	Metadata   json.RawMessage `json:"metadata"`
	// Schema is the schema as given (a json.RawMessage) or, when the
	// request had a schema_format, the object of generated source texts by
	// format (a map[string]string).
	Schema any   `json:"schema"`
	Size   int64 `json:"size"`
	// Indexes, on the 2023 routes only (the 2022 answer has none).
	Indexes []collectionIndex `json:"indexes,omitempty"`
	// SearchStatus, in the 2023 describe of a collection only (not of a
	// database's collections, as in the original).
	SearchStatus string `json:"search_status,omitempty"`
	Sizes        sizes  `json:"sizes"`
	// ExpiredPending, for a collection with a ttl: its documents past
	// their time not deleted yet.
	ExpiredPending *int64 `json:"expired_pending,omitempty"`
}

// withIndexes is d's description with its indexes, for a 2023 route.
func withIndexes(c collectionDescription, d ops.CollectionDescription) collectionDescription {
	c.Indexes = collectionIndexes(d.Indexes)
	return c
}

// sizes is Folio's breakdown of what a collection or database takes, beside
// the original's size (its documents).
type sizes struct {
	Documents int64 `json:"documents"`
	Indexes   int64 `json:"indexes"`
	// Log is the server's change log, in a database's description only:
	// the log is one for every database, not a collection's.
	Log *int64 `json:"log,omitempty"`
}

func describedCollection(d ops.CollectionDescription) collectionDescription {
	var schema any = json.RawMessage(d.Schema)
	if d.Generated != nil {
		schema = d.Generated
	}
	return collectionDescription{Collection: d.Name, Metadata: emptyObject, Schema: schema, Size: d.Size,
		Sizes: sizes{Documents: d.Size, Indexes: d.IndexSize}, ExpiredPending: d.ExpiredPending}
}

// describeBody is the body of both describes: options, which Folio does
// not read, and schema_format (reference §10b).
type describeBody struct {
	SchemaFormat string   `json:"schema_format"`
	Options      struct{} `json:"options"`
	Branch       string   `json:"branch"`
}

// databaseRequest decodes a request that names only a database.
func databaseRequest(r *http.Request) ops.DatabaseRequest {
	var body databaseBody
	malformed := decode(r, &body, noOptions)
	return ops.DatabaseRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch), Tx: txRef(r)}
}

// collectionRequest decodes a request that names only a collection.
func collectionRequest(r *http.Request) ops.CollectionRequest {
	var body databaseBody
	malformed := decode(r, &body, noOptions)
	return ops.CollectionRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch), Tx: txRef(r)}
}

func (s *Server) createDatabase(w http.ResponseWriter, r *http.Request) error {
	req := databaseRequest(r)
	if err := s.ops.CreateDatabase(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "database created successfully", Status: "created"})
	return nil
}

func (s *Server) dropDatabase(w http.ResponseWriter, r *http.Request) error {
	req := databaseRequest(r)
	if err := s.ops.DropDatabase(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "database dropped successfully", Status: "dropped"})
	return nil
}

func (s *Server) listDatabases(w http.ResponseWriter, r *http.Request) error {
	// The published ListDatabasesRequest has no options.
	if err := decode(r, &optionsOnly{}, nil); err != nil {
		return err
	}
	dbs, err := s.ops.ListDatabases(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := make([]databaseInfo, len(dbs))
	for i, d := range dbs {
		out[i] = databaseInfo{DB: d.Name, Metadata: emptyObject}
	}
	writeJSON(w, http.StatusOK, map[string]any{"databases": out})
	return nil
}

func (s *Server) describeDatabase(w http.ResponseWriter, r *http.Request) error {
	var body describeBody
	req := ops.DatabaseRequest{Malformed: decode(r, &body, nil), DB: r.PathValue("db"), Tx: txRef(r)}
	// After decode: a literal's order of evaluation is not Go's promise.
	req.SchemaFormat, req.Branch = body.SchemaFormat, branchOf(r, body.Branch)
	d, err := s.ops.DescribeDatabase(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	// collections is [] rather than null when empty: some clients crash on null.
	colls := make([]collectionDescription, len(d.Collections))
	for i, c := range d.Collections {
		colls[i] = describedCollection(c)
		if isProjectRoute(r) {
			colls[i] = withIndexes(colls[i], c)
		}
	}
	sz := sizes{Documents: d.Size, Indexes: d.IndexSize}
	if d.LogSize >= 0 {
		sz.Log = &d.LogSize
	}
	out := map[string]any{"metadata": emptyObject, "collections": colls, "size": d.Size, "sizes": sz}
	// The 2023 answer has no db, and names the project's branches.
	if isProjectRoute(r) {
		out["branches"] = d.Branches
	} else {
		out["db"] = d.Name
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) error {
	req := databaseRequest(r)
	list, err := s.ops.ListCollections(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := make([]collectionInfo, len(list))
	for i, c := range list {
		out[i] = collectionInfo{Collection: c.Name, Metadata: emptyObject}
	}
	writeJSON(w, http.StatusOK, map[string]any{"collections": out})
	return nil
}

func (s *Server) createOrUpdateCollection(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Schema     json.RawMessage `json:"schema"`
		OnlyCreate bool            `json:"only_create"`
		Options    struct{}        `json:"options"`
		Branch     string          `json:"branch"`
	}
	malformed := decode(r, &body, noOptions)
	res, err := s.ops.CreateOrUpdateCollection(r.Context(), caller(r), ops.CreateCollectionRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"),
		Branch: branchOf(r, body.Branch), Tx: txRef(r), Schema: body.Schema, OnlyCreate: body.OnlyCreate})
	if err != nil {
		return err
	}
	// The original sends the same message and status for an update.
	writeJSON(w, http.StatusOK, statusMessage{Message: "collection of type '" + res.Type + "' created successfully", Status: "created"})
	return nil
}

func (s *Server) dropCollection(w http.ResponseWriter, r *http.Request) error {
	req := collectionRequest(r)
	if err := s.ops.DropCollection(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "collection dropped successfully", Status: "dropped"})
	return nil
}

func (s *Server) describeCollection(w http.ResponseWriter, r *http.Request) error {
	var body describeBody
	req := ops.CollectionRequest{Malformed: decode(r, &body, noOptions), DB: r.PathValue("db"), Collection: r.PathValue("collection"), Tx: txRef(r)}
	req.SchemaFormat, req.Branch = body.SchemaFormat, branchOf(r, body.Branch)
	d, err := s.ops.DescribeCollection(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := describedCollection(*d)
	if isProjectRoute(r) {
		out = withIndexes(out, *d)
		out.SearchStatus = d.SearchStatus
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
