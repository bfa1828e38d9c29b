package apitest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
)

// TestSearchIndexAfterKill kills a folio binary with SIGKILL while 16
// clients stream documents with vectors into a search index (each request
// two new documents, and now and then one replaced with a new vector), and
// starts it again on the same data: every acknowledged document is stored,
// found by words and by its own vector (its nearest neighbour, at distance
// zero), with its last vector, and none is found twice. On both backends.
func TestSearchIndexAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the folio binary")
	}
	bin := buildFolio(t)
	for _, b := range backendtest.All {
		t.Run(b.Name, func(t *testing.T) { searchIndexAfterKill(t, bin, b) })
	}
}

// vecOf is document id's vector in its version v: distinct for every id
// and version, so that a document's own vector finds it alone.
func vecOf(id, version int) []float64 {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(version)))
	v := make([]float64, 4)
	for i := range v {
		v[i] = float64(float32(rng.Float64()*2 - 1))
	}
	return v
}

func searchIndexAfterKill(t *testing.T, bin string, b backendtest.Backend) {
	searchDir := filepath.Join(t.TempDir(), "search")
	args := append([]string{"serve", "--search-dir", searchDir}, b.Durable(t).ServeArgs...)
	start := func() *process {
		addr := freeAddr(t)
		return startFolio(t, bin, addr, nil, append(args, "--addr", addr)...)
	}
	p := start()
	c := p.client(t)
	const project = "crashidx"
	c.ok(t, "POST", "/v1/projects/"+project+"/create", "")
	c.ok(t, "PUT", indexPath(project, "docs"), `{"schema":{"title":"docs","properties":{
		"w":{"type":"integer"},"t":{"type":"string"},"v":{"type":"array","format":"vector","dimensions":4,"distance":"euclidean"}}}}`)
	search := indexDocs(project, "docs") + "/search"
	waitSearchable(t, c, search) // built before the writes: they go through the log

	// acked[w] maps each id a writer had acknowledged to the version of
	// its vector; inFlight[w] is what its last, unanswered request wrote.
	var mu sync.Mutex
	acked := make([]map[int]int, crashWriters)
	inFlight := make([]map[int]int, crashWriters)
	var wg sync.WaitGroup
	for w := range crashWriters {
		acked[w], inFlight[w] = map[int]int{}, map[int]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := func(id, version int) string {
				b, _ := json.Marshal(map[string]any{"id": fmt.Sprint(id), "w": w, "t": fmt.Sprintf("word%d v%d", w, version), "v": vecOf(id, version)})
				return string(b)
			}
			for i := 0; ; i++ {
				id := w*1_000_000 + 2*i
				batch := map[int]int{id: 0, id + 1: 0}
				docs := []string{doc(id, 0), doc(id+1, 0)}
				if i%3 == 2 { // a new vector for an earlier one
					batch[id-4] = i
					docs = append(docs, doc(id-4, i))
				}
				mu.Lock()
				inFlight[w] = batch
				mu.Unlock()
				r, err := c.send("PUT", indexDocs(project, "docs"), `{"documents":[`+strings.Join(docs, ",")+`]}`)
				if err != nil || r.status != 200 {
					return
				}
				var body struct {
					Status []struct {
						ID    string
						Error any
					}
				}
				if json.Unmarshal(r.body, &body) != nil || len(body.Status) != len(docs) {
					t.Errorf("writer %d: %s", w, r)
					return
				}
				for _, s := range body.Status {
					if s.Error != nil {
						t.Errorf("writer %d: %s", w, r)
						return
					}
				}
				mu.Lock()
				for id, v := range batch {
					acked[w][id] = v
				}
				inFlight[w] = nil
				mu.Unlock()
			}
		}()
	}
	time.Sleep(3 * time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	wg.Wait()

	p = start()
	c = p.client(t)
	waitSearchable(t, c, search)
	total := 0
	for w := range crashWriters {
		total += len(acked[w])
		// Every document of the writer the index finds by its word, each
		// once: the acknowledged ones, perhaps some of the last request's.
		ch := c.searchIndex(t, project, "docs", fmt.Sprintf(`{"q":"word%d","filter":{"w":%d},"page_size":1000}`, w, w))
		found := hitIDs(t, ch)
		sorted := slices.Clone(found)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(found) {
			t.Errorf("writer %d: a document found twice: %v", w, found)
		}
		got := map[string]bool{}
		for _, id := range found {
			got[id] = true
		}
		for id := range acked[w] {
			if !got[fmt.Sprint(id)] {
				t.Errorf("writer %d: acknowledged document %d is not found by its word after the restart", w, id)
			}
		}
		for _, id := range found {
			var n int
			fmt.Sscan(id, &n)
			if _, ok := acked[w][n]; !ok {
				if _, ok := inFlight[w][n]; !ok {
					t.Errorf("writer %d: document %s found, never written", w, id)
				}
			}
		}
		// Each acknowledged document is its own vector's nearest
		// neighbour, at its last version (a few of each writer's).
		ids := make([]int, 0, len(acked[w]))
		for id := range acked[w] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids[max(0, len(ids)-5):] {
			// Its version as stored: the acknowledged one, or the last
			// request's if that landed unanswered.
			stored := c.getIndexDocs(t, project, "docs", fmt.Sprint(id))[0]
			var version int
			if _, err := fmt.Sscanf(fmt.Sprint(stored["t"]), fmt.Sprintf("word%d v%%d", w), &version); err != nil {
				t.Fatalf("document %d: %v (%v)", id, stored, err)
			}
			if v, ok := inFlight[w][id]; version != acked[w][id] && (!ok || version != v) {
				t.Errorf("writer %d: document %d is at version %d, acknowledged at %d", w, id, version, acked[w][id])
			}
			q, _ := json.Marshal(vecOf(id, version))
			ch := c.searchIndex(t, project, "docs", fmt.Sprintf(`{"vector":{"v":%s,"top_k":1}}`, q))
			if got := hitIDs(t, ch); len(got) != 1 || got[0] != fmt.Sprint(id) || hitDistances(t, ch)[0] != 0 {
				t.Errorf("writer %d: document %d (version %d) is not its own vector's nearest: %v", w, id, version, got)
			}
		}
	}
	if total < 2*crashWriters {
		t.Fatalf("only %d documents acknowledged before the kill", total)
	}
	t.Logf("%d documents acknowledged by %d writers before the kill", total, crashWriters)
	p.stop(t, syscall.SIGTERM)
}
