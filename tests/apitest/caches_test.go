package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/cache"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

func cachePath(project, cache, op string) string {
	return "/v1/projects/" + project + "/caches/" + cache + "/" + op
}

// cacheKeys reads a keys stream: its lines {"result":{"keys":[...],
// "cursor":n}}, every key sorted, and the cursors in order.
func cacheKeys(t *testing.T, c *client, path string) (keys []string, cursors []uint64) {
	t.Helper()
	r := c.ok(t, "GET", path, "")
	for _, line := range strings.Split(strings.TrimSpace(string(r.body)), "\n") {
		if line == "" {
			continue
		}
		var l struct {
			Result struct {
				Keys   []string `json:"keys"`
				Cursor *uint64  `json:"cursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Result.Cursor == nil {
			t.Fatalf("keys line %q: %v", line, err)
		}
		keys = append(keys, l.Result.Keys...)
		cursors = append(cursors, *l.Result.Cursor)
	}
	sort.Strings(keys)
	return keys, cursors
}

// Every cache route, on a durable cache and a volatile one, in the
// original's shapes: the value is JSON as it was set, each refusal with
// its code and message.
func TestCaches(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", projectPath("shop", "create"), "")
		for _, volatile := range []bool{false, true} {
			name := "durable"
			if volatile {
				name = "volatile"
			}
			t.Run(name, func(t *testing.T) {
				created := c.okObject(t, "POST", cachePath("shop", name, "create"), fmt.Sprintf(`{"options":{"volatile":%v}}`, volatile))
				if created["status"] != "created" || created["message"] != "Cache is created successfully" {
					t.Errorf("create: %v", created)
				}
				wantError(t, c.do(t, "POST", cachePath("shop", name, "create"), `{}`), 409, "ALREADY_EXISTS", "cache already exist '"+name+"'")
				set := c.okObject(t, "POST", cachePath("shop", name, "k1/set"), `{"value":{"a":[1,"x"]}}`)
				if set["status"] != "set" || set["message"] != "Key is set successfully" {
					t.Errorf("set: %v", set)
				}
				if got := string(c.ok(t, "GET", cachePath("shop", name, "k1/get"), "").body); got != `{"value":{"a":[1,"x"]}}` {
					t.Errorf("get: %s", got)
				}
				wantError(t, c.do(t, "POST", cachePath("shop", name, "k1/set"), `{"value":2,"nx":true}`), 409, "ALREADY_EXISTS", "key already exists")
				wantError(t, c.do(t, "POST", cachePath("shop", name, "k2/set"), `{"value":2,"xx":true}`), 404, "NOT_FOUND", "key not found")
				c.ok(t, "POST", cachePath("shop", name, "k2/set"), `{"value":"two","ex":100}`)
				got := c.okObject(t, "GET", cachePath("shop", name, "k2/get"), "")
				if left, _ := strconv.ParseFloat(fmt.Sprint(got["expires_in_ms"]), 64); got["value"] != "two" || left < 90_000 || left > 100_000 {
					t.Errorf("get of a key with 100 s to live: %v", got)
				}
				c.ok(t, "POST", cachePath("shop", name, "k3/set"), `{"value":3,"px":1}`)
				time.Sleep(5 * time.Millisecond)
				wantError(t, c.do(t, "GET", cachePath("shop", name, "k3/get"), ""), 404, "NOT_FOUND", "key not found")
				gs := c.okObject(t, "POST", cachePath("shop", name, "k1/getset"), `{"value":"new"}`)
				if gs["status"] != "set" || fmt.Sprint(gs["old_value"]) != "map[a:[1 x]]" {
					t.Errorf("getset: %v", gs)
				}
				if gs := c.okObject(t, "POST", cachePath("shop", name, "fresh/getset"), `{"value":1}`); gs["old_value"] != nil {
					t.Errorf("getset of a new key: %v", gs)
				}
				keys, cursors := cacheKeys(t, c, cachePath("shop", name, "keys"))
				if fmt.Sprint(keys) != "[fresh k1 k2]" || cursors[len(cursors)-1] != 0 {
					t.Errorf("keys: %v %v", keys, cursors)
				}
				if keys, _ := cacheKeys(t, c, cachePath("shop", name, "keys")+"?pattern=k*&count=1"); fmt.Sprint(keys) != "[k1 k2]" {
					t.Errorf("keys k*: %v", keys)
				}
				del := c.okObject(t, "DELETE", cachePath("shop", name, "k1/delete"), "")
				if del["status"] != "deleted" || del["message"] != "Entries deleted count# 1" {
					t.Errorf("del: %v", del)
				}
				if del := c.okObject(t, "DELETE", cachePath("shop", name, "k1/delete"), ""); del["message"] != "Entries deleted count# 0" {
					t.Errorf("del again: %v", del)
				}
				wantError(t, c.do(t, "GET", cachePath("shop", name, "k1/get"), ""), 404, "NOT_FOUND", "key not found")
			})
		}
		list := c.ok(t, "GET", "/v1/projects/shop/caches/list", "")
		if string(list.body) != `{"caches":[{"name":"durable"},{"name":"volatile"}]}` {
			t.Errorf("list: %s", list.body)
		}
		del := c.okObject(t, "DELETE", cachePath("shop", "durable", "delete"), "")
		if del["status"] != "deleted" || del["message"] != "Cache is deleted successfully" {
			t.Errorf("delete: %v", del)
		}
		wantError(t, c.do(t, "DELETE", cachePath("shop", "durable", "delete"), ""), 404, "NOT_FOUND", "cache not found 'durable'")
		wantError(t, c.do(t, "GET", cachePath("shop", "durable", "k2/get"), ""), 404, "NOT_FOUND", "cache not found 'durable'")
		wantError(t, c.do(t, "GET", cachePath("shop", "durable", "keys"), ""), 404, "NOT_FOUND", "cache not found 'durable'")
		c.ok(t, "POST", cachePath("shop", "durable", "create"), "")
		if keys, _ := cacheKeys(t, c, cachePath("shop", "durable", "keys")); len(keys) != 0 {
			t.Errorf("a cache created again under a deleted one's name holds %v", keys)
		}

		wantError(t, c.do(t, "POST", cachePath("nope", "durable", "k/set"), `{"value":1}`), 404, "NOT_FOUND", "project doesn't exist 'nope'")
		wantError(t, c.do(t, "GET", "/v1/projects/nope/caches/list", ""), 404, "NOT_FOUND", "project doesn't exist 'nope'")
		wantError(t, c.do(t, "POST", cachePath("shop", "a.b", "create"), ""), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", cachePath("shop", "durable", "k/set"), `{"value":`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", cachePath("shop", "durable", "k/set"), `{"value":"`+strings.Repeat("x", 1_000_001)+`"}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "GET", cachePath("shop", "durable", "keys")+"?count=x", ""), 400, "INVALID_ARGUMENT", "count 'x' is not a number")

		// A project's caches go with it.
		c.ok(t, "POST", cachePath("shop", "durable", "k/set"), `{"value":1}`)
		c.ok(t, "DELETE", projectPath("shop", "delete"), "")
		c.ok(t, "POST", projectPath("shop", "create"), "")
		if list := c.ok(t, "GET", "/v1/projects/shop/caches/list", ""); string(list.body) != `{"caches":[]}` {
			t.Errorf("caches of a project deleted and created again: %s", list.body)
		}
		wantError(t, c.do(t, "GET", cachePath("shop", "durable", "k/get"), ""), 404, "NOT_FOUND", "cache not found 'durable'")
	})
}

