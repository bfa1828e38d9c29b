package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
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
	Schema     json.RawMessage `json:"schema"`
	Size       int64           `json:"size"`
}

// names reads the path's database (and collection, if the route has one),
// checking the collection name first as the original did.
func names(r *http.Request) (db, coll string, err error) {
	db, coll = r.PathValue("db"), r.PathValue("collection")
	if strings.Contains(r.Pattern, "{collection}") {
		if err := catalog.CheckCollectionName(coll); err != nil {
			return "", "", err
		}
	}
	return db, coll, catalog.CheckDatabaseName(db)
}

func (s *Server) createDatabase(w http.ResponseWriter, r *http.Request) error {
	db, _, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	if err := s.run(r.Context(), func(tx kv.Tx) error { return s.catalog.CreateDatabase(r.Context(), tx, db) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "database created successfully", Status: "created"})
	return nil
}

func (s *Server) dropDatabase(w http.ResponseWriter, r *http.Request) error {
	db, _, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	if err := s.run(r.Context(), func(tx kv.Tx) error { return s.catalog.DropDatabase(r.Context(), tx, db) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "database dropped successfully", Status: "dropped"})
	return nil
}

func (s *Server) listDatabases(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	out := []databaseInfo{}
	err := s.run(r.Context(), func(tx kv.Tx) error {
		dbs, err := s.catalog.ListDatabases(r.Context(), tx)
		out = out[:0]
		for _, d := range dbs {
			out = append(out, databaseInfo{DB: d.Name, Metadata: emptyObject})
		}
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"databases": out})
	return nil
}

func (s *Server) describeDatabase(w http.ResponseWriter, r *http.Request) error {
	name, _, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	var colls []collectionDescription
	var total int64
	err = s.run(r.Context(), func(tx kv.Tx) error {
		colls, total = []collectionDescription{}, 0
		db, err := s.catalog.Database(r.Context(), tx, name)
		if err != nil {
			return err
		}
		list, err := s.catalog.ListCollections(r.Context(), tx, db)
		if err != nil {
			return err
		}
		for _, c := range list {
			d, err := s.describe(r, tx, c)
			if err != nil {
				return err
			}
			total += d.Size
			colls = append(colls, d)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// collections is [] rather than null when empty: some clients crash on null.
	writeJSON(w, http.StatusOK, map[string]any{"db": name, "metadata": emptyObject, "collections": colls, "size": total})
	return nil
}

func (s *Server) describe(r *http.Request, tx kv.Tx, c *catalog.Collection) (collectionDescription, error) {
	size, err := s.catalog.Size(r.Context(), tx, c)
	if err != nil {
		return collectionDescription{}, err
	}
	return collectionDescription{Collection: c.Name, Metadata: emptyObject, Schema: c.Schema.Raw(), Size: size}, nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) error {
	name, _, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	out := []collectionInfo{}
	err = s.inTx(r, name, func(tx kv.Tx) error {
		out = out[:0]
		db, err := s.catalog.Database(r.Context(), tx, name)
		if err != nil {
			return err
		}
		list, err := s.catalog.ListCollections(r.Context(), tx, db)
		for _, c := range list {
			out = append(out, collectionInfo{Collection: c.Name, Metadata: emptyObject})
		}
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"collections": out})
	return nil
}

func (s *Server) createOrUpdateCollection(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	var req struct {
		Schema     json.RawMessage `json:"schema"`
		OnlyCreate bool            `json:"only_create"`
		Options    struct{}        `json:"options"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if isNull(req.Schema) {
		return status.Errorf(status.InvalidArgument, "schema is a required during collection creation")
	}
	var typ string
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		db, err := s.catalog.Database(r.Context(), tx, dbName)
		if err != nil {
			return err
		}
		if _, err := s.catalog.CreateOrUpdateCollection(r.Context(), tx, db, collName, req.Schema, req.OnlyCreate); err != nil {
			return err
		}
		coll, err := s.catalog.Collection(r.Context(), tx, db, collName)
		if err != nil {
			return err
		}
		typ = string(coll.Schema.CollectionType())
		return nil
	})
	if err != nil {
		return err
	}
	// The original sends the same message and status for an update.
	writeJSON(w, http.StatusOK, statusMessage{Message: "collection of type '" + typ + "' created successfully", Status: "created"})
	return nil
}

func (s *Server) dropCollection(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		db, err := s.catalog.Database(r.Context(), tx, dbName)
		if err != nil {
			return err
		}
		return s.catalog.DropCollection(r.Context(), tx, db, collName)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Message: "collection dropped successfully", Status: "dropped"})
	return nil
}

func (s *Server) describeCollection(w http.ResponseWriter, r *http.Request) error {
	dbName, collName, err := names(r)
	if err != nil {
		return err
	}
	if err := decode(r, &optionsOnly{}); err != nil {
		return err
	}
	var d collectionDescription
	err = s.inTx(r, dbName, func(tx kv.Tx) error {
		coll, err := s.collection(r, tx, dbName, collName)
		if err != nil {
			return err
		}
		d, err = s.describe(r, tx, coll)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// collection looks up a database and one of its collections.
func (s *Server) collection(r *http.Request, tx kv.Tx, dbName, collName string) (*catalog.Collection, error) {
	return s.catalog.Lookup(r.Context(), tx, dbName, collName)
}
