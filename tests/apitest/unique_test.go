package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

const uniqueAccountsSchema = `{"title":"accounts","properties":{"id":{"type":"integer"},"email":{"type":"string","unique":true},` +
	`"first":{"type":"string"},"last":{"type":"string"}},"primary_key":["id"],"unique":[["first","last"]]}`

// 16 writers insert documents of their own keys holding the same unique
// values at once, half over HTTP and half over gRPC: per value exactly one
// insert lands, every other is refused with ALREADY_EXISTS (after the
// server's own retries of conflicts, and the client's of an ABORTED), and
// the collection ends with one document per value.
func TestUniqueUnderConcurrentWriters(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "accounts", uniqueAccountsSchema)
		conn, err := grpc.NewClient(strings.TrimPrefix(c.base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rpc := api.NewTigrisClient(conn)

		const writers, values = 16, 5
		var (
			wg      sync.WaitGroup
			aborted atomic.Int64
			won     [values]atomic.Int64
		)
		// insert sends one document; it reports whether it landed, and
		// fails the test on any answer but that and ALREADY_EXISTS.
		insert := func(w, v int, doc string) bool {
			want := fmt.Sprintf("duplicate value for unique field 'email': \"v%d@x\" exists already", v)
			if v%2 == 1 { // the odd values collide on the composite key instead
				want = fmt.Sprintf(`duplicate value for unique fields 'first', 'last': ["f%d", "l%d"] exists already`, v, v)
			}
			if w%2 == 0 {
				r, err := sendRetrying(c, &aborted, "POST", docPath("db1", "accounts", "insert"), `{"documents":[`+doc+`]}`)
				switch {
				case err != nil:
					t.Error(err)
				case r.status == 200:
					return true
				default:
					wantError(t, r, 409, "ALREADY_EXISTS", want)
				}
				return false
			}
			for attempt := 0; ; attempt++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := rpc.Insert(ctx, &api.InsertRequest{Project: "db1", Collection: "accounts", Documents: [][]byte{[]byte(doc)}})
				cancel()
				st, _ := status.FromError(err)
				switch {
				case err == nil:
					return true
				case st.Code() == codes.Aborted && attempt < 50:
					aborted.Add(1)
					continue
				case st.Code() != codes.AlreadyExists || st.Message() != want:
					t.Errorf("gRPC insert of %s: %v, want AlreadyExists %q", doc, err, want)
				}
				return false
			}
		}
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for v := range values {
					id := 1 + w*values + v
					doc := fmt.Sprintf(`{"id":%d,"email":"v%d@x","first":"w%d","last":"%d"}`, id, v, w, id)
					if v%2 == 1 {
						doc = fmt.Sprintf(`{"id":%d,"email":"w%d-%d@x","first":"f%d","last":"l%d"}`, id, w, v, v, v)
					}
					if insert(w, v, doc) {
						won[v].Add(1)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		t.Logf("%d requests answered ABORTED and were sent again", aborted.Load())
		for v := range values {
			if n := won[v].Load(); n != 1 {
				t.Errorf("value %d: %d inserts landed, want exactly 1", v, n)
			}
		}
		if docs := c.all(t, "db1", "accounts"); len(docs) != values {
			t.Errorf("the collection holds %d documents, want %d (one per value): %v", len(docs), values, docs)
		}
	})
}

