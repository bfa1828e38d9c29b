package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

func userMeta(key, verb string) string { return "/v1/management/users/metadata/" + key + "/" + verb }
func nsMeta(key, verb string) string   { return "/v1/management/namespace/metadata/" + key + "/" + verb }

// metaValue is the value a metadata answer carries, as its JSON text (""
// when it has none).
func metaValue(t testing.TB, r *response) string {
	t.Helper()
	var body struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("metadata answer %s: %v", r, err)
	}
	return string(body.Value)
}

// Metadata round trips, per namespace and per application: a namespace's
// values are its own (another's admin reads nothing), an application's
// are its own, 2022's paths reach the same values, insert of a key that
// holds one and update of one that does not answer as the original did,
// the bounds hold, and deleting a namespace clears its values.
func TestMetadata(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		s.owner.ok(t, "POST", "/v1/management/namespaces/beta/create", `{"id":6}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		readerID, readerSecret := s.app(t, admin, `{"name":"r","role":"reader"}`)
		access, _ := s.token(t, readerID, readerSecret)
		reader := s.anon.as(access)
		other := s.appClient(t, s.owner, `{"name":"b","namespace":"beta","role":"admin"}`)

		// The namespace's.
		r := admin.ok(t, "POST", nsMeta("flags", "insert"), `{"value":{"dark":true,"n":[1,2]}}`)
		if m := r.object(t); str(t, m, "metadataKey") != "flags" || fmt.Sprint(m["namespaceId"]) != "5" || metaValue(t, r) != `{"dark":true,"n":[1,2]}` {
			t.Errorf("insert answered %s", r)
		}
		wantError(t, admin.do(t, "POST", nsMeta("flags", "insert"), `{"value":2}`), 500, "INTERNAL", "Failed to insert namespace metadata.")
		if got := metaValue(t, reader.ok(t, "POST", nsMeta("flags", "get"), ``)); got != `{"dark":true,"n":[1,2]}` {
			t.Errorf("a reader of acme read %s", got)
		}
		if got := metaValue(t, other.ok(t, "POST", nsMeta("flags", "get"), `{}`)); got != "" {
			t.Errorf("beta's admin read acme's value: %s", got)
		}
		other.ok(t, "POST", nsMeta("flags", "insert"), `{"value":"beta's"}`)
		if got := metaValue(t, admin.ok(t, "POST", nsMeta("flags", "get"), ``)); got != `{"dark":true,"n":[1,2]}` {
			t.Errorf("beta's insert changed acme's value: %s", got)
		}
		admin.ok(t, "POST", nsMeta("flags", "update"), `{"value":[3]}`)
		admin.ok(t, "POST", nsMeta("fresh", "update"), `{"value":"made by update"}`) // the original's update creates
		for key, want := range map[string]string{"flags": `[3]`, "fresh": `"made by update"`, "none": ``} {
			if got := metaValue(t, reader.ok(t, "POST", nsMeta(key, "get"), ``)); got != want {
				t.Errorf("namespace value %s: %s, want %s", key, got, want)
			}
		}

		// An application's own.
		r = reader.ok(t, "POST", userMeta("prefs", "insert"), `{"value":{"lang":"fr"}}`)
		if m := r.object(t); str(t, m, "userId") != readerID || fmt.Sprint(m["namespaceId"]) != "5" {
			t.Errorf("user insert answered %s, want userId %s", r, readerID)
		}
		wantError(t, reader.do(t, "POST", userMeta("prefs", "insert"), `{"value":1}`), 500, "INTERNAL", "Failed to insert user metadata.")
		if got := metaValue(t, admin.ok(t, "POST", userMeta("prefs", "get"), ``)); got != "" {
			t.Errorf("another application read the reader's value: %s", got)
		}
		if got := metaValue(t, reader.ok(t, "POST", "/v1/users/metadata/prefs/get", ``)); got != `{"lang":"fr"}` {
			t.Errorf("2022's path read %s", got)
		}
		reader.ok(t, "POST", "/v1/users/metadata/prefs/update", `{"value":{"lang":"de"}}`)
		if got := metaValue(t, reader.ok(t, "POST", userMeta("prefs", "get"), ``)); got != `{"lang":"de"}` {
			t.Errorf("after 2022's update: %s", got)
		}

		// Bounds and malformed values, refused before anything is written.
		long := strings.Repeat("k", 257)
		wantError(t, admin.do(t, "POST", nsMeta(long, "insert"), `{"value":1}`), 400, "INVALID_ARGUMENT", "metadataKey is 257 bytes long; at most 256 are allowed")
		big := `{"value":"` + strings.Repeat("v", 64<<10) + `"}`
		wantError(t, admin.do(t, "POST", nsMeta("big", "insert"), big), 400, "INVALID_ARGUMENT", "the value is 65538 bytes long; metadata values are at most 65536 bytes")
		wantError(t, admin.do(t, "POST", nsMeta("empty", "insert"), `{}`), 400, "INVALID_ARGUMENT", "invalid nil payload: the request has no value")
		wantError(t, admin.do(t, "POST", nsMeta("null", "update"), `{"value":null}`), 400, "INVALID_ARGUMENT", "invalid nil payload: the request has no value")
		for _, key := range []string{"big", "empty", "null"} {
			if got := metaValue(t, admin.ok(t, "POST", nsMeta(key, "get"), ``)); got != "" {
				t.Errorf("a refused write left %s = %s", key, got)
			}
		}
		// A reader keeps its own values but not the namespace's.
		wantError(t, reader.do(t, "POST", nsMeta("x", "insert"), `{"value":1}`), 403, "PERMISSION_DENIED", anyMessage)

		// Deleting beta clears its values (its admin first, which holds it).
		betaAdmin := appIDOf(t, other, s)
		s.owner.ok(t, "DELETE", "/v1/management/applications/delete", `{"id":"`+betaAdmin+`"}`)
		s.owner.ok(t, "DELETE", "/v1/management/namespaces/beta", ``)
		if n := countKeys(t, s.store, keyspace.Tenant(6)); n != 0 {
			t.Errorf("deleted namespace beta left %d metadata keys", n)
		}
		if n := countKeys(t, s.store, keyspace.Tenant(5)); n == 0 {
			t.Error("acme's metadata is gone too")
		}
	})
}

// appIDOf is the id of the application a client acts for, from the
// namespace's list.
func appIDOf(t testing.TB, c *client, s *authServer) string {
	t.Helper()
	var list struct {
		Applications []struct{ ID, Name string } `json:"applications"`
	}
	if err := json.Unmarshal(c.ok(t, "POST", "/v1/management/applications/list", ``).body, &list); err != nil || len(list.Applications) != 1 {
		t.Fatalf("applications: %v %+v", err, list)
	}
	return list.Applications[0].ID
}

func countKeys(t testing.TB, store kv.Store, r kv.Range) int {
	t.Helper()
	tx, err := store.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	it := tx.Scan(context.Background(), r, kv.ScanOptions{})
	defer it.Close()
	n := 0
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantRetry checks that a 429 advises a delay, in the body and in
// Retry-After.
func wantRetry(t testing.TB, r *response) time.Duration {
	t.Helper()
	e, _ := errorOf(t, r)
	if e.Retry == nil || e.Retry.Delay <= 0 || r.header.Get("Retry-After") == "" {
		t.Errorf("a 429 without its retry delay: %s, Retry-After %q", r.body, r.header.Get("Retry-After"))
		return 0
	}
	return time.Duration(e.Retry.Delay) * time.Millisecond
}

const quotaItemsSchema = `{"title":"items","primary_key":["id"],"properties":{"id":{"type":"string"},"v":{"type":"integer"},"pad":{"type":"string"}}}`

// A namespace's quotas, set by the owner: the limits call reports them;
// a write past the storage quota is 429 with a retry delay and writes
// nothing; past the rate, every call of the namespace's applications is
// 429 until the delay has passed, but the owner's; another namespace is
// not held; removing the quota frees it.
func TestNamespaceQuotas(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		admin.createDB(t, "shop")
		admin.createColl(t, "shop", "items", quotaItemsSchema)
		s.owner.createDB(t, "shop")
		s.owner.createColl(t, "shop", "items", quotaItemsSchema)

		wantError(t, admin.do(t, "POST", "/v1/management/namespaces/acme/quota", `{"storage_bytes":1}`), 403, "PERMISSION_DENIED", anyMessage)
		wantError(t, s.owner.do(t, "POST", "/v1/management/namespaces/nope/quota", `{"storage_bytes":1}`), 404, "NOT_FOUND", "namespace 'nope' doesn't exist")
		wantError(t, s.owner.do(t, "POST", "/v1/management/namespaces/acme/quota", `{"storage_bytes":-1}`), 400, "INVALID_ARGUMENT", "a quota is 0 (no bound) or more")

		limits := admin.okObject(t, "POST", "/v1/observability/quota/limits", `{}`)
		if fmt.Sprint(limits["StorageSize"]) != "0" || fmt.Sprint(limits["ReadUnits"]) != "0" || fmt.Sprint(limits["max_request_bytes"]) == "0" {
			t.Errorf("limits without a quota: %v", limits)
		}

		// Storage: room for one document of the two.
		doc := func(id string) string { return `{"id":"` + id + `","v":1,"pad":"` + strings.Repeat("p", 400) + `"}` }
		admin.insert(t, "shop", "items", doc("first"))
		used := admin.okObject(t, "POST", "/v1/observability/quota/usage", `{}`)
		size, _ := used["StorageSize"].(json.Number).Int64()
		if size < 400 {
			t.Fatalf("usage after one document of 400 bytes: %v", used)
		}
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/quota", fmt.Sprintf(`{"storage_bytes":%d}`, size+100))
		limits = admin.okObject(t, "POST", "/v1/observability/quota/limits", `{}`)
		if fmt.Sprint(limits["StorageSize"]) != fmt.Sprint(size+100) {
			t.Errorf("limits with a quota: %v", limits)
		}
		r := admin.do(t, "POST", docPath("shop", "items", "insert"), `{"documents":[`+doc("second")+`]}`)
		msg := wantError(t, r, 429, "RESOURCE_EXHAUSTED", anyMessage)
		if !strings.HasPrefix(msg, "data size limit exceeded") {
			t.Errorf("storage refusal says %q", msg)
		}
		wantRetry(t, r)
		// Nothing of it was written, by any way in.
		wantError(t, admin.do(t, "POST", "/v1/projects/shop/database/collections/items/documents/import", `{"documents":[`+doc("imported")+`]}`), 429, "RESOURCE_EXHAUSTED", anyMessage)
		wantError(t, admin.do(t, "PUT", docPath("shop", "items", "update"), `{"filter":{"id":"first"},"fields":{"$set":{"pad":"`+strings.Repeat("q", 2000)+`"}}}`), 429, "RESOURCE_EXHAUSTED", anyMessage)
		items := admin.read(t, "shop", "items", `{"filter":{}}`)
		if len(items) != 1 || !strings.Contains(string(items[0].data), `"first"`) || strings.Contains(string(items[0].data), "qqq") {
			t.Errorf("after the refused writes the collection holds %d documents: %v", len(items), items)
		}
		used = admin.okObject(t, "POST", "/v1/observability/quota/usage", `{}`)
		if fmt.Sprint(used["StorageSize"]) != fmt.Sprint(size) || fmt.Sprint(used["StorageSizeThrottled"]) != "3" {
			t.Errorf("usage after refused writes: %v, want StorageSize %d, 3 throttled", used, size)
		}
		// While the namespace stores more than its quota, a durable
		// cache's writes are refused too; a volatile cache's, kept in
		// memory, are not. (Cache entries are not counted in the storage.)
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/quota", `{"storage_bytes":1}`)
		admin.ok(t, "POST", cachePath("shop", "durable", "create"), `{}`)
		admin.ok(t, "POST", cachePath("shop", "volatile", "create"), `{"options":{"volatile":true}}`)
		wantError(t, admin.do(t, "POST", cachePath("shop", "durable", "k/set"), `{"value":1}`), 429, "RESOURCE_EXHAUSTED", anyMessage)
		wantError(t, admin.do(t, "POST", cachePath("shop", "durable", "k/getset"), `{"value":1}`), 429, "RESOURCE_EXHAUSTED", anyMessage)
		wantError(t, admin.do(t, "GET", cachePath("shop", "durable", "k/get"), ""), 404, "NOT_FOUND", anyMessage)
		admin.ok(t, "POST", cachePath("shop", "volatile", "k/set"), `{"value":1}`)
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/quota", fmt.Sprintf(`{"storage_bytes":%d}`, size+100))
		admin.ok(t, "POST", cachePath("shop", "durable", "k/set"), `{"value":1}`)
		// Deleting is allowed, and frees room; the default namespace is
		// not bound by acme's quota.
		admin.ok(t, "DELETE", docPath("shop", "items", "delete"), `{"filter":{"id":"first"}}`)
		admin.insert(t, "shop", "items", doc("second"))
		s.owner.insert(t, "shop", "items", doc("a"), doc("b"), doc("c"))

		// Rate: two calls a second.
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/quota", `{"requests_per_second":2}`)
		refusedAt := -1
		var refusal *response
		for i := range 4 {
			r := admin.do(t, "POST", "/v1/databases/list", `{}`)
			if r.status == http.StatusTooManyRequests {
				refusedAt, refusal = i, r
				break
			}
			if r.status != http.StatusOK {
				t.Fatalf("call %d: %s", i, r)
			}
		}
		if refusal == nil {
			t.Fatal("four calls at once within a rate of two a second")
		}
		msg = wantError(t, refusal, 429, "RESOURCE_EXHAUSTED", anyMessage)
		if !strings.HasPrefix(msg, "request rate exceeded") {
			t.Errorf("rate refusal says %q", msg)
		}
		if d := wantRetry(t, refusal); d > time.Second {
			t.Errorf("retry in %s, want at most a second", d)
		}
		// A write refused by the rate writes nothing.
		wantError(t, admin.do(t, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":"throttled","v":1}]}`), 429, "RESOURCE_EXHAUSTED", anyMessage)
		// The owner is not held: it can lift the rate.
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/quota", `{}`)
		for range 5 {
			admin.ok(t, "POST", "/v1/databases/list", `{}`)
		}
		if items := admin.read(t, "shop", "items", `{"filter":{"id":"throttled"}}`); len(items) != 0 {
			t.Errorf("a write refused by the rate was applied (refused at call %d)", refusedAt)
		}
		if used := admin.okObject(t, "POST", "/v1/observability/quota/usage", `{}`); fmt.Sprint(used["ReadUnitsThrottled"]) == "0" {
			t.Errorf("usage counts no refused call: %v", used)
		}
	})
}
