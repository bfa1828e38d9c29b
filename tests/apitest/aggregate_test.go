package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

const aggSchema = `{"title":"items","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"kind":{"type":"string"},"price":{"type":"number"},"qty":{"type":"integer"},
	"tags":{"type":"array","items":{"type":"string"}},
	"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}`

// aggDocs: kinds a (3), b (2), none (1); one kind of 130 bytes.
var aggDocs = []string{
	`{"id":1,"kind":"a","price":10.5,"qty":2,"tags":["x","y"],"addr":{"city":"Oslo"}}`,
	`{"id":2,"kind":"a","price":20,"qty":3,"tags":["y"]}`,
	`{"id":3,"kind":"a","price":31,"qty":4,"tags":[],"addr":{"city":"Bergen"}}`,
	`{"id":4,"kind":"b","price":1.25,"qty":5}`,
	`{"id":5,"kind":"b","qty":6}`,
	`{"id":6,"price":2,"qty":7,"addr":{"city":"Oslo"}}`,
}

func aggData(t *testing.T, c *client) {
	t.Helper()
	c.createDB(t, "shop")
	c.createColl(t, "shop", "items", aggSchema)
	c.insert(t, "shop", "items", aggDocs...)
}

// aggregateLines makes an aggregation and returns its result lines, each
// the JSON object inside {"result":...}.
func aggregateLines(t testing.TB, r *response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("aggregate: %s", r)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		var line struct {
			Result json.RawMessage `json:"result"`
		}
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&line); err != nil || line.Result == nil {
			t.Fatalf("aggregate line is not {\"result\":...}: %s (%v)", sc.Text(), err)
		}
		out = append(out, string(line.Result))
	}
	return out
}

// The example, on both engines and both generations' paths.
func TestAggregate(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		aggData(t, c)
		c.ok(t, "POST", p23Path("shop", "branches/dev/create"), "")
		c.insert23(t, "shop", "dev", "items", `{"id":7,"kind":"c","price":3}`)
		const body = `{"filter":{"price":{"$gt":1}},"group_by":["kind"],"fields":{"n":{"$count":{}},"total":{"$sum":"price"},` +
			`"mean":{"$avg":"price"},"lo":{"$min":"price"},"hi":{"$max":"price"}},"sort":[{"n":"$desc"}],"limit":10}`
		want := []string{
			`{"group":{"kind":"a"},"n":3,"total":61.5,"mean":20.5,"lo":10.5,"hi":31}`,
			`{"group":{"kind":null},"n":1,"total":2,"mean":2,"lo":2,"hi":2}`,
			`{"group":{"kind":"b"},"n":1,"total":1.25,"mean":1.25,"lo":1.25,"hi":1.25}`,
		}
		equalStrings(t, "2022 path", aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), body)), want)
		equalStrings(t, "2023 path", aggregateLines(t, c.do(t, "POST", p23Doc("shop", "items", "aggregate"), body)), want)
		// The dev branch has its own documents (a branch starts empty).
		equalStrings(t, "2023 path, branch dev", aggregateLines(t, c.do(t, "POST", p23Doc("shop", "items", "aggregate"), withBranch(body, "dev"))),
			[]string{`{"group":{"kind":"c"},"n":1,"total":3,"mean":3,"lo":3,"hi":3}`})

		for _, tc := range []struct{ name, body, want string }{
			{"no group_by: one group over the filter", `{"fields":{"n":{"$count":{}},"q":{"$sum":"qty"}}}`, `{"group":{},"n":6,"q":27}`},
			{"no group_by, nothing matches", `{"filter":{"qty":100},"fields":{"n":{"$count":{}},"q":{"$sum":"qty"},"m":{"$avg":"qty"}}}`, `{"group":{},"n":0,"q":0,"m":null}`},
			{"array elements, documents without one in null", `{"group_by":["tags"],"fields":{"n":{"$count":{}}}}`,
				`{"group":{"tags":null},"n":4}` + "\n" + `{"group":{"tags":"x"},"n":1}` + "\n" + `{"group":{"tags":"y"},"n":2}`},
			{"nested path, two fields, limit", `{"group_by":["addr.city","kind"],"fields":{"n":{"$count":{}},"d":{"$count_distinct":"qty"}},"sort":[{"addr.city":"$desc"}],"limit":2}`,
				`{"group":{"addr.city":"Oslo","kind":null},"n":1,"d":1}` + "\n" + `{"group":{"addr.city":"Oslo","kind":"a"},"n":1,"d":1}`},
			{"collation", `{"filter":{"kind":"A"},"options":{"collation":{"case":"ci"}},"fields":{"n":{"$count":{}}}}`, `{"group":{},"n":3}`},
		} {
			got := strings.Join(aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), tc.body)), "\n")
			if got != tc.want {
				t.Errorf("%s:\ngot  %s\nwant %s", tc.name, got, tc.want)
			}
		}
	})
}