// An expired entry is never answered, also by a server started on the
// store right after the entry expired, before any sweep; a durable
// cache's live entries outlive the restart, a volatile cache's do not
// (its record does).
func TestCacheExpiryAcrossRestart(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		data := b.Durable(t)
		n := startNode(t, data.Open(), node.DefaultConfig())
		c := newClient("http://" + n.Addr().String())
		c.ok(t, "POST", projectPath("shop", "create"), "")
		c.ok(t, "POST", cachePath("shop", "dc", "create"), "")
		c.ok(t, "POST", cachePath("shop", "vc", "create"), `{"options":{"volatile":true}}`)
		for _, cache := range []string{"dc", "vc"} {
			c.ok(t, "POST", cachePath("shop", cache, "short/set"), `{"value":1,"px":700}`)
			c.ok(t, "POST", cachePath("shop", cache, "long/set"), `{"value":2,"ex":3600}`)
			c.ok(t, "POST", cachePath("shop", cache, "forever/set"), `{"value":3}`)
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(800 * time.Millisecond)
		n = startNode(t, data.Open(), node.DefaultConfig())
		defer n.Close()
		c = newClient("http://" + n.Addr().String())
		wantError(t, c.do(t, "GET", cachePath("shop", "dc", "short/get"), ""), 404, "NOT_FOUND", "key not found")
		for _, k := range []string{"long", "forever"} {
			c.ok(t, "GET", cachePath("shop", "dc", k+"/get"), "")
			wantError(t, c.do(t, "GET", cachePath("shop", "vc", k+"/get"), ""), 404, "NOT_FOUND", "key not found")
		}
		if keys, _ := cacheKeys(t, c, cachePath("shop", "dc", "keys")); fmt.Sprint(keys) != "[forever long]" {
			t.Errorf("keys of the durable cache after the restart: %v", keys)
		}
		if keys, _ := cacheKeys(t, c, cachePath("shop", "vc", "keys")); len(keys) != 0 {
			t.Errorf("keys of the volatile cache after the restart: %v", keys)
		}
		if r := c.ok(t, "GET", "/v1/projects/shop/caches/list", ""); r.status != http.StatusOK || !strings.Contains(string(r.body), `"vc"`) {
			t.Errorf("list after the restart: %s", r.body)
		}
	})
}

