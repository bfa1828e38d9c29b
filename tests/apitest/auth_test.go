package apitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/ops"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/roletest"
)

// Authentication and authorization through a real listening server with
// --auth on: the token endpoint, each role against each group of calls,
// each defect of a token, namespaces kept apart, secrets shown once and
// never logged, key rotation, refresh, the limit on failed requests and
// transactions bound to the application that began them.

// authServer is a node with authentication on, and its owner's client.
type authServer struct {
	anon  *client // no token
	owner *client
	store kv.Store
	node  *node.Node
	logs  *lockedBuffer
	creds auth.OwnerCredentials
}

// lockedBuffer collects a node's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authConfig is a node's configuration with authentication on: secrets
// hashed at bcrypt's lowest cost, so that the tests stay quick.
func authConfig(t *testing.T) node.Config {
	return node.DefaultConfigWith(func(nc *node.Config) {
		nc.Auth = true
		nc.OwnerFile = filepath.Join(t.TempDir(), "owner.json")
		nc.Tokens.HashCost = bcrypt.MinCost
	})
}

func startAuthServer(t *testing.T, store kv.Store, cfg node.Config) *authServer {
	t.Helper()
	logs := &lockedBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := startNode(t, store, cfg)
	t.Cleanup(func() { n.Close() })
	s := &authServer{anon: newClient("http://" + n.Addr().String()), store: store, node: n, logs: logs}
	b, err := os.ReadFile(cfg.OwnerFile)
	if err != nil {
		t.Fatalf("the owner file: %v", err)
	}
	if err := json.Unmarshal(b, &s.creds); err != nil {
		t.Fatal(err)
	}
	access, _ := s.token(t, s.creds.ClientID, s.creds.ClientSecret)
	s.owner = s.anon.as(access)
	return s
}

func eachAuthBackend(t *testing.T, fn func(t *testing.T, s *authServer)) {
	t.Helper()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		fn(t, startAuthServer(t, b.Open(t), authConfig(t)))
	})
}

// tokenRequest posts a form to the token endpoint.
func (s *authServer) tokenRequest(t testing.TB, form url.Values) *response {
	t.Helper()
	return s.anon.sendTyped(t, "POST", "/v1/auth/token", "application/x-www-form-urlencoded", form.Encode())
}

// token gets an access and a refresh token for an application.
func (s *authServer) token(t testing.TB, id, secret string) (access, refresh string) {
	t.Helper()
	r := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"ignored"}})
	if r.status != http.StatusOK {
		t.Fatalf("token for %s: %s", id, r)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("a token response may be cached: Cache-Control %q", r.header.Get("Cache-Control"))
	}
	m := r.object(t)
	if n, err := m["expires_in"].(json.Number).Int64(); err != nil || n <= 0 || m["token_type"] != "Bearer" {
		t.Errorf("token response %s", r.body)
	}
	return str(t, m, "access_token"), str(t, m, "refresh_token")
}

// app creates an application with the body given and returns its id and
// secret.
func (s *authServer) app(t testing.TB, by *client, body string) (id, secret string) {
	t.Helper()
	created := obj(t, by.okObject(t, "POST", "/v1/management/applications/create", body), "created_application")
	return str(t, created, "id"), str(t, created, "secret")
}

// appKey creates an app key at path (a project's or the global create)
// and returns its id and secret.
func (s *authServer) appKey(t testing.TB, by *client, path, body string) (id, secret string) {
	t.Helper()
	created := obj(t, by.okObject(t, "POST", path, body), "created_app_key")
	return str(t, created, "id"), str(t, created, "secret")
}

// appClient creates an application and returns a client with its token.
func (s *authServer) appClient(t testing.TB, by *client, body string) *client {
	t.Helper()
	id, secret := s.app(t, by, body)
	access, _ := s.token(t, id, secret)
	return s.anon.as(access)
}

const authItemsSchema = `{"title":"items","primary_key":["id"],"properties":{"id":{"type":"string"},"v":{"type":"integer"}}}`

