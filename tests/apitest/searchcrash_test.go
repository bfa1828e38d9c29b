package apitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// crashWriters is how many clients write at once when the server is
// killed.
const crashWriters = 16

// TestSearchAfterKill kills a folio binary with SIGKILL while 16 clients
// insert, update and delete, starts it again on the same data, and checks
// that the search index, replayed from its watermark, holds exactly what
// the store holds; then removes the index directory, lets the node rebuild
// it from the documents, and checks that the caught-up index and the fresh
// rebuild answer the same searches alike. On both backends (the kill is
// Folio's; PostgreSQL keeps running).
func TestSearchAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the folio binary")
	}
	bin := buildFolio(t)
	for _, b := range backendtest.All {
		t.Run(b.Name, func(t *testing.T) { searchAfterKill(t, bin, b) })
	}
}

func searchAfterKill(t *testing.T, bin string, b backendtest.Backend) {
	searchDir := filepath.Join(t.TempDir(), "search")
	args := append([]string{"serve", "--search-dir", searchDir}, b.Durable(t).ServeArgs...)
	start := func() *process {
		addr := freeAddr(t)
		return startFolio(t, bin, addr, nil, append(args, "--addr", addr)...)
	}
	p := start()
	c := p.client(t)
	c.createDB(t, "db1")
	c.createColl(t, "db1", "crash", `{"title":"crash","properties":{"id":{"type":"integer"},"w":{"type":"integer"},"t":{"type":"string"},"g":{"type":"string"},"n":{"type":"integer"}},"primary_key":["id"]}`)

	// Each writer owns the ids w*1e6+...: inserts two documents a request,
	// updates one of its earlier ones every third (new text and number),
	// deletes one every fifth. It stops at its first failure: the kill.
	var wg sync.WaitGroup
	var writes [crashWriters]atomic.Int64
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := w * 1_000_000
			for i := 0; ; i++ {
				id := base + 2*i
				body := fmt.Sprintf(`{"documents":[{"id":%d,"w":%d,"t":"first w%d","g":"g%d","n":%d},{"id":%d,"w":%d,"t":"first w%d","g":"g%d","n":%d}]}`,
					id, w, id, id%7, i, id+1, w, id+1, (id+1)%7, i)
				if r, err := c.send("POST", docPath("db1", "crash", "insert"), body); err != nil || r.status != 200 {
					return
				}
				writes[w].Add(1)
				if i%3 == 2 {
					body = fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"t":"second","n":%d}}}`, id-2, 1000+i)
					if r, err := c.send("PUT", docPath("db1", "crash", "update"), body); err != nil || r.status != 200 {
						return
					}
				}
				if i%5 == 4 {
					body = fmt.Sprintf(`{"filter":{"id":%d}}`, id-3)
					if r, err := c.send("DELETE", docPath("db1", "crash", "delete"), body); err != nil || r.status != 200 {
						return
					}
				}
			}
		}()
	}
	time.Sleep(3 * time.Second)
	for w := range crashWriters {
		if writes[w].Load() == 0 {
			t.Errorf("writer %d wrote nothing before the kill", w)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	wg.Wait()

	p = start()
	c = p.client(t)
	stored := storedCrashDocs(t, c)
	if len(stored) < 2*crashWriters {
		t.Fatalf("only %d documents were written before the kill", len(stored))
	}
	var acked int64
	for w := range crashWriters {
		acked += writes[w].Load()
	}
	t.Logf("%d inserts acknowledged by %d writers before the kill; %d documents stored", acked, crashWriters, len(stored))
	caughtUp := crashView(t, c)
	if want := storeView(stored); caughtUp != want {
		t.Errorf("the index replayed after the kill differs from the store:\n%s", diffLines(caughtUp, want))
	}
	p.stop(t, syscall.SIGTERM)

	if err := os.RemoveAll(searchDir); err != nil {
		t.Fatal(err)
	}
	p = start()
	c = p.client(t)
	waitSearchable(t, c, docPath("db1", "crash", "search"))
	if rebuilt := crashView(t, c); rebuilt != caughtUp {
		t.Errorf("the caught-up index and a fresh rebuild differ:\n%s", diffLines(caughtUp, rebuilt))
	}
	p.stop(t, syscall.SIGTERM)
}

type crashDoc struct {
	ID, W, N int
	T, G     string
}

func storedCrashDocs(t *testing.T, c *client) []crashDoc {
	t.Helper()
	var out []crashDoc
	for _, d := range c.all(t, "db1", "crash") {
		var doc crashDoc
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		out = append(out, doc)
	}
	return out
}

// A crash view renders, per writer, which ids the index finds for every
// document, for the text "first" and for the text "second", and over the
// whole collection the facet counts of g and the stats of n (computed by
// the index from its own copies of the numbers). The hits' documents come
// from the store, but which keys are hits comes from the index alone, so
// a stale or missing entry shows as a different id set or count.
func crashView(t *testing.T, c *client) string {
	t.Helper()
	var b strings.Builder
	for w := range crashWriters {
		for _, q := range []string{"", "first", "second"} {
			body := fmt.Sprintf(`{"q":%q,"filter":{"w":%d},"sort":[{"id":"$asc"}],"page_size":1000}`, q, w)
			ch := c.search(t, "db1", "crash", body)
			fmt.Fprintf(&b, "w%d q%q found %d ids %s\n", w, q, ch[0].Meta.Found, strings.Join(hitField(t, ch, "id"), ","))
		}
	}
	ch := c.search(t, "db1", "crash", `{"facet":{"g":{"size":10},"n":{"size":1}},"page":1,"page_size":1}`)
	var counts []string
	for _, fc := range ch[0].Facets["g"].Counts {
		counts = append(counts, fmt.Sprintf("%s=%d", fc.Value, fc.Count))
	}
	sort.Strings(counts)
	st := ch[0].Facets["n"].Stats
	fmt.Fprintf(&b, "found %d g %s n count %d sum %v min %v max %v\n", ch[0].Meta.Found, strings.Join(counts, ","), st.Count, deref(st.Sum), deref(st.Min), deref(st.Max))
	return b.String()
}

// storeView is what crashView must show for the stored documents.
func storeView(docs []crashDoc) string {
	docs = slices.Clone(docs)
	slices.SortFunc(docs, func(a, b crashDoc) int { return a.ID - b.ID })
	var b strings.Builder
	for w := range crashWriters {
		for _, q := range []string{"", "first", "second"} {
			var ids []string
			for _, d := range docs {
				if d.W == w && (q == "" || strings.HasPrefix(d.T, q)) {
					ids = append(ids, fmt.Sprint(d.ID))
				}
			}
			fmt.Fprintf(&b, "w%d q%q found %d ids %s\n", w, q, len(ids), strings.Join(ids, ","))
		}
	}
	g := map[string]int{}
	sum, mn, mx := 0.0, 0.0, 0.0
	for i, d := range docs {
		g[d.G]++
		n := float64(d.N)
		sum += n
		if i == 0 || n < mn {
			mn = n
		}
		if i == 0 || n > mx {
			mx = n
		}
	}
	var counts []string
	for v, n := range g {
		counts = append(counts, fmt.Sprintf("%s=%d", v, n))
	}
	sort.Strings(counts)
	fmt.Fprintf(&b, "found %d g %s n count %d sum %v min %v max %v\n", len(docs), strings.Join(counts, ","), len(docs), sum, mn, mx)
	return b.String()
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// waitSearchable waits for a collection's index to answer (a rebuild
// answers 503 until it is done).
func waitSearchable(t *testing.T, c *client, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := c.do(t, "POST", path, `{"page":1,"page_size":1}`)
		switch {
		case r.status == 200:
			return
		case r.status != 503:
			t.Fatalf("search %s: %s", path, r)
		case time.Now().After(deadline):
			t.Fatalf("%s is still not searchable: %s", path, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// diffLines shows the lines of two views that differ, a's over b's.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "- %s\n+ %s\n", x, y)
		}
	}
	return out.String()
}
