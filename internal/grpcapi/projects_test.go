package grpcapi_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The 2023 API's projects and branches over gRPC, on each engine, as the
// final clients call them: every database call names its branch.

const (
	usersSchema  = `{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}`
	ordersSchema = `{"title":"orders","primary_key":["id"],"properties":{"id":{"type":"integer"},"total":{"type":"number"}}}`
)

// withProject creates project shop with its users and orders collections
// (by CreateOrUpdateCollections, as the final Go client opens a database)
// and two users on main.
func withProject(t *testing.T, s *server) {
	t.Helper()
	if _, err := s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "shop"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "main",
		Schemas: [][]byte{[]byte(usersSchema), []byte(ordersSchema)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resp) != 2 || res.Resp[0].Status != "created" || res.Resp[1].Status != "created" || res.Error != nil {
		t.Fatalf("create or update collections: %v", res)
	}
	insertOn(t, s, "main", "users", `{"id":1,"name":"ann"}`, `{"id":2,"name":"bob"}`)
}

func insertOn(t *testing.T, s *server, branch, coll string, docs ...string) {
	t.Helper()
	req := &api.InsertRequest{Project: "shop", Branch: branch, Collection: coll}
	for _, d := range docs {
		req.Documents = append(req.Documents, []byte(d))
	}
	if _, err := s.rpc.Insert(ctx(t), req); err != nil {
		t.Fatalf("insert on %s: %v", branch, err)
	}
}

// readOn reads a collection of shop's branch to its end.
func readOn(t *testing.T, c context.Context, s *server, branch, coll, filter string) []string {
	t.Helper()
	out, err := tryReadOn(c, s, branch, coll, filter)
	if err != nil {
		t.Fatalf("read %s on %s: %v", coll, branch, err)
	}
	return out
}

func tryReadOn(c context.Context, s *server, branch, coll, filter string) ([]string, error) {
	st, err := s.rpc.Read(c, &api.ReadRequest{Project: "shop", Branch: branch, Collection: coll, Filter: []byte(filter)})
	if err != nil {
		return nil, err
	}
	out := []string{}
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, string(r.Data))
	}
}

func countOn(t *testing.T, s *server, branch, coll string) int64 {
	t.Helper()
	res, err := s.rpc.Count(ctx(t), &api.CountRequest{Project: "shop", Branch: branch, Collection: coll, Filter: []byte(`{}`)})
	if err != nil {
		t.Fatalf("count %s on %s: %v", coll, branch, err)
	}
	return res.Count
}