// explain shows the plan: a count grouped on an indexed field reads its
// entries, never the documents; anything else folds the documents.
func TestAggregateExplain(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		aggData(t, c)
		explain := func(body string) map[string]any {
			t.Helper()
			r := c.okObject(t, "POST", docPath("shop", "items", "aggregate"), `{"explain":true,`+strings.TrimPrefix(body, "{"))
			return obj(t, r, "explain")
		}
		for _, tc := range []struct {
			body, plan string
			keys       int // keys read; 0: not checked
		}{
			// Five entries of kind and the document count: no document.
			{`{"group_by":["kind"],"fields":{"n":{"$count":{}}}}`, "index group count: all entries of kind", 6},
			{`{"filter":{"kind":{"$gte":"b"}},"group_by":["kind"],"fields":{"n":{"$count":{}}}}`, "index group count: kind >= b", 2},
			{`{"group_by":["kind"],"fields":{"s":{"$sum":"price"}}}`, "fold documents of scan", 0},
			{`{"filter":{"qty":{"$gt":5}},"group_by":["kind"],"fields":{"n":{"$count":{}}}}`, "fold documents of index: qty > 5", 0},
		} {
			ex := explain(tc.body)
			if ex["plan"] != tc.plan || (tc.keys > 0 && fmt.Sprint(ex["keys_read"]) != fmt.Sprint(tc.keys)) {
				t.Errorf("%s: explain %v, want plan %q and %v keys read", tc.body, ex, tc.plan, tc.keys)
			}
		}
		// A kind the entries hold cut: the documents tell the two apart.
		long := strings.Repeat("k", 130)
		c.insert(t, "shop", "items", `{"id":8,"kind":"`+long+`1"}`, `{"id":9,"kind":"`+long+`2"}`)
		body := `{"filter":{"kind":{"$gt":"b"}},"group_by":["kind"],"fields":{"n":{"$count":{}}}}`
		if ex := explain(body); !strings.HasPrefix(ex["plan"].(string), "fold documents") {
			t.Errorf("cut values: plan %v, want the documents folded", ex["plan"])
		}
		equalStrings(t, "cut values", aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), body)),
			[]string{`{"group":{"kind":"` + long + `1"},"n":1}`, `{"group":{"kind":"` + long + `2"},"n":1}`})
	})
}

// In an interactive transaction an aggregation sees the transaction's
// writes; outside it, it does not, until the commit.
func TestAggregateInTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		aggData(t, c)
		const body = `{"group_by":["kind"],"fields":{"n":{"$count":{}},"q":{"$sum":"qty"}}}`
		before := aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), body))
		// Over PostgreSQL the document count's background fold may abort
		// the commit as a false conflict, which a client retries.
		for attempt := 1; ; attempt++ {
			tx := c.begin(t, "shop")
			tx.ok(t, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":10,"kind":"b","qty":100}]}`)
			tx.ok(t, "DELETE", docPath("shop", "items", "delete"), `{"filter":{"id":6}}`)
			want := []string{`{"group":{"kind":"a"},"n":3,"q":9}`, `{"group":{"kind":"b"},"n":3,"q":111}`}
			equalStrings(t, "in the transaction", aggregateLines(t, tx.do(t, "POST", docPath("shop", "items", "aggregate"), body)), want)
			equalStrings(t, "count only, in the transaction", aggregateLines(t, tx.do(t, "POST", p23Doc("shop", "items", "aggregate"), `{"group_by":["kind"],"fields":{"n":{"$count":{}}}}`)),
				[]string{`{"group":{"kind":"a"},"n":3}`, `{"group":{"kind":"b"},"n":3}`})
			equalStrings(t, "outside", aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), body)), before)
			r := tx.commit(t)
			if r.status == http.StatusOK {
				equalStrings(t, "after the commit", aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"), body)), want)
				return
			}
			if r.status != http.StatusConflict || attempt == 3 {
				t.Fatalf("commit: %s", r)
			}
		}
	})
}