// Each role against every call that needs one (tests/roletest.Need,
// which names every call of ops): a call within the role succeeds, one
// beyond it is 403 PERMISSION_DENIED, and every call but health, info and
// the token endpoint is 401 UNAUTHENTICATED without a token. The node's
// request metrics then show that the test reached every call with a role,
// so a call cannot be left out. An admin of another namespace does not see
// the applications it would change.
func TestRolesAgainstCalls(t *testing.T) {
	roletest.CheckTable(t)
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		s.owner.ok(t, "POST", "/v1/management/namespaces/beta/create", `{"id":6}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		callers := map[auth.Role]*client{
			auth.RoleReader: s.appClient(t, admin, `{"name":"r","role":"reader"}`),
			auth.RoleEditor: s.appClient(t, admin, `{"name":"e","role":"editor"}`),
			auth.RoleAdmin:  admin,
			auth.RoleOwner:  s.owner,
		}
		// The same data in acme, and in the owner's namespace, the default.
		for _, c := range []*client{admin, s.owner} {
			c.createDB(t, "shop")
			c.createColl(t, "shop", "items", authItemsSchema)
			c.createColl(t, "shop", "msgs", messagesSchema)
			c.insert(t, "shop", "items", `{"id":"x","v":1}`)
			c.ok(t, "PUT", indexPath("shop", "idx"), strings.Replace(productsIndex, "products", "idx", 1))
			c.ok(t, "POST", cachePath("shop", "kc", "create"), `{}`)
			c.ok(t, "POST", cachePath("shop", "kc", "k/set"), `{"value":1}`)
		}
		// An application of acme for each caller to update, rotate and
		// delete.
		target := map[auth.Role]string{}
		for _, r := range roletest.Roles {
			target[r], _ = s.app(t, admin, `{"name":"target of `+string(r)+`","role":"reader"}`)
		}
		// A key of shop and a global key of acme for each caller to
		// update, rotate and delete.
		projectKey, globalKey := map[auth.Role]string{}, map[auth.Role]string{}
		for _, r := range roletest.Roles {
			projectKey[r], _ = s.appKey(t, admin, "/v1/projects/shop/apps/keys/create", `{"name":"key of `+string(r)+`","role":"reader"}`)
			globalKey[r], _ = s.appKey(t, admin, "/v1/apps/keys/create", `{"name":"global key of `+string(r)+`","role":"reader"}`)
		}

		// A call: its operation (ops.Ops's method), its request, and how
		// it is made when the role allows it: as a stream, in a
		// transaction of the caller's, or refused beyond the role check
		// on some backend (a backup on PostgreSQL).
		type call struct {
			op, method, path, body  string
			stream, inTx, mayRefuse bool
		}
		calls := func(who auth.Role) []call {
			w, app := string(who), target[who]
			pk, gk := projectKey[who], globalKey[who]
			return []call{
				{op: "ListDatabases", method: "POST", path: "/v1/databases/list"},
				{op: "DescribeDatabase", method: "POST", path: dbPath("shop", "describe"), body: "{}"},
				{op: "ListCollections", method: "POST", path: dbPath("shop", "collections/list"), body: "{}"},
				{op: "DescribeCollection", method: "POST", path: collPath("shop", "items", "describe"), body: "{}"},
				{op: "Read", method: "POST", path: docPath("shop", "items", "read"), body: `{"filter":{}}`},
				{op: "Read", method: "POST", path: msgPath("shop", "msgs", "read"), body: `{"filter":{}}`},
				{op: "Explain", method: "POST", path: docPath("shop", "items", "explain"), body: `{"filter":{"v":1}}`},
				{op: "Count", method: "POST", path: "/v1/projects/shop/database/collections/items/documents/count", body: `{"filter":{"v":1}}`},
				{op: "Aggregate", method: "POST", path: docPath("shop", "items", "aggregate"), body: `{"group_by":["v"],"fields":{"n":{"$count":{}}}}`},
				{op: "Search", method: "POST", path: docPath("shop", "items", "search"), body: `{"q":"x"}`},
				{op: "Search", method: "POST", path: msgPath("shop", "msgs", "search"), body: `{"q":"x"}`},
				{op: "Events", method: "POST", path: eventsPath("shop", "items"), body: "{}", stream: true},
				{op: "Subscribe", method: "POST", path: msgPath("shop", "msgs", "subscribe"), body: "{}", stream: true},
				{op: "BeginTransaction", method: "POST", path: dbPath("shop", "transactions/begin")},
				{op: "CommitTransaction", method: "POST", path: dbPath("shop", "transactions/commit"), inTx: true},
				{op: "RollbackTransaction", method: "POST", path: dbPath("shop", "transactions/rollback"), inTx: true},

				{op: "CreateDatabase", method: "POST", path: dbPath("db_"+w, "create")},
				{op: "CreateOrUpdateCollection", method: "POST", path: collPath("shop", "c_"+w, "createOrUpdate"), body: `{"schema":` + strings.Replace(authItemsSchema, "items", "c_"+w, 1) + `}`},
				{op: "Insert", method: "POST", path: docPath("shop", "items", "insert"), body: `{"documents":[{"id":"` + w + `","v":2}]}`},
				{op: "Replace", method: "PUT", path: docPath("shop", "items", "replace"), body: `{"documents":[{"id":"` + w + `","v":3}]}`},
				{op: "Update", method: "PUT", path: docPath("shop", "items", "update"), body: `{"filter":{"id":"` + w + `"},"fields":{"$set":{"v":4}}}`},
				{op: "Delete", method: "DELETE", path: docPath("shop", "items", "delete"), body: `{"filter":{"id":"` + w + `"}}`},
				{op: "Publish", method: "POST", path: msgPath("shop", "msgs", "publish"), body: `{"messages":[{"text":"` + w + `"}]}`},
				{op: "Import", method: "POST", path: "/v1/projects/shop/database/collections/items/documents/import", body: `{"documents":[{"id":"imported by ` + w + `","v":5}]}`},
				{op: "BuildCollectionIndex", method: "POST", path: "/v1/projects/shop/database/collections/items/documents/index", body: `{}`},
				{op: "BuildSearchIndex", method: "POST", path: "/v1/projects/shop/database/collections/items/documents/search/index", body: `{}`},
				{op: "DropCollection", method: "DELETE", path: collPath("shop", "c_"+w, "drop")},
				{op: "DropDatabase", method: "DELETE", path: dbPath("db_"+w, "drop")},

				{op: "ListProjects", method: "GET", path: "/v1/projects"},
				{op: "ListBranches", method: "GET", path: p23Path("shop", "branches")},
				{op: "CreateProject", method: "POST", path: projectPath("p_"+w, "create")},
				{op: "DeleteProject", method: "DELETE", path: projectPath("p_"+w, "delete")},
				{op: "CreateBranch", method: "POST", path: p23Path("shop", "branches/b_"+w+"/create")},
				{op: "DeleteBranch", method: "DELETE", path: p23Path("shop", "branches/b_"+w+"/delete")},
				{op: "CreateOrUpdateCollections", method: "POST", path: p23Path("shop", "collections/createOrUpdate"), body: `{"schemas":[` + strings.Replace(authItemsSchema, "items", "cs_"+w, 1) + `]}`},

				{op: "ListIndexes", method: "GET", path: "/v1/projects/shop/search/indexes"},
				{op: "GetIndex", method: "GET", path: indexPath("shop", "idx")},
				{op: "IndexGet", method: "GET", path: indexDocs("shop", "idx") + "?ids=x"},
				{op: "IndexSearch", method: "POST", path: indexDocs("shop", "idx") + "/search", body: `{"q":"x"}`},
				{op: "CreateOrUpdateIndex", method: "PUT", path: indexPath("shop", "i_"+w), body: strings.Replace(productsIndex, "products", "i_"+w, 1)},
				{op: "IndexCreate", method: "POST", path: indexDocs("shop", "idx"), body: `{"documents":[{"id":"` + w + `"}]}`},
				{op: "IndexCreateByID", method: "POST", path: indexDocs("shop", "idx") + "/by_" + w, body: `{"document":{}}`},
				{op: "IndexCreateOrReplace", method: "PUT", path: indexDocs("shop", "idx"), body: `{"documents":[{"id":"` + w + `","name":"n"}]}`},
				{op: "IndexUpdate", method: "PATCH", path: indexDocs("shop", "idx"), body: `{"documents":[{"id":"` + w + `","name":"m"}]}`},
				{op: "IndexDelete", method: "DELETE", path: indexDocs("shop", "idx"), body: `{"ids":["` + w + `"]}`},
				{op: "IndexDeleteByQuery", method: "DELETE", path: indexDocs("shop", "idx") + "/deleteByQuery", body: `{"filter":{"id":"by_` + w + `"}}`},
				{op: "DeleteIndex", method: "DELETE", path: indexPath("shop", "i_"+w)},

				{op: "ListCaches", method: "GET", path: "/v1/projects/shop/caches/list"},
				{op: "CacheGet", method: "GET", path: cachePath("shop", "kc", "k/get")},
				{op: "CacheKeys", method: "GET", path: cachePath("shop", "kc", "keys")},
				{op: "CreateCache", method: "POST", path: cachePath("shop", "c_"+w, "create"), body: `{}`},
				{op: "CacheSet", method: "POST", path: cachePath("shop", "kc", w+"/set"), body: `{"value":"v"}`},
				{op: "CacheGetSet", method: "POST", path: cachePath("shop", "kc", w+"/getset"), body: `{"value":"w"}`},
				{op: "CacheDel", method: "DELETE", path: cachePath("shop", "kc", w+"/delete")},
				{op: "DeleteCache", method: "DELETE", path: cachePath("shop", "c_"+w, "delete")},

				{op: "ListApplications", method: "POST", path: "/v1/management/applications/list"},
				{op: "ListApplications", method: "POST", path: "/v1/users/applications/list"},
				{op: "CreateApplication", method: "POST", path: "/v1/users/applications/create", body: `{"name":"made by ` + w + `","role":"reader"}`},
				{op: "UpdateApplication", method: "POST", path: "/v1/users/applications/update", body: `{"id":"` + app + `","name":"updated by ` + w + `","role":"reader"}`},
				{op: "RotateApplicationSecret", method: "POST", path: "/v1/management/applications/rotate", body: `{"id":"` + app + `"}`},
				{op: "DeleteApplication", method: "DELETE", path: "/v1/management/applications/delete", body: `{"id":"` + app + `"}`},

				{op: "ListAppKeys", method: "GET", path: "/v1/projects/shop/apps/keys"},
				{op: "CreateAppKey", method: "POST", path: "/v1/projects/shop/apps/keys/create", body: `{"name":"key by ` + w + `","role":"reader"}`},
				{op: "UpdateAppKey", method: "POST", path: "/v1/projects/shop/apps/keys/update", body: `{"id":"` + pk + `","description":"updated by ` + w + `"}`},
				{op: "RotateAppKeySecret", method: "POST", path: "/v1/projects/shop/apps/keys/rotate", body: `{"id":"` + pk + `"}`},
				{op: "DeleteAppKey", method: "DELETE", path: "/v1/projects/shop/apps/keys/delete", body: `{"id":"` + pk + `"}`},
				{op: "ListGlobalAppKeys", method: "GET", path: "/v1/apps/keys"},
				{op: "CreateGlobalAppKey", method: "POST", path: "/v1/apps/keys/create", body: `{"name":"global key by ` + w + `","role":"reader"}`},
				{op: "UpdateGlobalAppKey", method: "PUT", path: "/v1/apps/keys/update", body: `{"id":"` + gk + `","description":"updated by ` + w + `"}`},
				{op: "RotateGlobalAppKeySecret", method: "POST", path: "/v1/apps/keys/rotate", body: `{"id":"` + gk + `"}`},
				{op: "DeleteGlobalAppKey", method: "DELETE", path: "/v1/apps/keys/delete", body: `{"id":"` + gk + `"}`},
				{op: "WhoAmI", method: "GET", path: "/v1/observability/whoami"},
				{op: "CreateInvitations", method: "POST", path: "/v1/auth/namespace/invitations/create", body: `{"invitations":[{"email":"` + w + `@example.com","role":"reader"}]}`},
				{op: "ListInvitations", method: "GET", path: "/v1/auth/namespace/invitations/list?status=pending"},
				{op: "DeleteInvitations", method: "DELETE", path: "/v1/auth/namespace/invitations/delete", body: `{"email":"` + w + `@example.com"}`},
				{op: "ListUsers", method: "GET", path: "/v1/auth/namespace/users"},

				{op: "ListNamespaces", method: "POST", path: "/v1/management/namespaces/list"},
				{op: "ListNamespaces", method: "POST", path: "/v1/admin/namespaces/list"},
				{op: "ListNamespaces", method: "GET", path: "/v1/management/namespaces"},
				{op: "ListNamespaces", method: "GET", path: "/v1/management/namespaces/default_namespace"},
				{op: "CreateNamespace", method: "POST", path: "/v1/admin/namespaces/ns_" + w + "/create", body: `{}`},
				{op: "DeleteNamespace", method: "DELETE", path: "/v1/management/namespaces/ns_" + w},
				{op: "RotateSigningKey", method: "POST", path: "/v1/management/keys/rotate"},
				{op: "Backup", method: "POST", path: "/v1/management/backup", body: `{"dir":` + quote(filepath.Join(t.TempDir(), "backup")) + `}`, mayRefuse: true},

				{op: "InsertUserMetadata", method: "POST", path: "/v1/management/users/metadata/k_" + w + "/insert", body: `{"value":1}`},
				{op: "InsertUserMetadata", method: "POST", path: "/v1/users/metadata/k22_" + w + "/insert", body: `{"value":1}`},
				{op: "GetUserMetadata", method: "POST", path: "/v1/management/users/metadata/k_" + w + "/get"},
				{op: "UpdateUserMetadata", method: "POST", path: "/v1/management/users/metadata/k_" + w + "/update", body: `{"value":2}`},
				{op: "InsertNamespaceMetadata", method: "POST", path: "/v1/management/namespace/metadata/k_" + w + "/insert", body: `{"value":1}`},
				{op: "GetNamespaceMetadata", method: "POST", path: "/v1/management/namespace/metadata/k_" + w + "/get"},
				{op: "UpdateNamespaceMetadata", method: "POST", path: "/v1/management/namespace/metadata/k_" + w + "/update", body: `{"value":2}`},
				{op: "QuotaLimits", method: "POST", path: "/v1/observability/quota/limits", body: `{}`},
				{op: "QuotaUsage", method: "POST", path: "/v1/observability/quota/usage", body: `{}`},
				// A quota of 0 is none: the role test changes nothing.
				{op: "SetNamespaceQuota", method: "POST", path: "/v1/management/namespaces/beta/quota", body: `{"storage_bytes":0}`},
			}
		}
		for _, role := range roletest.Roles {
			c := callers[role]
			for _, call := range calls(role) {
				need, ok := roletest.Need[call.op]
				if !ok || need == roletest.Open {
					t.Fatalf("%s: no role in the role table", call.op)
				}
				t.Run(string(role)+"/"+call.op+" "+call.path, func(t *testing.T) {
					if !role.Allows(need) {
						wantError(t, c.do(t, call.method, call.path, call.body), 403, "PERMISSION_DENIED",
							fmt.Sprintf("an application with role '%s' may not make this call: it needs role '%s'", role, need))
						return
					}
					var res *response
					switch {
					case call.stream:
						body, cancel := c.startStream(t, call.path, call.body, 0) // fails the test unless 200
						cancel()
						body.Body.Close()
						return
					case call.op == "BeginTransaction":
						c.begin(t, "shop").rollback(t) // begin checks the 200; the rollback frees the node's slot
						return
					case call.inTx:
						res = c.begin(t, "shop").do(t, call.method, call.path, call.body)
					default:
						res = c.do(t, call.method, call.path, call.body)
					}
					if res.status != http.StatusOK && (!call.mayRefuse || res.status == 401 || res.status == 403) {
						t.Fatalf("%s may call %s: got %s", role, call.op, res)
					}
				})
			}
		}
		roletest.CheckCovered(t, roletest.Reached(t, s.anon.scrape(t).text, ops.TransportHTTP), ops.TransportHTTP)

		// Another namespace's admin: acme's applications do not exist for it.
		other := s.appClient(t, s.owner, `{"name":"b","namespace":"beta","role":"admin"}`)
		victim, _ := s.app(t, admin, `{"name":"kept","role":"reader"}`)
		notFound := "application '" + victim + "' doesn't exist"
		wantError(t, other.do(t, "POST", "/v1/users/applications/update", `{"id":"`+victim+`","name":"taken"}`), 404, "NOT_FOUND", notFound)
		wantError(t, other.do(t, "POST", "/v1/users/applications/rotate", `{"id":"`+victim+`"}`), 404, "NOT_FOUND", notFound)
		wantError(t, other.do(t, "DELETE", "/v1/users/applications/delete", `{"id":"`+victim+`"}`), 404, "NOT_FOUND", notFound)
		if list := admin.okObject(t, "POST", "/v1/users/applications/list", ""); !strings.Contains(fmt.Sprint(list), "kept") {
			t.Errorf("another namespace's admin changed acme's application: %v", list)
		}

		// No token: 401 everywhere but the open calls.
		for _, call := range calls("anon") {
			res := s.anon.do(t, call.method, call.path, call.body)
			wantError(t, res, 401, "UNAUTHENTICATED", "request unauthenticated with bearer")
			if res.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: a 401 without WWW-Authenticate", call.op)
			}
		}
		s.anon.ok(t, "GET", "/v1/health", "")
		s.anon.ok(t, "GET", "/v1/info", "")
	})
}

// Each defect of a token is 401 UNAUTHENTICATED, and says which without
// echoing the token.
func TestTokenDefects(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		cfg := authConfig(t)
		cfg.Tokens.AccessTTL = 2 * time.Second
		s := startAuthServer(t, store, cfg)
		id, secret := s.app(t, s.owner, `{"name":"app"}`)
		access, refresh := s.token(t, id, secret)
		// A token of this store's keys, for the same application, but for
		// another audience: what a node configured for another audience
		// (another deployment sharing keys by mistake) would issue.
		other := auth.New(store, auth.Config{Audience: "elsewhere", HashCost: bcrypt.MinCost})
		foreign, err := other.Token(t.Context(), auth.TokenRequest{GrantType: "client_credentials", ClientID: id, ClientSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(access, ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		elevated := base64.RawURLEncoding.EncodeToString(bytes.Replace(payload, []byte(`"editor"`), []byte(`"owner"`), 1))
		for _, tc := range []struct {
			name, header, message string
		}{
			{"no header", "", "request unauthenticated with bearer"},
			{"basic auth", "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret)), "request unauthenticated with bearer"},
			{"empty bearer", "Bearer ", "request unauthenticated with bearer"},
			{"garbage", "Bearer garbage", "invalid token: malformed"},
			{"forged signature", "Bearer " + parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 64)), "invalid token: bad signature"},
			{"elevated role", "Bearer " + parts[0] + "." + elevated + "." + parts[2], "invalid token: bad signature"},
			{"another audience", "Bearer " + foreign.Access, "invalid token: issued for another audience"},
			{"refresh token", "Bearer " + refresh, "invalid token: its use is 'refresh', not 'access'"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, _ := http.NewRequest("POST", s.anon.base+"/v1/databases/list", nil)
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				res := s.anon.doRequest(t, req)
				wantError(t, res, 401, "UNAUTHENTICATED", tc.message)
				if strings.Contains(string(res.body), secret) || (len(tc.header) > 20 && strings.Contains(string(res.body), tc.header[7:])) {
					t.Errorf("the error echoes the credentials: %s", res.body)
				}
			})
		}
		// An expired token (the unit tests check one that was verified
		// before it expired; here the clock is the machine's, which a
		// loaded machine may run past the lifetime before a first use).
		expiring, _ := s.token(t, id, secret)
		time.Sleep(cfg.Tokens.AccessTTL + 100*time.Millisecond)
		wantError(t, s.anon.as(expiring).do(t, "POST", "/v1/databases/list", ""), 401, "UNAUTHENTICATED", "invalid token: expired")
	})
}

// The token endpoint's answers to bad requests.
func TestTokenEndpoint(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		id, secret := s.app(t, s.owner, `{"name":"app","role":"reader"}`)
		for _, tc := range []struct {
			name    string
			form    url.Values
			status  int
			code    string
			message string
		}{
			{"wrong secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {"nope"}}, 401, "UNAUTHENTICATED", "invalid client credentials"},
			{"unknown client", url.Values{"grant_type": {"client_credentials"}, "client_id": {"nobody"}, "client_secret": {secret}}, 401, "UNAUTHENTICATED", "invalid client credentials"},
			{"no secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}}, 400, "INVALID_ARGUMENT", "client_id and client_secret are required with grant_type client_credentials"},
			{"password grant", url.Values{"grant_type": {"password"}, "username": {"u"}, "password": {"p"}}, 400, "INVALID_ARGUMENT", "Failed to GetAccessToken: reason = unsupported grant_type, it has to be one of [refresh_token, client_credentials]"},
			{"no grant", url.Values{}, 400, "INVALID_ARGUMENT", "Failed to GetAccessToken: reason = unsupported grant_type, it has to be one of [refresh_token, client_credentials]"},
			{"bad refresh token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x.y.z"}}, 401, "UNAUTHENTICATED", "invalid token: malformed"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, s.tokenRequest(t, tc.form), tc.status, tc.code, tc.message)
			})
		}
		// A JSON body is read as well as a form (issue 41, item 7: it was
		// answered "unsupported grant_type"), with the grant as the form's
		// word or the protobuf enum's name, as the original's gateway took it.
		for _, body := range []string{
			`{"grant_type":"client_credentials","client_id":"` + id + `","client_secret":"` + secret + `"}`,
			`{"grant_type":"CLIENT_CREDENTIALS","client_id":"` + id + `","client_secret":"` + secret + `"}`,
		} {
			r := s.anon.sendTyped(t, "POST", "/v1/auth/token", "application/json", body)
			if r.status != http.StatusOK {
				t.Fatalf("JSON token request %s: %s", body, r)
			}
			s.anon.as(str(t, r.object(t), "access_token")).ok(t, "POST", "/v1/databases/list", "")
		}
		r := s.anon.sendTyped(t, "POST", "/v1/auth/token", "application/json", `{"grant_type":"client_credentials","client_id":"`+id+`","client_secret":"nope"}`)
		wantError(t, r, 401, "UNAUTHENTICATED", "invalid client credentials")
		r = s.anon.sendTyped(t, "POST", "/v1/auth/token", "application/json", `{"grant_type":`)
		wantError(t, r, 400, "INVALID_ARGUMENT", anyMessage)
		if !strings.Contains(string(r.body), "form-encoded") {
			t.Errorf("a broken JSON token request does not say the form works: %s", r.body)
		}

		// Refresh: a new pair, which works. Access tokens last an hour by
		// default (expires_in is in seconds, as the original's).
		_, refresh := s.token(t, id, secret)
		m := s.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}).object(t)
		if m["expires_in"] != json.Number("3600") {
			t.Errorf("expires_in %v, want 3600", m["expires_in"])
		}
		s.anon.as(str(t, m, "access_token")).ok(t, "POST", "/v1/databases/list", "")
	})
}

// Failed token requests are limited per client id and address: past the
// limit even the right secret gets 429 with a retry delay.
func TestFailedTokenRequestsLimited(t *testing.T) {
	s := startAuthServer(t, backendtest.OpenPebble(t), authConfig(t))
	id, secret := s.app(t, s.owner, `{"name":"app"}`)
	bad := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {"wrong"}}
	for range auth.DefaultFailedPerMinute {
		wantError(t, s.tokenRequest(t, bad), 401, "UNAUTHENTICATED", "invalid client credentials")
	}
	r := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}})
	wantError(t, r, 429, "RESOURCE_EXHAUSTED", anyMessage)
	if e, _ := errorOf(t, r); e.Retry == nil || e.Retry.Delay <= 0 || r.header.Get("Retry-After") == "" {
		t.Errorf("a 429 without its retry delay: %s, Retry-After %q", r.body, r.header.Get("Retry-After"))
	}
}

// Wrong secrets sent for an application from one address lock it out
// there only: a namespace's admin guessing at the owner's secret is held
// back, the owner is not.
func TestFailedTokenRequestsLockOutOnlyTheirSource(t *testing.T) {
	s := startAuthServer(t, backendtest.OpenPebble(t), authConfig(t))
	intruder := s.anon.from(t, "127.0.0.2")
	bad := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.creds.ClientID}, "client_secret": {"a guess"}}
	for range auth.DefaultFailedPerMinute {
		r := intruder.sendTyped(t, "POST", "/v1/auth/token", "application/x-www-form-urlencoded", bad.Encode())
		wantError(t, r, 401, "UNAUTHENTICATED", "invalid client credentials")
	}
	r := intruder.sendTyped(t, "POST", "/v1/auth/token", "application/x-www-form-urlencoded", bad.Encode())
	wantError(t, r, 429, "RESOURCE_EXHAUSTED", anyMessage)
	s.token(t, s.creds.ClientID, s.creds.ClientSecret) // from 127.0.0.1
}

// from is the client sending its requests from the loopback address ip
// (any of 127.0.0.0/8 on Linux), as another host would.
func (c *client) from(t testing.TB, ip string) *client {
	addr := net.ParseIP(ip)
	if addr == nil {
		t.Fatalf("not an IP address: %s", ip)
	}
	cc := *c
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: addr}}
	cc.hc = &http.Client{Timeout: c.hc.Timeout, Transport: &http.Transport{DialContext: dialer.DialContext}}
	return &cc
}

// Two namespaces may hold databases of the same name; neither sees the
// other's databases, documents or changes.
func TestNamespacesKeptApart(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/admin/namespaces/acme/create", `{"id":10}`)
		s.owner.ok(t, "POST", "/v1/admin/namespaces/beta/create", `{"id":"11"}`)
		acme := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"editor"}`)
		beta := s.appClient(t, s.owner, `{"name":"b","namespace":"beta","role":"editor"}`)
		for _, c := range []*client{acme, beta} {
			c.createDB(t, "shop")
			c.createColl(t, "shop", "items", authItemsSchema)
		}
		acmeEvents, cancel := acme.startStream(t, collPath("shop", "items", "events"), "{}", 1<<20)
		defer cancel()
		defer acmeEvents.Body.Close()
		acme.insert(t, "shop", "items", `{"id":"acme-1","v":1}`)
		beta.insert(t, "shop", "items", `{"id":"beta-1","v":2}`, `{"id":"beta-2","v":3}`)
		acme.insert(t, "shop", "items", `{"id":"acme-2","v":4}`)

		equalStrings(t, "acme's documents", acme.all(t, "shop", "items"), []string{`{"id":"acme-1","v":1}`, `{"id":"acme-2","v":4}`})
		equalStrings(t, "beta's documents", beta.all(t, "shop", "items"), []string{`{"id":"beta-1","v":2}`, `{"id":"beta-2","v":3}`})
		// The owner's namespace, the default one, has no database.
		if dbs := s.owner.okObject(t, "POST", "/v1/databases/list", "")["databases"].([]any); len(dbs) != 0 {
			t.Fatalf("the default namespace lists %v", dbs)
		}
		// acme's stream sees acme's two inserts and nothing of beta's.
		sc := streamLines(t, acmeEvents.Body)
		for _, want := range []string{"acme-1", "acme-2"} {
			if !sc.Scan() {
				t.Fatalf("the stream ended: %v", sc.Err())
			}
			var doc struct{ ID string }
			json.Unmarshal(parseEvent(t, sc.Text()).Data, &doc)
			if doc.ID != want {
				t.Fatalf("acme's stream got %q, want %q", doc.ID, want)
			}
		}
		// Dropping one namespace's database leaves the other's.
		beta.ok(t, "DELETE", dbPath("shop", "drop"), "")
		equalStrings(t, "acme's documents after beta's drop", acme.all(t, "shop", "items"), []string{`{"id":"acme-1","v":1}`, `{"id":"acme-2","v":4}`})
		// 2022's list (/v1/admin) numbers namespaces by id; /v1/management's
		// (from October 2022 on) by code, its id a string: the name.
		list := s.owner.okObject(t, "POST", "/v1/admin/namespaces/list", "")
		if b, _ := json.Marshal(list["namespaces"]); string(b) != `[{"code":1,"id":1,"name":"default_namespace"},{"code":10,"id":10,"name":"acme"},{"code":11,"id":11,"name":"beta"}]` {
			t.Fatalf("namespaces %s", b)
		}
		const managed = `[{"code":1,"id":"default_namespace","name":"default_namespace"},{"code":10,"id":"acme","name":"acme"},{"code":11,"id":"beta","name":"beta"}]`
		for _, r := range []struct{ method, path string }{{"POST", "/v1/management/namespaces/list"}, {"GET", "/v1/management/namespaces"}} {
			list = s.owner.okObject(t, r.method, r.path, "")
			if b, _ := json.Marshal(list["namespaces"]); string(b) != managed {
				t.Fatalf("%s %s: namespaces %s", r.method, r.path, b)
			}
		}
		// The final API's one namespace, in a list of one.
		one := s.owner.okObject(t, "GET", "/v1/management/namespaces/acme", "")
		if b, _ := json.Marshal(one["namespaces"]); string(b) != `[{"code":10,"id":"acme","name":"acme"}]` {
			t.Fatalf("GET namespace acme: %s", b)
		}
		wantError(t, s.owner.do(t, "GET", "/v1/management/namespaces/nowhere", ""), 404, "NOT_FOUND", "namespace 'nowhere' doesn't exist")
		wantError(t, s.owner.do(t, "GET", "/v1/management/namespaces?describe=true", ""), 501, "UNIMPLEMENTED", "describing namespaces (describe=true) is not implemented by this server")
		// beta.19's create: the name in the body, the number as code.
		created := s.owner.ok(t, "POST", "/v1/management/namespaces/create", `{"name":"zeta","code":20}`)
		if got, want := strings.TrimSpace(string(created.body)), `{"message":"Namespace created, with code=20, and id=zeta","namespace":{"code":20,"id":"zeta","name":"zeta"},"status":"created"}`; got != want {
			t.Errorf("create namespace (name in the body): %s, want %s", got, want)
		}
		created = s.owner.ok(t, "POST", "/v1/management/namespaces/create", `{"name":"eta","id":"eta"}`)
		if !strings.Contains(string(created.body), `"code":21`) {
			t.Errorf("create namespace with the next free code: %s", created.body)
		}
		wantError(t, s.owner.do(t, "POST", "/v1/management/namespaces/create", `{}`), 400, "INVALID_ARGUMENT", "'name' is required")
		wantError(t, s.owner.do(t, "POST", "/v1/management/namespaces/create", `{"name":"eps","id":"other"}`), 400, "INVALID_ARGUMENT",
			"'id' must be the namespace's name or left out: Folio names a namespace by its name")
		wantError(t, s.owner.do(t, "POST", "/v1/management/namespaces/create", `{"name":"zeta"}`), 409, "ALREADY_EXISTS", "namespace 'zeta' already exists")
		wantError(t, s.owner.do(t, "POST", "/v1/admin/namespaces/acme/create", `{"id":12}`), 409, "ALREADY_EXISTS", "namespace 'acme' already exists")
		wantError(t, s.owner.do(t, "POST", "/v1/admin/namespaces/gamma/create", `{"id":10}`), 409, "ALREADY_EXISTS", "namespace id 10 is taken by 'acme'")
		wantError(t, s.owner.do(t, "POST", "/v1/management/applications/create", `{"name":"x","namespace":"nowhere"}`), 404, "NOT_FOUND", "namespace 'nowhere' doesn't exist")

		// Deleting: only an empty namespace, never the default.
		wantError(t, s.owner.do(t, "DELETE", "/v1/management/namespaces/default_namespace", ""), 400, "INVALID_ARGUMENT",
			"namespace 'default_namespace' cannot be deleted")
		wantError(t, s.owner.do(t, "DELETE", "/v1/management/namespaces/nowhere", ""), 404, "NOT_FOUND", "namespace 'nowhere' doesn't exist")
		wantError(t, s.owner.do(t, "DELETE", "/v1/management/namespaces/acme", ""), 412, "FAILED_PRECONDITION",
			"namespace 'acme' holds 1 database(s) (shop): drop them first")
		app, _ := s.app(t, s.owner, `{"name":"in zeta","namespace":"zeta"}`)
		wantError(t, s.owner.do(t, "DELETE", "/v1/management/namespaces/zeta", ""), 412, "FAILED_PRECONDITION",
			"namespace 'zeta' has 1 application(s) ("+app+"): delete them first")
		s.owner.ok(t, "DELETE", "/v1/management/applications/delete", `{"id":"`+app+`"}`)
		deleted := s.owner.ok(t, "DELETE", "/v1/management/namespaces/zeta", "")
		if got, want := strings.TrimSpace(string(deleted.body)), `{"message":"Namespace: zeta deleted successfully","status":"deleted"}`; got != want {
			t.Errorf("delete namespace: %s, want %s", got, want)
		}
		wantError(t, s.owner.do(t, "GET", "/v1/management/namespaces/zeta", ""), 404, "NOT_FOUND", "namespace 'zeta' doesn't exist")
		// Its code is not given again.
		again := s.owner.ok(t, "POST", "/v1/management/namespaces/create", `{"name":"zeta"}`)
		if strings.Contains(string(again.body), `"code":20`) {
			t.Errorf("a namespace made after zeta's delete took its code: %s", again.body)
		}
	})
}