// A batch holding a unique value twice writes nothing, on both API
// generations' paths; a write of a document with its own value again is
// taken; null and absent values are never duplicates.
func TestUniqueBatchAndNulls(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("shop", "create"), "")
		c.ok(t, "POST", p23Coll("shop", "accounts", "createOrUpdate"), `{"schema":`+uniqueAccountsSchema+`}`)
		r := c.do(t, "POST", p23Doc("shop", "accounts", "insert"), `{"documents":[{"id":1,"email":"a@x"},{"id":2,"email":"b@x"},{"id":3,"email":"a@x"}]}`)
		wantError(t, r, 409, "ALREADY_EXISTS", `duplicate value for unique field 'email': "a@x" exists already`)
		if docs := c.all(t, "shop", "accounts"); len(docs) != 0 {
			t.Errorf("a refused batch wrote %v", docs)
		}
		c.ok(t, "POST", p23Doc("shop", "accounts", "insert"), `{"documents":[{"id":1,"email":"a@x"},{"id":2},{"id":3,"email":null},{"id":4,"first":"Ada"},{"id":5,"first":"Ada"}]}`)
		c.ok(t, "PUT", p23Doc("shop", "accounts", "replace"), `{"documents":[{"id":1,"email":"a@x","first":"Ada","last":"L"}]}`)
		c.ok(t, "PUT", p23Doc("shop", "accounts", "update"), `{"filter":{"id":1},"fields":{"$set":{"email":"a@x"}}}`)
		r = c.do(t, "PUT", p23Doc("shop", "accounts", "update"), `{"filter":{"id":5},"fields":{"$set":{"last":"L"}}}`)
		wantError(t, r, 409, "ALREADY_EXISTS", `duplicate value for unique fields 'first', 'last': ["Ada", "L"] exists already`)
		// The 2022 path, on a 2022 database.
		c.createDB(t, "db1")
		c.createColl(t, "db1", "accounts", uniqueAccountsSchema)
		r = c.do(t, "POST", docPath("db1", "accounts", "insert"), `{"documents":[{"id":1,"email":"a@x"},{"id":2,"email":"a@x"}]}`)
		wantError(t, r, 409, "ALREADY_EXISTS", `duplicate value for unique field 'email': "a@x" exists already`)
		if docs := c.all(t, "db1", "accounts"); len(docs) != 0 {
			t.Errorf("a refused batch wrote %v", docs)
		}
	})
}

// Adding a unique key to a collection that holds duplicates is refused
// (400, naming a value two documents hold) and changes nothing; once the
// duplicate is gone it is taken, describe shows it, and removing it is
// allowed, after which duplicates may be written again.
func TestUniqueSchemaChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const plain = `{"title":"accounts","properties":{"id":{"type":"integer"},"email":{"type":"string"}},"primary_key":["id"]}`
		const unique = `{"title":"accounts","properties":{"id":{"type":"integer"},"email":{"type":"string","unique":true}},"primary_key":["id"]}`
		c.createDB(t, "db1")
		c.createColl(t, "db1", "accounts", plain)
		c.insert(t, "db1", "accounts", `{"id":1,"email":"a@x"}`, `{"id":2,"email":"b@x"}`, `{"id":3,"email":"a@x"}`, `{"id":4}`, `{"id":5}`)
		r := c.do(t, "POST", collPath("db1", "accounts", "createOrUpdate"), `{"schema":`+unique+`}`)
		wantError(t, r, 400, "INVALID_ARGUMENT", `cannot make field 'email' unique: more than one document holds "a@x"`)
		describe := func() string {
			d := c.okObject(t, "POST", collPath("db1", "accounts", "describe"), "")
			b, _ := json.Marshal(d["schema"])
			return string(b)
		}
		if s := describe(); strings.Contains(s, "unique") {
			t.Errorf("a refused change shows in describe: %s", s)
		}
		// The 2023 call, several schemas at once, is refused the same way.
		r = c.do(t, "POST", p23Path("db1", "collections/createOrUpdate"), `{"schemas":[`+unique+`]}`)
		if msg := wantError(t, r, 400, "INVALID_ARGUMENT", anyMessage); !strings.Contains(msg, `cannot make field 'email' unique: more than one document holds "a@x"`) {
			t.Errorf("the 2023 call's refusal: %q", msg)
		}
		c.ok(t, "DELETE", docPath("db1", "accounts", "delete"), `{"filter":{"id":3}}`)
		c.createColl(t, "db1", "accounts", unique)
		if s := describe(); !strings.Contains(s, `"unique":true`) {
			t.Errorf("describe does not show the unique field: %s", s)
		}
		r = c.do(t, "POST", docPath("db1", "accounts", "insert"), `{"documents":[{"id":6,"email":"b@x"}]}`)
		wantError(t, r, 409, "ALREADY_EXISTS", `duplicate value for unique field 'email': "b@x" exists already`)
		c.createColl(t, "db1", "accounts", plain)
		c.insert(t, "db1", "accounts", `{"id":6,"email":"b@x"}`)
	})
}