func TestAggregateErrors(t *testing.T) {
	cfg := node.DefaultConfig()
	cfg.Ops.MaxAggregateGroups = 5
	eachBackendWith(t, cfg, func(t *testing.T, c *client) {
		aggData(t, c)
		c.createColl(t, "shop", "events", `{"title":"events","collection_type":"messages","properties":{"a":{"type":"integer"}}}`)
		path := docPath("shop", "items", "aggregate")
		count := `"fields":{"n":{"$count":{}}}`
		const tooMany = "the aggregation has more than 5 groups, the limit: narrow the filter, or group by fewer or coarser fields"
		for _, tc := range []struct {
			name, path, body string
			status           int
			code, message    string
		}{
			{"bad accumulator", path, `{"fields":{"n":{"$median":"price"}}}`, 400, "INVALID_ARGUMENT", "fields.n: unknown accumulator '$median': the accumulators are $count, $sum, $avg, $min, $max, $count_distinct"},
			{"unknown group field", path, `{"group_by":["colour"],` + count + `}`, 400, "INVALID_ARGUMENT", "group_by names 'colour', which is not a field of the collection's schema"},
			{"unknown accumulated field", path, `{"fields":{"s":{"$sum":"cost"}}}`, 400, "INVALID_ARGUMENT", "fields.s: $sum of 'cost', which is not a field of the collection's schema"},
			{"sum of a string", path, `{"fields":{"s":{"$sum":"kind"}}}`, 400, "INVALID_ARGUMENT", "fields.s: $sum cannot take field 'kind' of type string"},
			{"no fields", path, `{"group_by":["kind"]}`, 400, "INVALID_ARGUMENT", anyMessage},
			{"bad filter", path, `{"filter":{"kind":{"$regex":"("}},` + count + `}`, 400, "INVALID_ARGUMENT", anyMessage},
			{"unknown option", path, `{"options":{"limit":1},` + count + `}`, 400, "INVALID_ARGUMENT", anyMessage},
			{"negative limit", path, `{"limit":-1,` + count + `}`, 400, "INVALID_ARGUMENT", "limit must not be negative"},
			{"malformed", path, `{"fields":`, 400, "INVALID_ARGUMENT", anyMessage},
			// Six ids, five groups at most.
			{"too many groups", path, `{"group_by":["id"],` + count + `}`, 400, "INVALID_ARGUMENT", tooMany},
			{"too many groups from documents", path, `{"group_by":["id"],"fields":{"s":{"$sum":"qty"}}}`, 400, "INVALID_ARGUMENT", tooMany},
			{"unknown collection", docPath("shop", "nothing", "aggregate"), `{` + count + `}`, 404, "NOT_FOUND", anyMessage},
			{"unknown database", docPath("nowhere", "items", "aggregate"), `{` + count + `}`, 404, "NOT_FOUND", anyMessage},
			{"unknown project", p23Doc("nowhere", "items", "aggregate"), `{` + count + `}`, 404, "NOT_FOUND", anyMessage},
			{"messages collection", docPath("shop", "events", "aggregate"), `{` + count + `}`, 400, "INVALID_ARGUMENT", "aggregate is only supported on collection type of 'documents'"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, c.do(t, "POST", tc.path, tc.body), tc.status, tc.code, tc.message)
			})
		}
		// At the bound: five groups are answered.
		if got := aggregateLines(t, c.do(t, "POST", path, `{"filter":{"id":{"$lt":6}},"group_by":["id"],`+count+`}`)); len(got) != 5 {
			t.Errorf("five groups: %v", got)
		}
	})
}