// An application's secret is shown when it is made and when it is
// rotated, never in a listing; rotating it revokes the old secret and the
// tokens issued with it. An admin sees and changes only its namespace's
// applications, and cannot grant more than it has.
func TestApplicationsLifecycle(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/admin/namespaces/acme/create", `{}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		id, secret := s.app(t, admin, `{"name":"svc","description":"a service"}`)
		access, refresh := s.token(t, id, secret)
		app := s.anon.as(access)
		app.createDB(t, "shop") // editor, the default role

		list := admin.okObject(t, "POST", "/v1/users/applications/list", "")["applications"].([]any)
		if len(list) != 2 {
			t.Fatalf("acme's admin lists %d applications, want itself and svc", len(list))
		}
		for _, a := range list {
			m := a.(map[string]any)
			if _, ok := m["secret"]; ok {
				t.Fatalf("a listed application has its secret: %v", m)
			}
			if m["id"] == id && (m["name"] != "svc" || m["description"] != "a service" || m["role"] != "editor" || m["namespace"] != "acme" || m["created_by"] == "") {
				t.Fatalf("svc listed as %v", m)
			}
		}
		// The owner's own application is not acme's admin's to see.
		wantError(t, admin.do(t, "POST", "/v1/users/applications/rotate", `{"id":"`+s.creds.ClientID+`"}`), 404, "NOT_FOUND", "application '"+s.creds.ClientID+"' doesn't exist")
		wantError(t, admin.do(t, "POST", "/v1/users/applications/create", `{"name":"x","role":"owner"}`), 403, "PERMISSION_DENIED", "an application with role 'admin' cannot grant role 'owner'")
		wantError(t, admin.do(t, "POST", "/v1/users/applications/create", `{"name":"x","namespace":"default_namespace"}`), 403, "PERMISSION_DENIED", "only the owner creates applications in another namespace")
		wantError(t, admin.do(t, "POST", "/v1/users/applications/create", `{"name":"x","role":"root"}`), 400, "INVALID_ARGUMENT", "unknown role 'root': want reader, editor, admin or owner")
		wantError(t, admin.do(t, "POST", "/v1/users/applications/create", `{"description":"no name"}`), 400, "INVALID_ARGUMENT", "an application needs a name")

		// Update: a reader now.
		up := obj(t, admin.okObject(t, "POST", "/v1/users/applications/update", `{"id":"`+id+`","name":"svc2","description":"d","role":"reader"}`), "updated_application")
		if up["name"] != "svc2" || up["role"] != "reader" || up["updated_at"] == nil {
			t.Fatalf("updated %v", up)
		}
		wantError(t, app.do(t, "POST", dbPath("other", "create"), ""), 403, "PERMISSION_DENIED", anyMessage)

		// Rotate: a new secret; the old one and the old tokens stop working.
		rotated := obj(t, admin.okObject(t, "POST", "/v1/users/applications/rotate", `{"id":"`+id+`"}`), "application")
		newSecret := str(t, rotated, "secret")
		if newSecret == secret {
			t.Fatal("rotation kept the secret")
		}
		wantError(t, app.do(t, "POST", "/v1/databases/list", ""), 401, "UNAUTHENTICATED", "token revoked: its application was deleted or its secret rotated")
		wantError(t, s.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}), 401, "UNAUTHENTICATED", anyMessage)
		wantError(t, s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}), 401, "UNAUTHENTICATED", "invalid client credentials")
		access2, _ := s.token(t, id, newSecret)
		s.anon.as(access2).ok(t, "POST", "/v1/databases/list", "")

		// Delete: its tokens stop working.
		if del := admin.okObject(t, "DELETE", "/v1/users/applications/delete", `{"id":"`+id+`"}`); del["deleted"] != true {
			t.Fatalf("delete answered %v", del)
		}
		wantError(t, s.anon.as(access2).do(t, "POST", "/v1/databases/list", ""), 401, "UNAUTHENTICATED", anyMessage)
		wantError(t, admin.do(t, "DELETE", "/v1/users/applications/delete", `{"id":"`+id+`"}`), 404, "NOT_FOUND", anyMessage)
	})
}

