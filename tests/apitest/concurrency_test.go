package apitest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// sendRetrying sends a request until it gets something other than 409
// ABORTED. The server retries a conflicting transaction itself and answers
// ABORTED only once it has given up; a client then tries again, as the
// error's retry advice says. Any other answer is returned.
func sendRetrying(c *client, aborted *atomic.Int64, method, path, body string) (*response, error) {
	for attempt := 0; ; attempt++ {
		r, err := c.send(method, path, body)
		if err != nil || r.status != 409 || attempt == 50 {
			return r, err
		}
		var e struct{ Error apiError }
		if json.Unmarshal(r.body, &e) != nil || e.Error.Code != "ABORTED" {
			return r, nil
		}
		aborted.Add(1)
	}
}

// Writers and readers at once through HTTP: every insert lands, the shared
// document ends with a value one of its updates wrote, reads see a count
// that never goes back, and nothing fails with a 5xx.
func TestConcurrentWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":0,"age":0}`)
		const workers, perWorker = 6, 15
		var (
			wg, readers sync.WaitGroup
			aborted     atomic.Int64
			mu          sync.Mutex
			written     []int // ages the updates of the shared document wrote
		)
		expect200 := func(what string, r *response, err error) bool {
			if err != nil {
				t.Errorf("%s: %v", what, err)
				return false
			}
			if r.status != 200 {
				t.Errorf("%s: %s", what, r)
				return false
			}
			return true
		}

		done := make(chan struct{})
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				r, err := c.send("POST", docPath("db1", "users", "read"), `{"filter":{}}`)
				if !expect200("read", r, err) {
					return
				}
				n := 0
				for _, b := range r.body {
					if b == '\n' {
						n++
					}
				}
				if n < last {
					t.Errorf("a read saw %d documents after one saw %d", n, last)
				}
				last = n
			}
		}()

		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					id := 1 + w*perWorker + i
					r, err := sendRetrying(c, &aborted, "POST", docPath("db1", "users", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"age":%d}]}`, id, w))
					if !expect200(fmt.Sprintf("insert %d", id), r, err) {
						return
					}
					r, err = sendRetrying(c, &aborted, "PUT", docPath("db1", "users", "update"), fmt.Sprintf(`{"filter":{"id":0},"fields":{"$set":{"age":%d}}}`, id))
					if !expect200(fmt.Sprintf("update to %d", id), r, err) {
						return
					}
					mu.Lock()
					written = append(written, id)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(done)
		readers.Wait()
		if t.Failed() {
			return
		}
		t.Logf("%d requests answered ABORTED and were sent again", aborted.Load())

		var ids []int
		for _, d := range c.all(t, "db1", "users") {
			ids = append(ids, idOf(t, []byte(d)))
		}
		if len(ids) != 1+workers*perWorker || ids[0] != 0 || ids[len(ids)-1] != workers*perWorker {
			t.Errorf("after %d inserts: %d documents, ids %v", workers*perWorker, len(ids), ids)
		}
		var shared struct{ Age int }
		if err := json.Unmarshal([]byte(c.docs(t, "db1", "users", `{"filter":{"id":0}}`)[0]), &shared); err != nil || !slices.Contains(written, shared.Age) {
			t.Errorf("shared document has age %d, which no update wrote", shared.Age)
		}
	})
}

// Concurrent inserts that generate int32 keys all take a key of their own
// from the one counter.
func TestConcurrentGeneratedKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "seq", `{"title":"seq","properties":{"id":{"type":"integer","format":"int32","autoGenerate":true},"w":{"type":"integer"}},"primary_key":["id"]}`)
		const workers, perWorker = 4, 10
		var (
			wg      sync.WaitGroup
			aborted atomic.Int64
			mu      sync.Mutex
			keys    []int
		)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWorker {
					r, err := sendRetrying(c, &aborted, "POST", docPath("db1", "seq", "insert"), fmt.Sprintf(`{"documents":[{"w":%d}]}`, w))
					if err != nil || r.status != 200 {
						t.Errorf("insert: %v %v", r, err)
						return
					}
					var body struct{ Keys []struct{ ID int } }
					if err := json.Unmarshal(r.body, &body); err != nil || len(body.Keys) != 1 {
						t.Errorf("insert response %s", r.body)
						return
					}
					mu.Lock()
					keys = append(keys, body.Keys[0].ID)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		t.Logf("%d requests answered ABORTED and were sent again", aborted.Load())
		slices.Sort(keys)
		for i, k := range keys {
			if k != i+1 {
				t.Fatalf("generated keys are not 1 to %d, each once: %v", workers*perWorker, keys)
			}
		}
		if n := len(c.all(t, "db1", "seq")); n != workers*perWorker {
			t.Errorf("%d documents, want %d", n, workers*perWorker)
		}
	})
}