// The same over gRPC, Folio's own service tigrisdata.v1.Folio on the
// API's port: results, explain, a transaction's writes, errors' codes.
func TestAggregateOverGRPC(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		aggData(t, c)
		conn, err := grpc.NewClient(strings.TrimPrefix(c.base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		folio, tigris := api.NewFolioClient(conn), api.NewTigrisClient(conn)
		collect := func(ctx context.Context, req *api.AggregateRequest) ([]string, *api.AggregateExplanation, error) {
			st, err := folio.Aggregate(ctx, req)
			if err != nil {
				return nil, nil, err
			}
			var out []string
			var ex *api.AggregateExplanation
			for {
				m, err := st.Recv()
				if errors.Is(err, io.EOF) {
					return out, ex, nil
				}
				if err != nil {
					return out, ex, err
				}
				if m.Explain != nil {
					ex = m.Explain
				} else {
					out = append(out, string(m.Result))
				}
			}
		}
		ctx := context.Background()
		req := &api.AggregateRequest{Project: "shop", Collection: "items", Filter: []byte(`{"price":{"$gt":1}}`), GroupBy: []string{"kind"},
			Fields: []byte(`{"n":{"$count":{}},"total":{"$sum":"price"}}`), Sort: []byte(`[{"n":"$desc"}]`), Limit: 2}
		got, _, err := collect(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		viaHTTP := aggregateLines(t, c.do(t, "POST", docPath("shop", "items", "aggregate"),
			`{"filter":{"price":{"$gt":1}},"group_by":["kind"],"fields":{"n":{"$count":{}},"total":{"$sum":"price"}},"sort":[{"n":"$desc"}],"limit":2}`))
		equalStrings(t, "gRPC as HTTP", got, viaHTTP)

		_, ex, err := collect(ctx, &api.AggregateRequest{Project: "shop", Collection: "items", GroupBy: []string{"kind"}, Fields: []byte(`{"n":{"$count":{}}}`), Explain: true})
		if err != nil || ex == nil || ex.Plan != "index group count: all entries of kind" || ex.Groups != 3 || ex.Matched != 6 {
			t.Errorf("explain: %v %v", ex, err)
		}

		begin, err := tigris.BeginTransaction(ctx, &api.BeginTransactionRequest{Project: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		txCtx := metadata.AppendToOutgoingContext(ctx, "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		if _, err := tigris.Insert(txCtx, &api.InsertRequest{Project: "shop", Collection: "items", Documents: [][]byte{[]byte(`{"id":20,"kind":"z"}`)}}); err != nil {
			t.Fatal(err)
		}
		count := &api.AggregateRequest{Project: "shop", Collection: "items", Filter: []byte(`{"kind":"z"}`), Fields: []byte(`{"n":{"$count":{}}}`)}
		if got, _, err := collect(txCtx, count); err != nil || fmt.Sprint(got) != `[{"group":{},"n":1}]` {
			t.Errorf("in the transaction: %v %v", got, err)
		}
		if got, _, err := collect(ctx, count); err != nil || fmt.Sprint(got) != `[{"group":{},"n":0}]` {
			t.Errorf("outside the transaction: %v %v", got, err)
		}
		tigris.RollbackTransaction(txCtx, &api.RollbackTransactionRequest{Project: "shop"})

		for _, tc := range []struct {
			req  *api.AggregateRequest
			code codes.Code
		}{
			{&api.AggregateRequest{Project: "shop", Collection: "items", Fields: []byte(`{"n":{"$median":"qty"}}`)}, codes.InvalidArgument},
			{&api.AggregateRequest{Project: "shop", Collection: "items", Fields: []byte(`{"s":{"$sum":"kind"}}`)}, codes.InvalidArgument},
			{&api.AggregateRequest{Project: "shop", Collection: "nothing", Fields: []byte(`{"n":{"$count":{}}}`)}, codes.NotFound},
		} {
			if _, _, err := collect(ctx, tc.req); grpcstatus.Code(err) != tc.code {
				t.Errorf("%s: %v, want %v", tc.req.Fields, err, tc.code)
			}
		}
	})
}
