package clienttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/npmtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
)

// tsClient is the TypeScript client tested: 1.0.0-beta.21 of
// @tigrisdata/core (December 2022) is the last release whose generated
// service is the /v1/databases one Folio speaks (beta.23 renamed databases
// to projects). ts/package-lock.json pins its whole tree, the transport
// it speaks through included (@grpc/grpc-js, which it takes as ^1.6.10),
// so that every machine runs the same packages.
var tsClient = npmtest.Project{Name: "clienttest", Dir: "ts",
	Ready: filepath.Join("@tigrisdata", "core", "dist", "index.js"), Env: "FOLIO_CLIENTTEST_NPM_DIR"}

// tsResult is what ts/flow.js reports.
type tsResult struct {
	ServerVersion        string   `json:"serverVersion"`
	Databases            []string `json:"databases"`
	Collections          []string `json:"collections"`
	InsertedIDs          []string `json:"insertedIds"`
	InsertOneID          string   `json:"insertOneId"`
	ByID                 []tsUser `json:"byId"`
	All                  []string `json:"all"`
	AgeGt26              []string `json:"ageGt26"`
	AgeBetween           []string `json:"ageBetween"`
	BobOrCid             []string `json:"bobOrCid"`
	Limit2               int      `json:"limit2"`
	UpdateModified       int      `json:"updateModified"`
	BobAfterUpdate       int      `json:"bobAfterUpdate"`
	Ages99AfterUpdateOne int      `json:"ages99AfterUpdateOne"`
	AfterDeleteOne       []string `json:"afterDeleteOne"`
	AfterDelete          []string `json:"afterDelete"`
	AfterCommit          []string `json:"afterCommit"`
	AnnAfterCommit       int      `json:"annAfterCommit"`
	Abandoned            string   `json:"abandoned"`
	AfterRollback        []string `json:"afterRollback"`
	Search               struct {
		Term, Filtered, Ascending []string
		Found                     int
		Facet                     map[string]int
		FacetCount                int `json:"facetCount"`
		SortedPages               []struct {
			Names      []string
			Current    int
			TotalPages int `json:"totalPages"`
		} `json:"sortedPages"`
	} `json:"search"`
	Duplicate struct {
		Code    int
		Details string
	} `json:"duplicate"`
	Subscribe struct{ All, Filtered, Stored []int } `json:"subscribe"`
	Described []struct {
		Name   string
		Schema struct {
			Title          string
			CollectionType string         `json:"collection_type"`
			PrimaryKey     []string       `json:"primary_key"`
			Properties     map[string]any `json:"properties"`
		}
	} `json:"described"`
	CollectionsAfterDrop []string `json:"collectionsAfterDrop"`
	DatabasesAfterDrop   []string `json:"databasesAfterDrop"`
}

type tsUser struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Age  int    `json:"age"`
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestOfficialTypeScriptClient runs ts/flow.js, the flow of
// TestOfficialGoClient written with @tigrisdata/core, under node against a
// real folio serve on every backend, and checks what the client saw. The client
// speaks gRPC only. It needs node and npm, and the registry once per
// machine: without them it skips, saying why (fails under CI).
func TestOfficialTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: not in -short")
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not on PATH: the TypeScript client is not tested")
	}
	modules := filepath.Join(npmtest.Install(t, tsClient), "node_modules")
	flow, err := filepath.Abs(filepath.Join("ts", "flow.js"))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		srv := servetest.Start(t, servetest.Options{Backend: b})
		// A 127.0.0.1 URL without credentials: the client opens an
		// insecure channel (with any other host it would insist on TLS).
		res := runFlow(t, nodeBin, modules, flow, srv.Addr, "shop_ts")
		checkTSFlow(t, res)
	})
}

// runFlow runs the program and decodes its report; its output (the
// client's log, and the error that stopped it) goes to the test's log.
func runFlow(t *testing.T, nodeBin, modules, flow, addr, db string) *tsResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, flow, addr, db, out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node flow.js against %s: %v\n%s", addr, err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("flow.js wrote no result: %v\n%s", err, log)
	}
	var res tsResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("flow.js result: %v\n%s", err, data)
	}
	return &res
}