// After a rotation of the signing key, tokens signed with the old key keep
// working until they expire, and new ones are signed with the new key.
func TestSigningKeyRotation(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		id, secret := s.app(t, s.owner, `{"name":"app"}`)
		before, _ := s.token(t, id, secret)
		kid := str(t, s.owner.okObject(t, "POST", "/v1/management/keys/rotate", ""), "key_id")
		after, _ := s.token(t, id, secret)
		if headerKid(t, after) != kid || headerKid(t, before) == kid {
			t.Fatalf("keys: before %s, after %s, rotated to %s", headerKid(t, before), headerKid(t, after), kid)
		}
		for _, tok := range []string{before, after} {
			s.anon.as(tok).ok(t, "POST", "/v1/databases/list", "")
		}
	})
}

func headerKid(t *testing.T, token string) string {
	t.Helper()
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	var h struct{ Kid string }
	json.Unmarshal(b, &h)
	return h.Kid
}

// A transaction can be used and ended only by the application that began
// it, even by another of the same namespace and role.
func TestTransactionBoundToApplication(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		first := s.appClient(t, s.owner, `{"name":"one"}`)
		second := s.appClient(t, s.owner, `{"name":"two"}`)
		first.createDB(t, "shop")
		first.createColl(t, "shop", "items", authItemsSchema)
		begin := first.ok(t, "POST", dbPath("shop", "transactions/begin"), "")
		tx := obj(t, begin.object(t), "tx_ctx")
		withTx := func(c *client, method, path, body string) *response {
			req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Tigris-Tx-Id", str(t, tx, "id"))
			req.Header.Set("Tigris-Tx-Origin", str(t, tx, "origin"))
			return c.doRequest(t, req)
		}
		const denied = "the transaction was begun by another application: only it may use the transaction"
		wantError(t, withTx(second, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":"b"}]}`), 403, "PERMISSION_DENIED", denied)
		wantError(t, withTx(second, "POST", dbPath("shop", "transactions/commit"), "{}"), 403, "PERMISSION_DENIED", denied)
		wantError(t, withTx(second, "POST", dbPath("shop", "transactions/rollback"), "{}"), 403, "PERMISSION_DENIED", denied)
		if r := withTx(first, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":"a"}]}`); r.status != 200 {
			t.Fatalf("the owner's insert in its transaction: %s", r)
		}
		if r := withTx(first, "POST", dbPath("shop", "transactions/commit"), "{}"); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		equalStrings(t, "documents", second.all(t, "shop", "items"), []string{`{"id":"a"}`})
	})
}

