package grpcapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/roletest"
)

// notOverGRPC are the calls with a role that the gRPC services do not
// have: the signing key's rotation, backup and namespace quotas are
// HTTP's only (Folio's calls, which the wire definitions do not have), as
// is whoami (the final wire's Observability has no WhoAmI).
var notOverGRPC = []string{"RotateSigningKey", "Backup", "SetNamespaceQuota", "WhoAmI"}

// Each role against every call of the gRPC services that needs one, as
// over HTTP (apitest.TestRolesAgainstCalls): within the role it succeeds,
// beyond it it is PERMISSION_DENIED with HTTP's message; the node's request
// metrics then show every call with a role reached over gRPC. An admin of
// another namespace does not see the applications it would change.
func TestRolesOverGRPC(t *testing.T) {
	roletest.CheckTable(t)
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		ownerFile := filepath.Join(t.TempDir(), "owner.json")
		s := start(t, b.Open(t), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Auth = true
			nc.OwnerFile = ownerFile
			nc.Tokens.HashCost = bcrypt.MinCost
		}))
		var owner auth.OwnerCredentials
		if raw, err := os.ReadFile(ownerFile); err != nil || json.Unmarshal(raw, &owner) != nil {
			t.Fatalf("the owner file: %v", err)
		}
		authc, users, admins := api.NewAuthClient(s.conn), api.NewUserClient(s.conn), api.NewAdminClient(s.conn)
		management := api.NewManagementClient(s.conn)
		tokenOf := func(id, secret string) string {
			t.Helper()
			res, err := authc.GetAccessToken(ctx(t), &api.GetAccessTokenRequest{GrantType: api.GrantType_CLIENT_CREDENTIALS, ClientId: id, ClientSecret: secret})
			if err != nil {
				t.Fatalf("token: %v", err)
			}
			return res.AccessToken
		}
		as := func(c context.Context, token string) context.Context {
			return metadata.AppendToOutgoingContext(c, "authorization", "Bearer "+token)
		}
		ownerToken := tokenOf(owner.ClientID, owner.ClientSecret)
		// Applications with a role and a namespace are made over HTTP: gRPC's
		// CreateApplication has no field for either.
		app := func(byToken, body string) (id, token string) {
			t.Helper()
			code, res, _ := httpDo(t, s.http1, "POST", s.base+"/v1/management/applications/create", body, "Authorization", "Bearer "+byToken)
			var created struct {
				App struct{ ID, Secret string } `json:"created_application"`
			}
			if code != 200 || json.Unmarshal([]byte(res), &created) != nil {
				t.Fatalf("create application %s: %d %s", body, code, res)
			}
			return created.App.ID, tokenOf(created.App.ID, created.App.Secret)
		}
		searchClient := api.NewSearchClient(s.conn)
		caches := api.NewCacheClient(s.conn)
		for id, name := range map[int32]string{5: "acme", 6: "beta"} {
			if _, err := admins.CreateNamespace(as(ctx(t), ownerToken), &api.CreateNamespaceRequest2022{Id: id, Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		_, adminToken := app(ownerToken, `{"name":"a","namespace":"acme","role":"admin"}`)
		tokens := map[auth.Role]string{auth.RoleAdmin: adminToken, auth.RoleOwner: ownerToken}
		_, tokens[auth.RoleReader] = app(adminToken, `{"name":"r","role":"reader"}`)
		_, tokens[auth.RoleEditor] = app(adminToken, `{"name":"e","role":"editor"}`)
		// The same data in acme, and in the owner's namespace, the default.
		for _, token := range []string{adminToken, ownerToken} {
			c := as(ctx(t), token)
			if _, err := s.rpc.CreateDatabase(c, &api.CreateDatabaseRequest{Db: "shop"}); err != nil {
				t.Fatal(err)
			}
			for name, schema := range map[string]string{
				"items": `{"title":"items","primary_key":["id"],"properties":{"id":{"type":"string"},"v":{"type":"integer"}}}`,
				"msgs":  `{"title":"msgs","collection_type":"messages","properties":{"text":{"type":"string"}}}`,
			} {
				if _, err := s.rpc.CreateOrUpdateCollection(c, &api.CreateOrUpdateCollectionRequest{Project: "shop", Collection: name, Schema: []byte(schema)}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := searchClient.CreateOrUpdateIndex(c, &api.CreateOrUpdateIndexRequest{Project: "shop", Name: "idx",
				Schema: []byte(`{"title":"idx","properties":{"name":{"type":"string"}}}`)}); err != nil {
				t.Fatal(err)
			}
			if _, err := caches.CreateCache(c, &api.CreateCacheRequest{Project: "shop", Name: "kc"}); err != nil {
				t.Fatal(err)
			}
			if _, err := caches.Set(c, &api.SetRequest{Project: "shop", Name: "kc", Key: "k", Value: []byte(`1`)}); err != nil {
				t.Fatal(err)
			}
		}
		// An application of acme for each caller to update, rotate and
		// delete.
		target := map[auth.Role]string{}
		for _, r := range roletest.Roles {
			target[r], _ = app(adminToken, `{"name":"target of `+string(r)+`","role":"reader"}`)
		}
		// A key of shop and a global key of acme for each caller to
		// update, rotate and delete.
		projectKey, globalKey := map[auth.Role]string{}, map[auth.Role]string{}
		for _, r := range roletest.Roles {
			pk, err := s.rpc.CreateAppKey(as(ctx(t), adminToken), &api.CreateAppKeyRequest{Project: "shop", Name: "key of " + string(r), Role: "reader"})
			if err != nil {
				t.Fatal(err)
			}
			gk, err := s.rpc.CreateGlobalAppKey(as(ctx(t), adminToken), &api.CreateGlobalAppKeyRequest{Name: "global key of " + string(r), Role: "reader"})
			if err != nil {
				t.Fatal(err)
			}
			projectKey[r], globalKey[r] = pk.CreatedAppKey.Id, gk.CreatedAppKey.Id
		}

		// opened is the outcome of opening a stream: its error, or none
		// once the server sent the stream's header (an event stream sends
		// nothing more until something changes). A stream refused at once
		// has no header, and its status comes with the first receive,
		// before any message is decoded.
		opened := func(st grpc.ClientStream, err error) error {
			if err != nil {
				return err
			}
			md, err := st.Header()
			if err != nil || md != nil {
				return err
			}
			return st.RecvMsg(&api.ReadResponse{})
		}
		type call struct {
			op   string
			make func(c context.Context) error
		}
		inTx := func(c context.Context, then func(context.Context) error) error {
			begin, err := s.rpc.BeginTransaction(c, &api.BeginTransactionRequest{Project: "shop"})
			if err != nil {
				return err
			}
			return then(metadata.AppendToOutgoingContext(c, "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin))
		}
		calls := func(who auth.Role, allowed func(op string) bool) []call {
			w, id := string(who), target[who]
			pk, gk := projectKey[who], globalKey[who]
			rpc := s.rpc
			return []call{
				{"ListDatabases", func(c context.Context) error { _, err := rpc.ListDatabases(c, &api.ListDatabasesRequest{}); return err }},
				{"DescribeDatabase", func(c context.Context) error {
					_, err := describeDatabase2022(c, s.conn, "shop")
					return err
				}},
				{"ListCollections", func(c context.Context) error {
					_, err := rpc.ListCollections(c, &api.ListCollectionsRequest{Project: "shop"})
					return err
				}},
				{"DescribeCollection", func(c context.Context) error {
					_, err := rpc.DescribeCollection(c, &api.DescribeCollectionRequest{Project: "shop", Collection: "items"})
					return err
				}},
				{"Read", func(c context.Context) error {
					return opened(rpc.Read(c, &api.ReadRequest{Project: "shop", Collection: "items", Filter: []byte(`{}`)}))
				}},
				{"Count", func(c context.Context) error {
					_, err := rpc.Count(c, &api.CountRequest{Project: "shop", Collection: "items", Filter: []byte(`{"v":1}`)})
					return err
				}},
				{"Aggregate", func(c context.Context) error {
					return opened(api.NewFolioClient(s.conn).Aggregate(c, &api.AggregateRequest{Project: "shop", Collection: "items", GroupBy: []string{"v"}, Fields: []byte(`{"n":{"$count":{}}}`)}))
				}},
				{"Explain", func(c context.Context) error {
					_, err := rpc.Explain(c, &api.ReadRequest{Project: "shop", Collection: "items", Filter: []byte(`{"v":1}`)})
					return err
				}},
				{"Search", func(c context.Context) error {
					return opened(rpc.Search(c, &api.SearchRequest{Project: "shop", Collection: "items", Q: "x"}))
				}},
				{"Events", func(c context.Context) error {
					return opened(rpc.Events(c, &api.EventsRequest{Db: "shop", Collection: "items"}))
				}},
				{"Subscribe", func(c context.Context) error {
					return opened(rpc.Subscribe(c, &api.SubscribeRequest{Db: "shop", Collection: "msgs"}))
				}},
				{"BeginTransaction", func(c context.Context) error {
					return inTx(c, func(tx context.Context) error {
						_, err := rpc.RollbackTransaction(tx, &api.RollbackTransactionRequest{Project: "shop"}) // frees the node's slot
						return err
					})
				}},
				{"CommitTransaction", func(c context.Context) error {
					commit := func(c context.Context) error {
						_, err := rpc.CommitTransaction(c, &api.CommitTransactionRequest{Project: "shop"})
						return err
					}
					if !allowed("BeginTransaction") {
						return commit(c) // refused before it looks for a transaction
					}
					return inTx(c, commit)
				}},
				{"RollbackTransaction", func(c context.Context) error {
					rollback := func(c context.Context) error {
						_, err := rpc.RollbackTransaction(c, &api.RollbackTransactionRequest{Project: "shop"})
						return err
					}
					if !allowed("BeginTransaction") {
						return rollback(c)
					}
					return inTx(c, rollback)
				}},

				{"CreateDatabase", func(c context.Context) error {
					_, err := rpc.CreateDatabase(c, &api.CreateDatabaseRequest{Db: "db_" + w})
					return err
				}},
				{"CreateOrUpdateCollection", func(c context.Context) error {
					_, err := rpc.CreateOrUpdateCollection(c, &api.CreateOrUpdateCollectionRequest{Project: "shop", Collection: "c_" + w,
						Schema: []byte(`{"title":"c_` + w + `","properties":{"id":{"type":"string"}},"primary_key":["id"]}`)})
					return err
				}},
				{"Insert", func(c context.Context) error {
					_, err := rpc.Insert(c, &api.InsertRequest{Project: "shop", Collection: "items", Documents: [][]byte{[]byte(`{"id":"` + w + `","v":2}`)}})
					return err
				}},
				{"Replace", func(c context.Context) error {
					_, err := rpc.Replace(c, &api.ReplaceRequest{Project: "shop", Collection: "items", Documents: [][]byte{[]byte(`{"id":"` + w + `","v":3}`)}})
					return err
				}},
				{"Update", func(c context.Context) error {
					_, err := rpc.Update(c, &api.UpdateRequest{Project: "shop", Collection: "items", Filter: []byte(`{"id":"` + w + `"}`), Fields: []byte(`{"$set":{"v":4}}`)})
					return err
				}},
				{"Delete", func(c context.Context) error {
					_, err := rpc.Delete(c, &api.DeleteRequest{Project: "shop", Collection: "items", Filter: []byte(`{"id":"` + w + `"}`)})
					return err
				}},
				{"Publish", func(c context.Context) error {
					_, err := rpc.Publish(c, &api.PublishRequest{Db: "shop", Collection: "msgs", Messages: [][]byte{[]byte(`{"text":"` + w + `"}`)}})
					return err
				}},
				{"Import", func(c context.Context) error {
					_, err := rpc.Import(c, &api.ImportRequest{Project: "shop", Collection: "items", Documents: [][]byte{[]byte(`{"id":"imported by ` + w + `","v":5}`)}})
					return err
				}},
				{"BuildCollectionIndex", func(c context.Context) error {
					_, err := rpc.BuildCollectionIndex(c, &api.BuildCollectionIndexRequest{Project: "shop", Collection: "items"})
					return err
				}},
				{"BuildSearchIndex", func(c context.Context) error {
					_, err := rpc.BuildSearchIndex(c, &api.BuildCollectionSearchIndexRequest{Project: "shop", Collection: "items"})
					return err
				}},
				{"DropCollection", func(c context.Context) error {
					_, err := rpc.DropCollection(c, &api.DropCollectionRequest{Project: "shop", Collection: "c_" + w})
					return err
				}},
				{"DropDatabase", func(c context.Context) error {
					_, err := rpc.DropDatabase(c, &api.DropDatabaseRequest{Db: "db_" + w})
					return err
				}},

				{"ListProjects", func(c context.Context) error { _, err := rpc.ListProjects(c, &api.ListProjectsRequest{}); return err }},
				{"ListBranches", func(c context.Context) error {
					_, err := rpc.ListBranches(c, &api.ListBranchesRequest{Project: "shop"})
					return err
				}},
				{"CreateProject", func(c context.Context) error {
					_, err := rpc.CreateProject(c, &api.CreateProjectRequest{Project: "p_" + w})
					return err
				}},
				{"DeleteProject", func(c context.Context) error {
					_, err := rpc.DeleteProject(c, &api.DeleteProjectRequest{Project: "p_" + w})
					return err
				}},
				{"CreateBranch", func(c context.Context) error {
					_, err := rpc.CreateBranch(c, &api.CreateBranchRequest{Project: "shop", Branch: "b_" + w})
					return err
				}},
				{"DeleteBranch", func(c context.Context) error {
					_, err := rpc.DeleteBranch(c, &api.DeleteBranchRequest{Project: "shop", Branch: "b_" + w})
					return err
				}},
				{"CreateOrUpdateCollections", func(c context.Context) error {
					_, err := rpc.CreateOrUpdateCollections(c, &api.CreateOrUpdateCollectionsRequest{Project: "shop", Branch: "main",
						Schemas: [][]byte{[]byte(`{"title":"cs_` + w + `","properties":{"id":{"type":"string"}},"primary_key":["id"]}`)}})
					return err
				}},

				{"ListIndexes", func(c context.Context) error {
					_, err := searchClient.ListIndexes(c, &api.ListIndexesRequest{Project: "shop"})
					return err
				}},
				{"GetIndex", func(c context.Context) error {
					_, err := searchClient.GetIndex(c, &api.GetIndexRequest{Project: "shop", Name: "idx"})
					return err
				}},
				{"IndexGet", func(c context.Context) error {
					_, err := searchClient.Get(c, &api.GetDocumentRequest{Project: "shop", Index: "idx", Ids: []string{"x"}})
					return err
				}},
				{"IndexSearch", func(c context.Context) error {
					st, err := searchClient.Search(c, &api.SearchIndexRequest{Project: "shop", Index: "idx", Q: "x"})
					if err != nil {
						return err
					}
					_, err = st.Recv()
					return err
				}},
				{"CreateOrUpdateIndex", func(c context.Context) error {
					_, err := searchClient.CreateOrUpdateIndex(c, &api.CreateOrUpdateIndexRequest{Project: "shop", Name: "i_" + w,
						Schema: []byte(`{"title":"i_` + w + `","properties":{"name":{"type":"string"}}}`)})
					return err
				}},
				{"IndexCreate", func(c context.Context) error {
					_, err := searchClient.Create(c, &api.CreateDocumentRequest{Project: "shop", Index: "idx", Documents: [][]byte{[]byte(`{"id":"` + w + `"}`)}})
					return err
				}},
				{"IndexCreateByID", func(c context.Context) error {
					_, err := searchClient.CreateById(c, &api.CreateByIdRequest{Project: "shop", Index: "idx", Id: "by_" + w, Document: []byte(`{}`)})
					return err
				}},
				{"IndexCreateOrReplace", func(c context.Context) error {
					_, err := searchClient.CreateOrReplace(c, &api.CreateOrReplaceDocumentRequest{Project: "shop", Index: "idx", Documents: [][]byte{[]byte(`{"id":"` + w + `","name":"n"}`)}})
					return err
				}},
				{"IndexUpdate", func(c context.Context) error {
					_, err := searchClient.Update(c, &api.UpdateDocumentRequest{Project: "shop", Index: "idx", Documents: [][]byte{[]byte(`{"id":"` + w + `","name":"m"}`)}})
					return err
				}},
				{"IndexDelete", func(c context.Context) error {
					_, err := searchClient.Delete(c, &api.DeleteDocumentRequest{Project: "shop", Index: "idx", Ids: []string{w}})
					return err
				}},
				{"IndexDeleteByQuery", func(c context.Context) error {
					_, err := searchClient.DeleteByQuery(c, &api.DeleteByQueryRequest{Project: "shop", Index: "idx", Filter: []byte(`{"id":"by_` + w + `"}`)})
					return err
				}},
				{"DeleteIndex", func(c context.Context) error {
					_, err := searchClient.DeleteIndex(c, &api.DeleteIndexRequest{Project: "shop", Name: "i_" + w})
					return err
				}},

				{"ListCaches", func(c context.Context) error {
					_, err := caches.ListCaches(c, &api.ListCachesRequest{Project: "shop"})
					return err
				}},
				{"CacheGet", func(c context.Context) error {
					_, err := caches.Get(c, &api.GetRequest{Project: "shop", Name: "kc", Key: "k"})
					return err
				}},
				{"CacheKeys", func(c context.Context) error {
					st, err := caches.Keys(c, &api.KeysRequest{Project: "shop", Name: "kc"})
					if err != nil {
						return err
					}
					_, err = st.Recv()
					return err
				}},
				{"CreateCache", func(c context.Context) error {
					_, err := caches.CreateCache(c, &api.CreateCacheRequest{Project: "shop", Name: "c_" + w})
					return err
				}},
				{"CacheSet", func(c context.Context) error {
					_, err := caches.Set(c, &api.SetRequest{Project: "shop", Name: "kc", Key: w, Value: []byte(`"v"`)})
					return err
				}},
				{"CacheGetSet", func(c context.Context) error {
					_, err := caches.GetSet(c, &api.GetSetRequest{Project: "shop", Name: "kc", Key: w, Value: []byte(`"w"`)})
					return err
				}},
				{"CacheDel", func(c context.Context) error {
					_, err := caches.Del(c, &api.DelRequest{Project: "shop", Name: "kc", Key: w})
					return err
				}},
				{"DeleteCache", func(c context.Context) error {
					_, err := caches.DeleteCache(c, &api.DeleteCacheRequest{Project: "shop", Name: "c_" + w})
					return err
				}},

				{"ListApplications", func(c context.Context) error {
					_, err := users.ListApplications(c, &api.ListApplicationsRequest{})
					return err
				}},
				{"CreateApplication", func(c context.Context) error {
					_, err := users.CreateApplication(c, &api.CreateApplicationRequest{Name: "made by " + w})
					return err
				}},
				{"UpdateApplication", func(c context.Context) error {
					_, err := users.UpdateApplication(c, &api.UpdateApplicationRequest{Id: id, Name: "updated by " + w})
					return err
				}},
				{"RotateApplicationSecret", func(c context.Context) error {
					_, err := users.RotateApplicationSecret(c, &api.RotateApplicationSecretRequest{Id: id})
					return err
				}},
				{"DeleteApplication", func(c context.Context) error {
					_, err := users.DeleteApplication(c, &api.DeleteApplicationsRequest{Id: id})
					return err
				}},

				{"ListAppKeys", func(c context.Context) error {
					_, err := rpc.ListAppKeys(c, &api.ListAppKeysRequest{Project: "shop"})
					return err
				}},
				{"CreateAppKey", func(c context.Context) error {
					_, err := rpc.CreateAppKey(c, &api.CreateAppKeyRequest{Project: "shop", Name: "key by " + w, Role: "reader"})
					return err
				}},
				{"UpdateAppKey", func(c context.Context) error {
					_, err := rpc.UpdateAppKey(c, &api.UpdateAppKeyRequest{Project: "shop", Id: pk, Description: "updated by " + w})
					return err
				}},
				{"RotateAppKeySecret", func(c context.Context) error {
					_, err := rpc.RotateAppKeySecret(c, &api.RotateAppKeyRequest{Project: "shop", Id: pk})
					return err
				}},
				{"DeleteAppKey", func(c context.Context) error {
					_, err := rpc.DeleteAppKey(c, &api.DeleteAppKeyRequest{Project: "shop", Id: pk})
					return err
				}},
				{"ListGlobalAppKeys", func(c context.Context) error {
					_, err := rpc.ListGlobalAppKeys(c, &api.ListGlobalAppKeysRequest{})
					return err
				}},
				{"CreateGlobalAppKey", func(c context.Context) error {
					_, err := rpc.CreateGlobalAppKey(c, &api.CreateGlobalAppKeyRequest{Name: "global key by " + w, Role: "reader"})
					return err
				}},
				{"UpdateGlobalAppKey", func(c context.Context) error {
					_, err := rpc.UpdateGlobalAppKey(c, &api.UpdateGlobalAppKeyRequest{Id: gk, Description: "updated by " + w})
					return err
				}},
				{"RotateGlobalAppKeySecret", func(c context.Context) error {
					_, err := rpc.RotateGlobalAppKeySecret(c, &api.RotateGlobalAppKeySecretRequest{Id: gk})
					return err
				}},
				{"DeleteGlobalAppKey", func(c context.Context) error {
					_, err := rpc.DeleteGlobalAppKey(c, &api.DeleteGlobalAppKeyRequest{Id: gk})
					return err
				}},
				{"CreateInvitations", func(c context.Context) error {
					_, err := authc.CreateInvitations(c, &api.CreateInvitationsRequest{Invitations: []*api.InvitationInfo{{Email: w + "@example.com", Role: "reader"}}})
					return err
				}},
				{"ListInvitations", func(c context.Context) error {
					_, err := authc.ListInvitations(c, &api.ListInvitationsRequest{})
					return err
				}},
				{"DeleteInvitations", func(c context.Context) error {
					_, err := authc.DeleteInvitations(c, &api.DeleteInvitationsRequest{Email: w + "@example.com"})
					return err
				}},
				{"ListUsers", func(c context.Context) error {
					_, err := authc.ListUsers(c, &api.ListUsersRequest{})
					return err
				}},

				{"ListNamespaces", func(c context.Context) error {
					_, err := admins.ListNamespaces(c, &api.ListNamespacesRequest2022{})
					return err
				}},
				{"CreateNamespace", func(c context.Context) error {
					_, err := admins.CreateNamespace(c, &api.CreateNamespaceRequest2022{Name: "ns_" + w, Id: 100 + int32(len(w))})
					return err
				}},
				{"ListNamespaces", func(c context.Context) error {
					_, err := management.ListNamespaces(c, &api.ListNamespacesRequest{})
					return err
				}},
				{"CreateNamespace", func(c context.Context) error {
					_, err := management.CreateNamespace(c, &api.CreateNamespaceRequest{Name: "ns23_" + w})
					return err
				}},
				{"DeleteNamespace", func(c context.Context) error {
					_, err := management.DeleteNamespace(c, &api.DeleteNamespaceRequest{NamespaceId: "ns23_" + w})
					return err
				}},

				{"InsertUserMetadata", func(c context.Context) error {
					_, err := management.InsertUserMetadata(c, &api.InsertUserMetadataRequest{MetadataKey: "k_" + w, Value: []byte(`1`)})
					return err
				}},
				{"InsertUserMetadata", func(c context.Context) error {
					_, err := users.InsertUserMetadata(c, &api.InsertUserMetadataRequest{MetadataKey: "k22_" + w, Value: []byte(`1`)})
					return err
				}},
				{"GetUserMetadata", func(c context.Context) error {
					_, err := management.GetUserMetadata(c, &api.GetUserMetadataRequest{MetadataKey: "k_" + w})
					return err
				}},
				{"UpdateUserMetadata", func(c context.Context) error {
					_, err := management.UpdateUserMetadata(c, &api.UpdateUserMetadataRequest{MetadataKey: "k_" + w, Value: []byte(`2`)})
					return err
				}},
				{"InsertNamespaceMetadata", func(c context.Context) error {
					_, err := management.InsertNamespaceMetadata(c, &api.InsertNamespaceMetadataRequest{MetadataKey: "k_" + w, Value: []byte(`1`)})
					return err
				}},
				{"GetNamespaceMetadata", func(c context.Context) error {
					_, err := management.GetNamespaceMetadata(c, &api.GetNamespaceMetadataRequest{MetadataKey: "k_" + w})
					return err
				}},
				{"UpdateNamespaceMetadata", func(c context.Context) error {
					_, err := management.UpdateNamespaceMetadata(c, &api.UpdateNamespaceMetadataRequest{MetadataKey: "k_" + w, Value: []byte(`2`)})
					return err
				}},
				{"QuotaLimits", func(c context.Context) error {
					_, err := api.NewObservabilityClient(s.conn).QuotaLimits(c, &api.QuotaLimitsRequest{})
					return err
				}},
				{"QuotaUsage", func(c context.Context) error {
					_, err := api.NewObservabilityClient(s.conn).QuotaUsage(c, &api.QuotaUsageRequest{})
					return err
				}},
			}
		}
		for _, role := range roletest.Roles {
			allowed := func(op string) bool { return role.Allows(roletest.Need[op]) }
			for _, call := range calls(role, allowed) {
				need, ok := roletest.Need[call.op]
				if !ok || need == roletest.Open {
					t.Fatalf("%s: no role in the role table", call.op)
				}
				t.Run(string(role)+"/"+call.op, func(t *testing.T) {
					c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel() // ends an open stream
					err := call.make(as(c, tokens[role]))
					if allowed(call.op) {
						if err != nil {
							t.Fatalf("%s may call %s: %v", role, call.op, err)
						}
						return
					}
					want := fmt.Sprintf("an application with role '%s' may not make this call: it needs role '%s'", role, need)
					if code, msg, reason := rpcError(t, err); code != codes.PermissionDenied || msg != want || reason != "PERMISSION_DENIED" {
						t.Errorf("got %v %q (%s), want PermissionDenied %q", code, msg, reason, want)
					}
				})
			}
		}
		_, metrics, _ := httpDo(t, s.http1, "GET", s.base+"/metrics", "")
		roletest.CheckCovered(t, roletest.Reached(t, metrics, ops.TransportGRPC), ops.TransportGRPC, notOverGRPC...)

		// Another namespace's admin: acme's applications do not exist for it.
		_, otherToken := app(ownerToken, `{"name":"b","namespace":"beta","role":"admin"}`)
		other := as(ctx(t), otherToken)
		victim, _ := app(adminToken, `{"name":"kept","role":"reader"}`)
		for name, err := range map[string]error{
			"update": func() error {
				_, err := users.UpdateApplication(other, &api.UpdateApplicationRequest{Id: victim, Name: "taken"})
				return err
			}(),
			"rotate": func() error {
				_, err := users.RotateApplicationSecret(other, &api.RotateApplicationSecretRequest{Id: victim})
				return err
			}(),
			"delete": func() error {
				_, err := users.DeleteApplication(other, &api.DeleteApplicationsRequest{Id: victim})
				return err
			}(),
		} {
			if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "application '"+victim+"' doesn't exist" {
				t.Errorf("another namespace's admin, %s: %v %q", name, code, msg)
			}
		}
		list, err := users.ListApplications(as(ctx(t), adminToken), &api.ListApplicationsRequest{})
		if err != nil || !containsApp(list.Applications, victim, "kept") {
			t.Errorf("acme's application after another namespace's admin tried to change it: %v %v", list, err)
		}
	})
}

func containsApp(apps []*api.Application, id, name string) bool {
	for _, a := range apps {
		if a.Id == id && a.Name == name {
			return true
		}
	}
	return false
}
