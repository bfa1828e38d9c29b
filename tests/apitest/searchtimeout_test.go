package apitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// A search that runs past the request timeout answers 504
// DEADLINE_EXCEEDED near its deadline, not once its work is done (it was
// answered 7 s after its deadline, with a page of no hits before the
// error). Its q is within the
// limits: two words, each of 512 hyphenated copies of a letter, so 512
// term searchers each, over one field; half the documents hold one
// letter, half the other, none both, so the search walks every document
// without a match (Bleve's collector looks at the deadline only between
// matches). The data is loaded and indexed through a node with the
// default timeout; the search goes to a node over the same store and
// search directory whose timeout is short. The search index is the same
// on either backend: Pebble's alone.
func TestSearchStopsAtItsDeadline(t *testing.T) {
	// The timeout leaves time to build the searchers (a few hundred
	// milliseconds under the race detector), so that it falls within the
	// walk, which takes seconds.
	const docs, timeout = 20_000, 500 * time.Millisecond
	store, searchDir := keepOpen{backendtest.OpenPebble(t)}, t.TempDir()
	run := func(cfg node.Config, fn func(c *client)) {
		cfg.Search.Dir = searchDir
		n := startNode(t, store, cfg)
		defer func() {
			if err := n.Close(); err != nil {
				t.Errorf("shut the node down: %v", err)
			}
		}()
		fn(newClient("http://" + n.Addr().String()))
	}
	// Under the race detector the index takes longer to build than the
	// default wait.
	run(node.DefaultConfigWith(func(nc *node.Config) {
		nc.Ops.SearchWait = time.Minute
	}), func(c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "pairs", `{"title":"pairs","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"primary_key":["id"]}`)
		for batch := 0; batch < docs; batch += 1000 {
			var ds []string
			for i := batch; i < batch+1000; i++ {
				ds = append(ds, fmt.Sprintf(`{"id":%d,"a":"%s"}`, i, []string{"x", "y"}[i%2]))
			}
			c.insert(t, "db1", "pairs", ds...)
		}
		// Builds the index, with every document in it.
		if found := c.search(t, "db1", "pairs", `{"q":"x","page":1}`)[0].Meta.Found; found != docs/2 {
			t.Fatalf("x is found in %d documents, want %d", found, docs/2)
		}
	})
	run(node.DefaultConfigWith(func(nc *node.Config) {
		nc.Ops.RequestTimeout = timeout
	}), func(c *client) {
		// A node's first search opens the index, which can itself take
		// longer than the timeout: not what is timed here.
		for i := 0; ; i++ {
			r := c.do(t, "POST", docPath("db1", "pairs", "search"), `{"q":"x","page":1}`)
			if r.status == 200 {
				break
			}
			if i == 10 {
				t.Fatalf("a search of x: %s", r)
			}
		}
		q := strings.Repeat("x-", 511) + "x " + strings.Repeat("y-", 511) + "y"
		start := time.Now()
		wantError(t, c.do(t, "POST", docPath("db1", "pairs", "search"), `{"q":"`+q+`","search_fields":["a"],"page":1}`),
			504, "DEADLINE_EXCEEDED", "context deadline exceeded")
		if took := time.Since(start); took > timeout+time.Second {
			t.Errorf("the search answered after %v, past its deadline of %v by more than a second", took, timeout)
		}
	})
}