// No secret and no token ever reaches a log line or an error body, at the
// most verbose log level, whatever happens to them.
func TestSecretsNeverLogged(t *testing.T) {
	s := startAuthServer(t, backendtest.OpenPebble(t), authConfig(t))
	var secrets []string
	id, secret := s.app(t, s.owner, `{"name":"app","role":"admin"}`)
	access, refresh := s.token(t, id, secret)
	secrets = append(secrets, s.creds.ClientSecret, secret, access, refresh)
	rotated := str(t, obj(t, s.owner.okObject(t, "POST", "/v1/users/applications/rotate", `{"id":"`+id+`"}`), "application"), "secret")
	secrets = append(secrets, rotated)
	var bodies []string
	for _, r := range []*response{
		s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}),
		s.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}),
		s.anon.as(access).do(t, "POST", "/v1/databases/list", ""),
		s.anon.as(access+"x").do(t, "POST", "/v1/databases/list", ""),
		s.anon.as(refresh).do(t, "POST", "/v1/databases/list", ""),
	} {
		bodies = append(bodies, string(r.body))
	}
	access2, _ := s.token(t, id, rotated)
	secrets = append(secrets, access2)
	s.anon.as(access2).ok(t, "POST", "/v1/databases/list", "")
	s.node.Close() // every log line written
	logs := s.logs.String()
	if !strings.Contains(logs, "token refused") || !strings.Contains(logs, id) {
		t.Fatalf("the log does not show the refused token request (so this test would see no leak): %s", logs)
	}
	for _, sec := range secrets {
		for _, part := range strings.Split(sec, ".") { // a token's parts too
			if len(part) < 16 {
				continue
			}
			if strings.Contains(logs, part) {
				t.Errorf("the log holds a secret or token part %q", part)
			}
			for _, b := range bodies {
				if strings.Contains(b, part) {
					t.Errorf("an error body holds a secret or token part %q: %s", part, b)
				}
			}
		}
	}
}

