package apitest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// otherProject is the original's answer to an app key of one project
// naming another.
func otherProject(project string) string {
	return "You are not allowed to perform operation on this project: " + project
}

// An app key of a project, made by an admin at the final API's path,
// comes with its secret in the final API's shape; its tokens reach its
// project, by the 2023 paths and by the 2022 ones, and every call on
// another project is refused as the original refused it (403
// PERMISSION_DENIED). A global key reaches the namespace. Lists show each
// scope's keys only; a key's role is at most its creator's.
func TestAppKeys(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		for _, p := range []string{"p1", "p2"} {
			admin.ok(t, "POST", projectPath(p, "create"), "")
			admin.ok(t, "POST", p23Coll(p, "items", "createOrUpdate"), `{"schema":`+authItemsSchema+`}`)
		}

		before := time.Now().UnixMilli()
		res := admin.ok(t, "POST", "/v1/projects/p1/apps/keys/create", `{"name":"k1","description":"the shop's","role":"editor"}`)
		if res.header.Get("Cache-Control") != "no-store" {
			t.Errorf("a created key's answer may be cached: %v", res.header)
		}
		key := obj(t, res.object(t), "created_app_key")
		id, secret := str(t, key, "id"), str(t, key, "secret")
		if str(t, key, "name") != "k1" || str(t, key, "description") != "the shop's" || str(t, key, "project") != "p1" || str(t, key, "role") != "editor" {
			t.Errorf("created_app_key %v", key)
		}
		if at, _ := key["created_at"].(json.Number).Int64(); at < before || at > time.Now().UnixMilli() {
			t.Errorf("created_at %v, want now in Unix milliseconds", key["created_at"])
		}
		gid, _ := s.appKey(t, admin, "/v1/apps/keys/create", `{"name":"g1"}`)

		// Each list holds its scope's keys only; an empty one is {}.
		listed := func(path string) []string {
			var ids []string
			for _, k := range admin.okObject(t, "GET", path, "")["app_keys"].([]any) {
				m := k.(map[string]any)
				if m["secret"] != nil {
					t.Errorf("a listed key with its secret: %v", m)
				}
				ids = append(ids, m["id"].(string))
			}
			return ids
		}
		if got := listed("/v1/projects/p1/apps/keys"); fmt.Sprint(got) != fmt.Sprint([]string{id}) {
			t.Errorf("p1's keys %v, want [%s]", got, id)
		}
		// The admin, an application of the namespace, is a global key too:
		// one concept.
		if got := fmt.Sprint(listed("/v1/apps/keys")); !strings.Contains(got, gid) || strings.Contains(got, id) || len(listed("/v1/apps/keys")) != 2 {
			t.Errorf("global keys %v, want %s and the admin", got, gid)
		}
		if got := admin.ok(t, "GET", "/v1/projects/p2/apps/keys", "").body; strings.TrimSpace(string(got)) != "{}" {
			t.Errorf("p2's keys %s, want {}", got)
		}
		// Another scope's key is not there for the calls of this one.
		wantError(t, admin.do(t, "POST", "/v1/projects/p2/apps/keys/rotate", `{"id":"`+id+`"}`), 404, "NOT_FOUND", "application '"+id+"' doesn't exist")
		wantError(t, admin.do(t, "DELETE", "/v1/apps/keys/delete", `{"id":"`+id+`"}`), 404, "NOT_FOUND", "application '"+id+"' doesn't exist")

		// No key above its creator's role, and no project key the owner's.
		wantError(t, admin.do(t, "POST", "/v1/projects/p1/apps/keys/create", `{"name":"boss","role":"owner"}`), 403, "PERMISSION_DENIED",
			"an application with role 'admin' cannot grant role 'owner'")
		wantError(t, s.owner.do(t, "POST", "/v1/projects/p1/apps/keys/create", `{"name":"boss","role":"owner"}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, admin.do(t, "POST", "/v1/apps/keys/create", `{"name":"boss","role":"owner"}`), 403, "PERMISSION_DENIED", anyMessage)

		// The key's token, from the token endpoint as any application's.
		access, _ := s.token(t, id, secret)
		k := s.anon.as(access)
		me := k.okObject(t, "GET", "/v1/observability/whoami", "")
		if me["sub"] != id || me["namespace"] != "acme" || me["role"] != "editor" || me["project"] != "p1" {
			t.Errorf("whoami %v", me)
		}
		k.ok(t, "POST", p23Doc("p1", "items", "insert"), `{"documents":[{"id":"a","v":1}]}`)
		k.ok(t, "POST", docPath("p1", "items", "read"), `{"filter":{}}`) // the 2022 path to the same database
		k.ok(t, "POST", p23Coll("p1", "c2", "createOrUpdate"), `{"schema":`+strings.Replace(authItemsSchema, "items", "c2", 1)+`}`)
		if got := k.okObject(t, "GET", "/v1/projects", "")["projects"]; !strings.Contains(fmt.Sprint(got), "p1") || strings.Contains(fmt.Sprint(got), "p2") {
			t.Errorf("the key's projects %v, want p1 only", got)
		}
		for _, c := range []struct{ method, path, body string }{
			{"POST", p23Doc("p2", "items", "insert"), `{"documents":[{"id":"x","v":1}]}`},
			{"POST", p23Doc("p2", "items", "read"), `{"filter":{}}`},
			{"POST", docPath("p2", "items", "read"), `{"filter":{}}`},
			{"POST", dbPath("p2", "describe"), `{}`},
			{"POST", p23Path("p2", "transactions/begin"), ""},
			{"POST", p23Coll("p2", "items", "describe"), `{}`},
			{"DELETE", p23Coll("p2", "items", "drop"), ""},
			{"DELETE", projectPath("p2", "delete"), ""},
			{"POST", projectPath("p3", "create"), ""},
			{"GET", p23Path("p2", "branches"), ""},
			{"GET", "/v1/projects/p2/search/indexes", ""},
			{"POST", collPath("p2", "items", "events"), `{}`},
		} {
			wantError(t, k.do(t, c.method, c.path, c.body), 403, "PERMISSION_DENIED", otherProject(strings.Split(strings.TrimPrefix(strings.TrimPrefix(c.path, "/v1/projects/"), "/v1/databases/"), "/")[0]))
		}
		// Nothing of p2 changed.
		if docs := admin.ok(t, "POST", p23Doc("p2", "items", "read"), `{"filter":{}}`).body; len(docs) != 0 {
			t.Errorf("p2 read: %s", docs)
		}

		// An admin key of p1 manages p1's keys, and nothing wider.
		aid, asecret := s.appKey(t, admin, "/v1/projects/p1/apps/keys/create", `{"name":"p1 admin","role":"admin"}`)
		a1access, _ := s.token(t, aid, asecret)
		a1 := s.anon.as(a1access)
		if got := a1.okObject(t, "GET", "/v1/projects/p1/apps/keys", "")["app_keys"].([]any); len(got) != 2 {
			t.Errorf("p1's keys as p1's admin: %v", got)
		}
		wantError(t, a1.do(t, "GET", "/v1/projects/p2/apps/keys", ""), 403, "PERMISSION_DENIED", otherProject("p2"))
		wantError(t, a1.do(t, "GET", "/v1/apps/keys", ""), 403, "PERMISSION_DENIED", "an app key of project 'p1' cannot manage global app keys")
		wantError(t, a1.do(t, "POST", "/v1/management/applications/create", `{"name":"wide"}`), 403, "PERMISSION_DENIED", anyMessage)
		wantError(t, a1.do(t, "POST", "/v1/auth/namespace/invitations/create", `{"invitations":[{"email":"x@y.z","role":"reader"}]}`), 403, "PERMISSION_DENIED", anyMessage)
		// The namespace's metadata: read, not changed, by a project's key.
		wantError(t, a1.do(t, "POST", "/v1/management/namespace/metadata/settings/insert", `{"value":1}`), 403, "PERMISSION_DENIED", "an app key of project 'p1' cannot change the namespace's metadata")
		wantError(t, a1.do(t, "POST", "/v1/management/namespace/metadata/settings/update", `{"value":1}`), 403, "PERMISSION_DENIED", anyMessage)
		a1.ok(t, "POST", "/v1/management/namespace/metadata/settings/get", `{}`)
		if apps := a1.okObject(t, "POST", "/v1/management/applications/list", "")["applications"].([]any); len(apps) != 2 {
			t.Errorf("applications as p1's admin: %v, want p1's two keys", apps)
		}

		// Update keeps what it does not name; rotation revokes at once on
		// this node, and the old secret gets no token.
		up := obj(t, admin.okObject(t, "POST", "/v1/projects/p1/apps/keys/update", `{"id":"`+id+`","description":"changed"}`), "updated_app_key")
		if up["name"] != "k1" || up["description"] != "changed" || up["updated_at"] == nil {
			t.Errorf("updated_app_key %v", up)
		}
		rotated := obj(t, admin.okObject(t, "POST", "/v1/projects/p1/apps/keys/rotate", `{"id":"`+id+`"}`), "app_key")
		if rotated["id"] != id || rotated["secret"] == secret || rotated["secret"] == "" {
			t.Errorf("rotated %v", rotated)
		}
		wantError(t, k.do(t, "POST", p23Doc("p1", "items", "read"), `{"filter":{}}`), 401, "UNAUTHENTICATED", "token revoked: its application was deleted or its secret rotated")
		old := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}})
		wantError(t, old, 401, "UNAUTHENTICATED", "invalid client credentials")
		newAccess, _ := s.token(t, id, rotated["secret"].(string))
		s.anon.as(newAccess).ok(t, "POST", p23Doc("p1", "items", "read"), `{"filter":{}}`)

		if del := admin.okObject(t, "DELETE", "/v1/projects/p1/apps/keys/delete", `{"id":"`+id+`"}`); del["deleted"] != true {
			t.Errorf("delete: %v", del)
		}
		wantError(t, s.anon.as(newAccess).do(t, "POST", p23Doc("p1", "items", "read"), `{"filter":{}}`), 401, "UNAUTHENTICATED", anyMessage)
		admin.ok(t, "PUT", "/v1/apps/keys/update", `{"id":"`+gid+`","name":"g1 renamed"}`)
		admin.ok(t, "DELETE", "/v1/apps/keys/delete", `{"id":"`+gid+`"}`)
	})
}

// A rotated key's old tokens stop working on every node within the
// application cache's TTL, and its old secret at once: here two nodes on
// one store, the rotation made on the second, the token last used on the
// first.
func TestRotatedKeyStopsOnEveryNode(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		cfg := authConfig(t)
		const ttl = time.Second
		cfg.Tokens.AppCacheTTL = ttl
		a := startAuthServer(t, store, cfg)
		bNode := startAuthServer(t, store, cfg)
		a.owner.ok(t, "POST", projectPath("p1", "create"), "")
		id, secret := a.appKey(t, a.owner, "/v1/projects/p1/apps/keys/create", `{"name":"k"}`)
		access, _ := a.token(t, id, secret)
		onA := a.anon.as(access)
		onA.ok(t, "GET", "/v1/projects/p1/database/collections", "") // node A caches the key

		bNode.owner.ok(t, "POST", "/v1/projects/p1/apps/keys/rotate", `{"id":"`+id+`"}`)
		rotated := time.Now()
		wantError(t, bNode.anon.as(access).do(t, "GET", "/v1/projects/p1/database/collections", ""), 401, "UNAUTHENTICATED", anyMessage)
		for _, s := range []*authServer{a, bNode} {
			wantError(t, s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}),
				401, "UNAUTHENTICATED", "invalid client credentials")
		}
		for {
			r := onA.do(t, "GET", "/v1/projects/p1/database/collections", "")
			if r.status == 401 {
				break
			}
			// A little slack over the bound for a loaded machine's
			// scheduling; the bound itself is the cache's TTL.
			if time.Since(rotated) > ttl+500*time.Millisecond {
				t.Fatalf("node A still took the rotated key's token %v after the rotation (bound %v): %s", time.Since(rotated), ttl, r)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// Invitations over HTTP: the admin gets each code (no mail is sent); the
// invitee verifies with no credentials and gets an application of the
// namespace with the role, once. A second use, also two at once, is
// refused (401, as the original).
func TestInvitations(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		made := admin.okObject(t, "POST", "/v1/auth/namespace/invitations/create",
			`{"invitations":[{"email":"ann@example.com","role":"editor","invitation_sent_by_name":"Al"},{"email":"bob@example.com","role":"reader"}]}`)
		if made["status"] != "created" || fmt.Sprint(made["count"]) != "2" {
			t.Fatalf("create invitations: %v", made)
		}
		codes := map[string]string{}
		for _, c := range made["created"].([]any) {
			m := c.(map[string]any)
			codes[m["email"].(string)] = m["code"].(string)
		}
		wantError(t, admin.do(t, "POST", "/v1/auth/namespace/invitations/create", `{"invitations":[{"email":"c@example.com","role":"owner"}]}`),
			403, "PERMISSION_DENIED", "an application with role 'admin' cannot grant role 'owner'")

		list := admin.okObject(t, "GET", "/v1/auth/namespace/invitations/list?status=PENDING", "")["invitations"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["tigris_namespace"] != "acme" || list[0].(map[string]any)["created_by_name"] != "Al" {
			t.Errorf("pending invitations: %v", list)
		}
		if strings.Contains(fmt.Sprint(list), codes["ann@example.com"]) {
			t.Errorf("a listed invitation with its code: %v", list)
		}

		verified := s.anon.okObject(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"ann@example.com","code":"`+codes["ann@example.com"]+`"}`)
		if verified["tigris_namespace"] != "acme" || verified["role"] != "editor" {
			t.Fatalf("verify: %v", verified)
		}
		access, _ := s.token(t, verified["client_id"].(string), verified["client_secret"].(string))
		ann := s.anon.as(access)
		if me := ann.okObject(t, "GET", "/v1/observability/whoami", ""); me["namespace"] != "acme" || me["role"] != "editor" {
			t.Errorf("whoami of the invitee: %v", me)
		}
		ann.ok(t, "POST", projectPath("annsproject", "create"), "")
		wantError(t, s.anon.do(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"ann@example.com","code":"`+codes["ann@example.com"]+`"}`),
			401, "UNAUTHENTICATED", anyMessage)
		wantError(t, s.anon.do(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"bob@example.com","code":"invalid-code"}`),
			401, "UNAUTHENTICATED", anyMessage)

		// Bob's code, verified by several at once: one application.
		var wg sync.WaitGroup
		statuses := make([]int, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = s.anon.do(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"bob@example.com","code":"`+codes["bob@example.com"]+`"}`).status
			}()
		}
		wg.Wait()
		ok := 0
		for _, st := range statuses {
			if st == 200 {
				ok++
			} else if st != 401 {
				t.Errorf("a racing verification answered %d, want 401", st)
			}
		}
		if ok != 1 {
			t.Errorf("%d of the racing verifications succeeded: %v", ok, statuses)
		}

		users := admin.okObject(t, "GET", "/v1/auth/namespace/users", "")["users"].([]any)
		var emails []string
		for _, u := range users {
			if e := u.(map[string]any)["email"].(string); e != "" {
				emails = append(emails, e)
			}
		}
		if fmt.Sprint(emails) != "[ann@example.com bob@example.com]" && fmt.Sprint(emails) != "[bob@example.com ann@example.com]" {
			t.Errorf("users' emails %v (%v)", emails, users)
		}
		if got := admin.okObject(t, "GET", "/v1/auth/namespace/invitations/list?status=accepted", "")["invitations"].([]any); len(got) != 2 {
			t.Errorf("accepted invitations: %v", got)
		}
		wantError(t, admin.do(t, "GET", "/v1/auth/namespace/invitations/list?status=lost", ""), 400, "INVALID_ARGUMENT", anyMessage)
		if del := admin.okObject(t, "DELETE", "/v1/auth/namespace/invitations/delete", `{"email":"ann@example.com","status":"ACCEPTED"}`); del["status"] != "deleted" {
			t.Errorf("delete: %v", del)
		}
		if got := admin.okObject(t, "GET", "/v1/auth/namespace/invitations/list", "")["invitations"].([]any); len(got) != 1 {
			t.Errorf("invitations after a delete: %v", got)
		}
	})
}

// Without authentication there is nobody to invite: the calls that make
// and verify invitations are refused, and whoami names the anonymous
// owner.
func TestInvitationsNeedAuth(t *testing.T) {
	c := startServer(t, backendtest.OpenPebble(t), node.DefaultConfig())
	wantError(t, c.do(t, "POST", "/v1/auth/namespace/invitations/create", `{"invitations":[{"email":"a@b.c","role":"reader"}]}`),
		412, "FAILED_PRECONDITION", "invitations need a server with authentication (folio serve --auth)")
	wantError(t, c.do(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"a@b.c","code":"x"}`),
		412, "FAILED_PRECONDITION", anyMessage)
	if me := c.okObject(t, "GET", "/v1/observability/whoami", ""); me["role"] != "owner" || me["namespace"] != "default_namespace" {
		t.Errorf("whoami without auth: %v", me)
	}
}