// Two nodes on one store, each remembering the cache records it read
// (internal/cache's records.go). A durable cache deleted or recreated on
// one node is never served from its old record on the other; a volatile
// one is served from it for at most cache.RecordBound; on the node that
// deletes or creates a cache, the change shows at once.
func TestCacheRecordsAcrossNodes(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		nodeA := startNode(t, store, node.DefaultConfig())
		nodeB := startNode(t, store, node.DefaultConfig())
		t.Cleanup(func() { nodeA.Close(); nodeB.Close() })
		a, bc := newClient("http://"+nodeA.Addr().String()), newClient("http://"+nodeB.Addr().String())
		a.ok(t, "POST", projectPath("shop", "create"), "")
		notFound := func(name string) string { return "cache not found '" + name + "'" }

		// Durable: B remembers dc's record, A deletes dc; B's calls find
		// it gone at once, and write nothing.
		a.ok(t, "POST", cachePath("shop", "dc", "create"), "")
		bc.ok(t, "POST", cachePath("shop", "dc", "k/set"), `{"value":1}`)
		bc.ok(t, "GET", cachePath("shop", "dc", "k/get"), "")
		a.ok(t, "DELETE", cachePath("shop", "dc", "delete"), "")
		wantError(t, bc.do(t, "POST", cachePath("shop", "dc", "k2/set"), `{"value":2}`), 404, "NOT_FOUND", notFound("dc"))
		wantError(t, bc.do(t, "GET", cachePath("shop", "dc", "k/get"), ""), 404, "NOT_FOUND", notFound("dc"))
		a.ok(t, "POST", cachePath("shop", "dc", "create"), "")
		wantError(t, bc.do(t, "GET", cachePath("shop", "dc", "k2/get"), ""), 404, "NOT_FOUND", "key not found")
		// A project dropped and created again takes a new id: B's record
		// of its cache names the old one.
		bc.ok(t, "POST", cachePath("shop", "dc", "k/set"), `{"value":1}`)
		a.ok(t, "DELETE", projectPath("shop", "delete"), "")
		a.ok(t, "POST", projectPath("shop", "create"), "")
		a.ok(t, "POST", cachePath("shop", "dc", "create"), "")
		wantError(t, bc.do(t, "GET", cachePath("shop", "dc", "k/get"), ""), 404, "NOT_FOUND", "key not found")
		// Durable recreated as volatile: B's next set goes to its memory,
		// not to the store where A's sweep or keys would see it.
		bc.ok(t, "POST", cachePath("shop", "dc", "k/set"), `{"value":1}`)
		a.ok(t, "DELETE", cachePath("shop", "dc", "delete"), "")
		a.ok(t, "POST", cachePath("shop", "dc", "create"), `{"options":{"volatile":true}}`)
		bc.ok(t, "POST", cachePath("shop", "dc", "v/set"), `{"value":1}`)
		if keys, _ := cacheKeys(t, a, cachePath("shop", "dc", "keys")); len(keys) != 0 {
			t.Errorf("A's keys of the volatile cache after B's set: %v", keys)
		}
		if keys, _ := cacheKeys(t, bc, cachePath("shop", "dc", "keys")); fmt.Sprint(keys) != "[v]" {
			t.Errorf("B's keys of the volatile cache after its set: %v", keys)
		}

		// Volatile: B serves vc from its old record for at most the bound
		// after A deletes it (gone) or deletes and creates it again (its
		// entries gone: a new cache).
		for _, recreate := range []bool{false, true} {
			name, want := "gone", notFound("gone")
			if recreate {
				name, want = "again", "key not found"
			}
			a.ok(t, "POST", cachePath("shop", name, "create"), `{"options":{"volatile":true}}`)
			bc.ok(t, "POST", cachePath("shop", name, "k/set"), `{"value":1}`)
			bc.ok(t, "GET", cachePath("shop", name, "k/get"), "")
			a.ok(t, "DELETE", cachePath("shop", name, "delete"), "")
			changed := time.Now()
			if recreate {
				a.ok(t, "POST", cachePath("shop", name, "create"), `{"options":{"volatile":true}}`)
			}
			for {
				r := bc.do(t, "GET", cachePath("shop", name, "k/get"), "")
				if r.status == http.StatusNotFound {
					// The old record's entries here may have gone first
					// (the sweep drops a deleted cache's): "key not found"
					// until the record is read again.
					if e, _ := errorOf(t, r); e.Message == want {
						break
					}
				}
				// A little slack over the bound for a loaded machine.
				if time.Since(changed) > cache.RecordBound+500*time.Millisecond {
					t.Fatalf("%s: B still answered from the old record %v after A's change (bound %v): %s", name, time.Since(changed), cache.RecordBound, r)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}

		// On the node that deletes or creates a cache, at once.
		bc.ok(t, "POST", cachePath("shop", "local", "create"), `{"options":{"volatile":true}}`)
		bc.ok(t, "POST", cachePath("shop", "local", "k/set"), `{"value":1}`)
		bc.ok(t, "DELETE", cachePath("shop", "local", "delete"), "")
		wantError(t, bc.do(t, "GET", cachePath("shop", "local", "k/get"), ""), 404, "NOT_FOUND", notFound("local"))
		bc.ok(t, "POST", cachePath("shop", "local", "create"), `{"options":{"volatile":true}}`)
		wantError(t, bc.do(t, "GET", cachePath("shop", "local", "k/get"), ""), 404, "NOT_FOUND", "key not found")
		bc.ok(t, "POST", cachePath("shop", "local", "k/set"), `{"value":1}`)
		bc.ok(t, "DELETE", projectPath("shop", "delete"), "")
		wantError(t, bc.do(t, "GET", cachePath("shop", "local", "k/get"), ""), 404, "NOT_FOUND", anyMessage)
	})
}