// Without --auth the Authorization header is not read: every caller may do
// everything, in the default namespace, as on the original's local
// instance; the management calls work (though a start with --auth then
// refuses the applications made: internal/node's auth_test.go).
func TestWithoutAuth(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.as("garbage").ok(t, "POST", "/v1/databases/list", "")
		c.ok(t, "POST", "/v1/management/namespaces/acme/create", "")
		created := obj(t, c.okObject(t, "POST", "/v1/management/applications/create", `{"name":"x","role":"owner"}`), "created_application")
		if str(t, created, "secret") == "" {
			t.Fatal("no secret")
		}
	})
}

// The owner's client id is half of its credentials and no tenant's
// business: where the owner made or changed an application, its
// namespace's admin sees "owner" in created_by and updated_by, in a
// listing and in what updating or rotating answers. The owner sees its id.
func TestOwnerIDHiddenFromAdmins(t *testing.T) {
	s := startAuthServer(t, backendtest.OpenPebble(t), authConfig(t))
	s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{}`)
	adminID, adminSecret := s.app(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
	access, _ := s.token(t, adminID, adminSecret)
	admin := s.anon.as(access)
	svcID, _ := s.app(t, admin, `{"name":"svc"}`)
	s.owner.ok(t, "POST", "/v1/management/applications/rotate", `{"id":"`+svcID+`"}`)

	byID := func(r *response) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, a := range r.object(t)["applications"].([]any) {
			out[a.(map[string]any)["id"].(string)] = a.(map[string]any)
		}
		return out
	}
	seen := byID(admin.ok(t, "POST", "/v1/management/applications/list", ""))
	if seen[adminID]["created_by"] != "owner" || seen[svcID]["created_by"] != adminID || seen[svcID]["updated_by"] != "owner" {
		t.Errorf("acme's admin lists itself as %v and svc as %v; want the owner's hand shown as \"owner\"", seen[adminID], seen[svcID])
	}
	updated := admin.ok(t, "POST", "/v1/management/applications/update", `{"id":"`+adminID+`","name":"a2"}`)
	rotated := admin.ok(t, "POST", "/v1/management/applications/rotate", `{"id":"`+adminID+`"}`) // revokes admin's token: last
	for _, r := range []*response{updated, rotated} {
		if strings.Contains(string(r.body), s.creds.ClientID) || !strings.Contains(string(r.body), `"created_by":"owner"`) {
			t.Errorf("acme's admin got %s, which shows the owner's id %s or not \"owner\"", r.body, s.creds.ClientID)
		}
	}
	if owned := byID(s.owner.ok(t, "POST", "/v1/management/applications/list", "")); owned[adminID]["created_by"] != s.creds.ClientID || owned[svcID]["updated_by"] != s.creds.ClientID {
		t.Errorf("the owner lists acme's admin as %v and svc as %v; want its own id", owned[adminID], owned[svcID])
	}
}
