package apitest

import (
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSearchAfterKill kills a folio binary with SIGKILL while it inserts,
// updates and deletes, starts it again on the same data directory, and
// checks that the search index, replayed from its watermark, holds exactly
// what the store holds: every document found by its key with its current
// text, nothing deleted found, and the counts equal.
func TestSearchAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the folio binary")
	}
	bin := buildFolio(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	p := startFolio(t, bin, addr, nil, "serve", "--addr", addr, "--data-dir", dir)
	c := p.client(t)
	c.createDB(t, "db1")
	c.createColl(t, "db1", "crash", `{"title":"crash","properties":{"id":{"type":"integer"},"t":{"type":"string"},"n":{"type":"integer"}},"primary_key":["id"]}`)

	// The writer stops at its first failure: the kill.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			body := fmt.Sprintf(`{"documents":[{"id":%d,"t":"first w%d","n":%d},{"id":%d,"t":"first w%d","n":%d}]}`, 2*i, 2*i, i, 2*i+1, 2*i+1, i)
			if r, err := c.send("POST", docPath("db1", "crash", "insert"), body); err != nil || r.status != 200 {
				return
			}
			if i%3 == 2 {
				body = fmt.Sprintf(`{"filter":{"n":%d},"fields":{"$set":{"t":"second"}}}`, i-1)
				if r, err := c.send("PUT", docPath("db1", "crash", "update"), body); err != nil || r.status != 200 {
					return
				}
			}
			if i%5 == 4 {
				body = fmt.Sprintf(`{"filter":{"id":%d}}`, 2*i-3)
				if r, err := c.send("DELETE", docPath("db1", "crash", "delete"), body); err != nil || r.status != 200 {
					return
				}
			}
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	wg.Wait()

	addr = freeAddr(t)
	p = startFolio(t, bin, addr, nil, "serve", "--addr", addr, "--data-dir", dir)
	c = p.client(t)
	stored := map[int]string{}
	seconds := 0
	for _, d := range c.all(t, "db1", "crash") {
		var doc struct {
			ID int
			T  string
		}
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		stored[doc.ID] = d
		if doc.T == "second" {
			seconds++
		}
	}
	if len(stored) < 10 {
		t.Fatalf("only %d documents were written before the kill", len(stored))
	}
	if found := c.search(t, "db1", "crash", `{"page":1,"page_size":1}`)[0].Meta.Found; found != int64(len(stored)) {
		t.Errorf("the index counts %d documents, the store holds %d", found, len(stored))
	}
	if found := c.search(t, "db1", "crash", `{"q":"second","page":1,"page_size":1}`)[0].Meta.Found; found != int64(seconds) {
		t.Errorf("the index finds %d updated documents, the store holds %d", found, seconds)
	}
	// Every document by its id and its current text, through the index
	// alone (the filter and q both come from it; the hit is read from the
	// store).
	for id, d := range stored {
		var doc struct{ T string }
		json.Unmarshal([]byte(d), &doc)
		q, _ := json.Marshal(fmt.Sprintf("%q", doc.T))
		ch := c.search(t, "db1", "crash", fmt.Sprintf(`{"q":%s,"filter":{"id":%d},"page":1}`, q, id))
		if ch[0].Meta.Found != 1 || len(ch[0].Hits) != 1 || string(ch[0].Hits[0].Data) != d {
			t.Errorf("document %d (%s): the index finds %d", id, d, ch[0].Meta.Found)
		}
	}
	p.stop(t, syscall.SIGTERM)
}