func branchNames(t *testing.T, s *server) []string {
	t.Helper()
	res, err := s.rpc.ListBranches(ctx(t), &api.ListBranchesRequest{Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range res.Branches {
		out = append(out, b.Branch)
	}
	return out
}

func TestProjectsOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		created, err := s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "shop"})
		if err != nil || created.Message != "project created successfully" || created.Status != "created" {
			t.Fatalf("create project: %v (%v)", created, err)
		}
		_, err = s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "shop"})
		wantRPCError(t, err, codes.AlreadyExists, "project already exist")
		_, err = s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "bad name"})
		wantCode(t, "a project name with a space", err, codes.InvalidArgument)

		// A database of the 2022 API is a project, and a project a database.
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "legacy"}); err != nil {
			t.Fatal(err)
		}
		list, err := s.rpc.ListProjects(ctx(t), &api.ListProjectsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var projects []string
		for _, p := range list.Projects {
			projects = append(projects, p.Project)
		}
		wantStrings(t, "the projects", projects, []string{"legacy", "shop"})
		dbs, err := s.rpc.ListDatabases(ctx(t), &api.ListDatabasesRequest{})
		if err != nil || len(dbs.Databases) != 2 || dbs.Databases[1].Db != "shop" {
			t.Errorf("the databases: %v (%v)", dbs, err)
		}

		// 2023's describe names the branches.
		createColl(t, s, "shop", "users", usersSchema)
		desc, err := s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "shop", Branch: "main"})
		if err != nil || !slices.Equal(desc.Branches, []string{"main"}) || len(desc.Collections) != 1 {
			t.Errorf("describe: %v (%v)", desc, err)
		}
		_, err = s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "nope", Branch: "main"})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		// Asked for model types, it answers them in place of each schema.
		desc, err = s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "shop", Branch: "main", SchemaFormat: "go"})
		if err != nil || len(desc.Collections) != 1 || !strings.Contains(string(desc.Collections[0].Schema), `{"go":"`) ||
			!strings.Contains(string(desc.Collections[0].Schema), "type User struct") {
			t.Errorf("describe with schema_format go: %v (%v)", desc, err)
		}
		coll, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "shop", Branch: "main", Collection: "users", SchemaFormat: "ts"})
		if err != nil || !strings.Contains(string(coll.Schema), `{"ts":"`) {
			t.Errorf("describe collection with schema_format ts: %v (%v)", coll, err)
		}
		// A 2023 request's model types are the final server's text (a class
		// with decorators), with a branch or without one: a schema_format
		// alone makes the request 2023's, as it does its answer.
		for _, branch := range []string{"main", ""} {
			c, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "shop", Branch: branch, Collection: "users", SchemaFormat: "ts"})
			if err != nil || !strings.Contains(string(c.Schema), `@TigrisCollection(\"users\")\nexport class User {`) || c.GetSearchStatus() == "" {
				t.Errorf("describe collection (branch %q) with schema_format ts: not the final text: %v (%v)", branch, c, err)
			}
			d, err := s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "shop", Branch: branch, SchemaFormat: "ts"})
			if err != nil || len(d.Collections) != 1 || !strings.Contains(string(d.Collections[0].Schema), `export class User {`) {
				t.Errorf("describe database (branch %q) with schema_format ts: not the final text: %v (%v)", branch, d, err)
			}
		}
		// The indexes the 2023 answer lists: the two system indexes, then
		// every indexed field, active; and the collection can be searched.
		var names []string
		for i, x := range coll.GetIndexes() {
			if system := i < 2; x.GetState() != "INDEX ACTIVE" || system && len(x.GetFields()) != 0 ||
				!system && (len(x.GetFields()) != 1 || x.GetFields()[0].GetName() != x.GetName()) {
				t.Errorf("index %v", x)
			}
			names = append(names, x.GetName())
		}
		if len(names) < 3 || names[0] != "_tigris_created_at" || names[1] != "_tigris_updated_at" || !slices.Contains(names, "id") {
			t.Errorf("describe collection's indexes: %v", names)
		}
		if coll.GetSearchStatus() != "Search Active" {
			t.Errorf("describe collection's search status %q, want Search Active", coll.GetSearchStatus())
		}
		// A 2022 request (the names alone) gets neither.
		old, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "shop", Collection: "users"})
		if err != nil || len(old.GetIndexes()) != 0 || old.GetSearchStatus() != "" || old.GetCollection() != "users" {
			t.Errorf("2022's describe collection: %v (%v)", old, err)
		}
		// A missing collection's drop, in each generation's words.
		_, err = s.rpc.DropCollection(ctx(t), &api.DropCollectionRequest{Project: "shop", Branch: "main", Collection: "nope"})
		wantRPCError(t, err, codes.NotFound, "collection doesn't exist 'nope'")
		_, err = s.rpc.DropCollection(ctx(t), &api.DropCollectionRequest{Project: "shop", Collection: "nope"})
		wantRPCError(t, err, codes.NotFound, "collection doesn't exists 'nope'")

		deleted, err := s.rpc.DeleteProject(ctx(t), &api.DeleteProjectRequest{Project: "shop"})
		if err != nil || deleted.Message != "project deleted successfully" {
			t.Fatalf("delete project: %v (%v)", deleted, err)
		}
		_, err = s.rpc.DeleteProject(ctx(t), &api.DeleteProjectRequest{Project: "shop"})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'shop'")
		// A 2022 call keeps its own words.
		_, err = s.rpc.DropDatabase(ctx(t), &api.DropDatabaseRequest{Db: "shop"})
		wantRPCError(t, err, codes.NotFound, "database doesn't exist 'shop'")
		if list, err := s.rpc.ListProjects(ctx(t), &api.ListProjectsRequest{}); err != nil || len(list.Projects) != 1 || list.Projects[0].Project != "legacy" {
			t.Errorf("projects after the delete: %v (%v)", list, err)
		}
		// Its collections went with it: a project of the same name starts
		// empty.
		if _, err := s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "shop"}); err != nil {
			t.Fatal(err)
		}
		if colls, err := s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "shop", Branch: "main"}); err != nil || len(colls.Collections) != 0 {
			t.Errorf("collections of the new shop: %v (%v)", colls, err)
		}
	})
}

func TestBranchesOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withProject(t, s)
		wantStrings(t, "the branches of a new project", branchNames(t, s), []string{"main"})

		if res, err := s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "shop", Branch: "dev"}); err != nil || res.Status != "created" {
			t.Fatalf("create branch: %v (%v)", res, err)
		}
		wantStrings(t, "the branches", branchNames(t, s), []string{"main", "dev"})
		desc, err := s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "shop", Branch: "dev"})
		if err != nil || !slices.Equal(desc.Branches, []string{"main", "dev"}) || len(desc.Collections) != 2 {
			t.Errorf("describe dev: %v (%v)", desc, err)
		}

		// A new branch has main's collections, and none of its documents.
		colls, err := s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "shop", Branch: "dev"})
		if err != nil || len(colls.Collections) != 2 {
			t.Fatalf("dev's collections: %v (%v)", colls, err)
		}
		if got := readOn(t, ctx(t), s, "dev", "users", `{}`); len(got) != 0 {
			t.Errorf("a new branch has documents: %v", got)
		}

		// Writes on either branch stay there, for every call.
		insertOn(t, s, "dev", "users", `{"id":1,"name":"dev-ann"}`, `{"id":3,"name":"cy"}`)
		if _, err := s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "shop", Branch: "dev", Collection: "users", Filter: []byte(`{"id":3}`), Fields: []byte(`{"$set":{"name":"cyd"}}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.Replace(ctx(t), &api.ReplaceRequest{Project: "shop", Branch: "main", Collection: "users", Documents: [][]byte{[]byte(`{"id":2,"name":"bobby"}`)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.Delete(ctx(t), &api.DeleteRequest{Project: "shop", Branch: "main", Collection: "users", Filter: []byte(`{"id":1}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.Import(ctx(t), &api.ImportRequest{Project: "shop", Branch: "dev", Collection: "orders", Documents: [][]byte{[]byte(`{"id":7,"total":9.5}`)}}); err != nil {
			t.Fatal(err)
		}
		wantStrings(t, "main's users", readOn(t, ctx(t), s, "main", "users", `{}`), []string{`{"id":2,"name":"bobby"}`})
		wantStrings(t, "dev's users", readOn(t, ctx(t), s, "dev", "users", `{}`), []string{`{"id":1,"name":"dev-ann"}`, `{"id":3,"name":"cyd"}`})
		// 2022's calls, which name no branch, are on main.
		wantStrings(t, "2022's read", readColl(t, s, "shop", "users", `{}`, nil), []string{`{"id":2,"name":"bobby"}`})
		for branch, want := range map[string]int64{"main": 0, "dev": 1} {
			if got := countOn(t, s, branch, "orders"); got != want {
				t.Errorf("%s's orders: %d, want %d", branch, got, want)
			}
		}
		ex, err := s.rpc.Explain(ctx(t), &api.ReadRequest{Project: "shop", Branch: "dev", Collection: "users", Filter: []byte(`{"name":"cyd"}`)})
		if err != nil || ex.Matched != 1 {
			t.Errorf("explain on dev: %v (%v)", ex, err)
		}
		// Search reads the branch's documents (the search index follows the
		// change log: it may take a moment).
		waitSearch(t, s, "dev", "cyd", 1)
		waitSearch(t, s, "main", "cyd", 0)

		// A schema changed on one branch stays there; so does a dropped
		// collection.
		if _, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "shop", Branch: "dev", Collection: "users",
			Schema: []byte(strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"string"},"email":{"type":"string"}`, 1))}); err != nil {
			t.Fatal(err)
		}
		for branch, want := range map[string]bool{"dev": true, "main": false} {
			d, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "shop", Branch: branch, Collection: "users"})
			if err != nil || strings.Contains(string(d.Schema), "email") != want {
				t.Errorf("%s's users schema: %s (%v)", branch, d.GetSchema(), err)
			}
		}
		if _, err := s.rpc.DropCollection(ctx(t), &api.DropCollectionRequest{Project: "shop", Branch: "dev", Collection: "orders"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "shop", Branch: "main", Collection: "orders"}); err != nil {
			t.Errorf("main's orders after dev's were dropped: %v", err)
		}
		if res, err := s.rpc.BuildCollectionIndex(ctx(t), &api.BuildCollectionIndexRequest{Project: "shop", Branch: "dev", Collection: "users"}); err != nil || len(res.Indexes) != 5 {
			t.Errorf("dev's users' indexes (the two system ones, id, name, email): %v (%v)", res, err)
		}

		// Unknown branch or project.
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "shop", Branch: "nope", Collection: "users", Documents: [][]byte{[]byte(`{"id":9}`)}})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = tryReadOn(ctx(t), s, "nope", "users", `{}`)
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = s.rpc.Count(ctx(t), &api.CountRequest{Project: "shop", Branch: "nope", Collection: "users", Filter: []byte(`{}`)})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "shop", Branch: "nope"})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "shop", Branch: "nope"})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "nope", Schemas: [][]byte{[]byte(usersSchema)}})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "nope", Branch: "main", Collection: "users", Documents: [][]byte{[]byte(`{"id":9}`)}})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "nope", Branch: "dev", Collection: "users", Documents: [][]byte{[]byte(`{"id":9}`)}})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		_, err = s.rpc.ListBranches(ctx(t), &api.ListBranchesRequest{Project: "nope"})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		_, err = s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "nope", Branch: "dev"})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		_, err = s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "shop", Branch: "dev"})
		wantRPCError(t, err, codes.AlreadyExists, "branch already exist 'dev'")
		_, err = s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "shop", Branch: "no/slash"})
		wantCode(t, "a branch name with a slash", err, codes.InvalidArgument)
		_, err = s.rpc.DeleteBranch(ctx(t), &api.DeleteBranchRequest{Project: "shop", Branch: "nope"})
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'nope'")

		// Main cannot be deleted; another branch goes with its data.
		_, err = s.rpc.DeleteBranch(ctx(t), &api.DeleteBranchRequest{Project: "shop", Branch: "main"})
		wantRPCError(t, err, codes.InvalidArgument, "'main' database cannot be deleted.")
		if res, err := s.rpc.DeleteBranch(ctx(t), &api.DeleteBranchRequest{Project: "shop", Branch: "dev"}); err != nil || res.Status != "deleted" {
			t.Fatalf("delete branch: %v (%v)", res, err)
		}
		wantStrings(t, "the branches after the delete", branchNames(t, s), []string{"main"})
		_, err = tryReadOn(ctx(t), s, "dev", "users", `{}`)
		wantRPCError(t, err, codes.NotFound, "database branch doesn't exist 'dev'")
		wantStrings(t, "main's users after dev went", readOn(t, ctx(t), s, "main", "users", `{}`), []string{`{"id":2,"name":"bobby"}`})
		// A branch of the same name starts again from main.
		if _, err := s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "shop", Branch: "dev"}); err != nil {
			t.Fatal(err)
		}
		if got := countOn(t, s, "dev", "users"); got != 0 {
			t.Errorf("a recreated branch has %d users", got)
		}
	})
}

// waitSearch waits until a search of shop's users on branch for q finds
// want hits.
func waitSearch(t *testing.T, s *server, branch, q string, want int) {
	t.Helper()
	var found int
	for range 100 {
		st, err := s.rpc.Search(ctx(t), &api.SearchRequest{Project: "shop", Branch: branch, Collection: "users", Q: q})
		if err != nil {
			t.Fatal(err)
		}
		found = 0
		for {
			r, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("search on %s: %v", branch, err)
			}
			found += len(r.Hits)
		}
		if found == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("search for %q on %s: %d hits, want %d", q, branch, found, want)
}

// A transaction is bound to the branch it began on: its calls on another
// branch are refused, and its writes reach its branch alone.
func TestTransactionsOnABranchOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withProject(t, s)
		if _, err := s.rpc.CreateBranch(ctx(t), &api.CreateBranchRequest{Project: "shop", Branch: "dev"}); err != nil {
			t.Fatal(err)
		}
		begin, err := s.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "shop", Branch: "dev"})
		if err != nil {
			t.Fatal(err)
		}
		tx := metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		if _, err := s.rpc.Insert(tx, &api.InsertRequest{Project: "shop", Branch: "dev", Collection: "users", Documents: [][]byte{[]byte(`{"id":5,"name":"in tx"}`)}}); err != nil {
			t.Fatal(err)
		}
		if got := readOn(t, tx, s, "dev", "users", `{}`); len(got) != 1 {
			t.Errorf("the transaction's read of its own write: %v", got)
		}
		for _, branch := range []string{"main", ""} {
			_, err = s.rpc.Insert(tx, &api.InsertRequest{Project: "shop", Branch: branch, Collection: "users", Documents: [][]byte{[]byte(`{"id":6}`)}})
			wantCode(t, "a write on "+branch+" in dev's transaction", err, codes.InvalidArgument)
		}
		if _, err := s.rpc.CommitTransaction(tx, &api.CommitTransactionRequest{Project: "shop", Branch: "dev"}); err != nil {
			t.Fatal(err)
		}
		wantStrings(t, "dev's users", readOn(t, ctx(t), s, "dev", "users", `{}`), []string{`{"id":5,"name":"in tx"}`})
		if got := countOn(t, s, "main", "users"); got != 2 {
			t.Errorf("main's users after dev's transaction: %d, want 2", got)
		}

		// A transaction on a branch that is not there fails at its first
		// call.
		begin, err = s.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "shop", Branch: "nope"})
		if err != nil {
			t.Fatal(err)
		}
		tx = metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		_, err = s.rpc.Insert(tx, &api.InsertRequest{Project: "shop", Branch: "nope", Collection: "users", Documents: [][]byte{[]byte(`{"id":6}`)}})
		wantCode(t, "a write on a missing branch", err, codes.NotFound)
		s.rpc.RollbackTransaction(tx, &api.RollbackTransactionRequest{Project: "shop", Branch: "nope"})
	})
}

// CreateOrUpdateCollections applies all of its schemas or none; an error
// names the schema that failed.
func TestCreateOrUpdateCollectionsOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withProject(t, s)
		// Updates (a field added) and creates in one call.
		res, err := s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "main", Schemas: [][]byte{
			[]byte(strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"string"},"age":{"type":"integer"}`, 1)),
			[]byte(`{"title":"items","primary_key":["sku"],"properties":{"sku":{"type":"string"}}}`)}})
		if err != nil || len(res.Resp) != 2 {
			t.Fatalf("create or update: %v (%v)", res, err)
		}
		if got := readOn(t, ctx(t), s, "main", "users", `{"age":{"$gt":1}}`); len(got) != 0 {
			t.Errorf("a filter on the added field: %v", got)
		}

		_, err = s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "main", Schemas: [][]byte{
			[]byte(`{"title":"fresh","primary_key":["id"],"properties":{"id":{"type":"integer"}}}`),
			[]byte(`{"title":"broken","primary_key":["id"],"properties":{"id":{"type":"no such type"}}}`)}})
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || !strings.Contains(msg, "schemas[1]") {
			t.Errorf("a bad second schema: %v %q", code, msg)
		}
		_, err = s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "main", Schemas: [][]byte{[]byte(`{"properties":{}}`)}})
		wantCode(t, "a schema without a title", err, codes.InvalidArgument)
		_, err = s.rpc.CreateOrUpdateCollections(ctx(t), &api.CreateOrUpdateCollectionsRequest{Project: "nope", Branch: "main", Schemas: [][]byte{[]byte(usersSchema)}})
		wantRPCError(t, err, codes.NotFound, "project doesn't exist 'nope'")
		colls, err := s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "shop", Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range colls.Collections {
			names = append(names, c.Collection)
		}
		slices.Sort(names)
		wantStrings(t, "the collections after a refused call", names, []string{"items", "orders", "users"})
	})
}