func checkTSFlow(t *testing.T, r *tsResult) {
	t.Helper()
	eq := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	// Observability/GetInfo, where this client asks.
	if r.ServerVersion == "" {
		t.Error("no server version")
	}
	eq("databases", r.Databases, []string{"shop_ts"})
	eq("collections", r.Collections, []string{"users"})

	// Generated keys reach the application, distinct, and read back.
	ids := append(append([]string(nil), r.InsertedIDs...), r.InsertOneID)
	seen := map[string]bool{}
	for _, id := range ids {
		if !uuidRE.MatchString(id) || seen[id] {
			t.Fatalf("generated ids not UUIDs or not distinct: %q", ids)
		}
		seen[id] = true
	}
	eq("read by id", r.ByID, []tsUser{{r.InsertedIDs[0], "Ann", 30}, {r.InsertedIDs[1], "Bob", 25}, {r.InsertedIDs[2], "Cid", 41}})

	eq("all", r.All, []string{"Ann", "Bob", "Cid", "Dot"})
	eq("age > 26", r.AgeGt26, []string{"Ann", "Cid"})
	eq("26 <= age <= 30", r.AgeBetween, []string{"Ann"})
	eq("Bob or Cid", r.BobOrCid, []string{"Bob", "Cid"})
	eq("read with limit 2", r.Limit2, 2)

	eq("update's modified count", r.UpdateModified, 1)
	eq("Bob's age after the update", r.BobAfterUpdate, 26)
	// updateOne and deleteOne send limit 1 in a field alpha.32's messages
	// lack (api/proto has them): two documents matched, one changed.
	eq("documents updateOne changed", r.Ages99AfterUpdateOne, 1)
	if len(r.AfterDeleteOne) != 3 {
		t.Errorf("after deleteOne: %q, want three of Ann, Bob, Cid, Dot", r.AfterDeleteOne)
	}
	eq("after deleteMany of Cid", r.AfterDelete, without(r.AfterDeleteOne, "Cid"))

	base := without(r.AfterDelete)
	eq("after commit", r.AfterCommit, sortedCopy(append(base, "Dan")))
	eq("Ann's age after commit", r.AnnAfterCommit, 31)
	eq("the failing transaction", r.Abandoned, "rolled back")
	eq("after rollbacks", r.AfterRollback, r.AfterCommit)

	// Search sees every write acknowledged before it, over gRPC.
	eq("search for dan", r.Search.Term, []string{"Dan"})
	eq("search filtered by age > 26", r.Search.Filtered, []string{"Ann", "Dan"})
	eq("search's found", r.Search.Found, 2)
	eq("facet of names", r.Search.Facet, map[string]int{"Ann": 1, "Dan": 1})
	eq("facet's count", r.Search.FacetCount, 2)
	if p := r.Search.SortedPages; len(p) != 2 || !reflect.DeepEqual(p[0].Names, []string{"Dan"}) || !reflect.DeepEqual(p[1].Names, []string{"Ann"}) ||
		p[0].Current != 1 || p[1].Current != 2 || p[0].TotalPages != 2 || p[1].TotalPages != 2 {
		t.Errorf("streamed pages of one hit by age descending: %+v, want Dan on page 1 of 2, Ann on page 2", p)
	}
	eq("search sorted by age ascending", r.Search.Ascending, []string{"Ann", "Dan"})

	// ALREADY_EXISTS is gRPC code 6, with the HTTP message: the original's,
	// then the key (a generated uuid).
	if d := r.Duplicate; d.Code != 6 || !regexp.MustCompile(`^duplicate key value, violates key constraint: key \{"id":"[0-9a-f-]{36}"\} exists already$`).MatchString(d.Details) {
		t.Errorf("a duplicate key: %+v", d)
	}

	// Publish and subscribe: the filter (a later field) applies.
	eq("messages subscribed", r.Subscribe.All, []int{1, 2, 3})
	eq("messages subscribed with the filter kind = keep", r.Subscribe.Filtered, []int{1, 3})
	eq("messages read with the filter kind = keep", r.Subscribe.Stored, []int{1, 3})

	// Describe sends each collection's schema as the client made it.
	if len(r.Described) != 2 {
		t.Fatalf("described %d collections, want events and users", len(r.Described))
	}
	ev, us := r.Described[0], r.Described[1]
	if ev.Name != "events" || ev.Schema.CollectionType != "messages" || len(ev.Schema.Properties) != 2 {
		t.Errorf("described topic: %+v", ev)
	}
	id, _ := us.Schema.Properties["id"].(map[string]any)
	if us.Name != "users" || us.Schema.CollectionType != "documents" || !reflect.DeepEqual(us.Schema.PrimaryKey, []string{"id"}) ||
		id["format"] != "uuid" || id["autoGenerate"] != true || len(us.Schema.Properties) != 3 {
		t.Errorf("described collection: %+v", us)
	}
	eq("collections after dropping the topic", r.CollectionsAfterDrop, []string{"users"})

	eq("databases after the drop", r.DatabasesAfterDrop, []string{})
}

// without returns a sorted copy of names less drop.
func without(names []string, drop ...string) []string {
	out := []string{}
	for _, n := range names {
		keep := true
		for _, d := range drop {
			keep = keep && n != d
		}
		if keep {
			out = append(out, n)
		}
	}
	return sortedCopy(out)
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
