package grpcapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// Over gRPC as over HTTP: the token comes from Auth.GetAccessToken (under
// 2023's and TypeScript's name, and under alpha.32's, getAccessToken), goes in
// the "authorization" metadata, and is checked before every call, unary
// and streaming; the role decides; a call without a token is
// UNAUTHENTICATED with HTTP's message.
func TestAuthOverGRPC(t *testing.T) {
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
		tokenOf := func(id, secret string) string {
			t.Helper()
			var token string
			for _, method := range []string{api.Auth_GetAccessToken_FullMethodName, "/tigrisdata.auth.v1.Auth/getAccessToken"} {
				res := new(api.GetAccessTokenResponse)
				err := s.conn.Invoke(ctx(t), method, &api.GetAccessTokenRequest{GrantType: api.GrantType_CLIENT_CREDENTIALS, ClientId: id, ClientSecret: secret}, res)
				if err != nil {
					t.Fatalf("token from %s: %v", method, err)
				}
				if res.ExpiresIn != int32(auth.DefaultAccessTTL.Seconds()) || res.RefreshToken == "" || res.AccessToken == "" {
					t.Errorf("token response of %s: %v", method, res)
				}
				token = res.AccessToken
			}
			return token
		}
		as := func(token string) context.Context {
			return metadata.AppendToOutgoingContext(ctx(t), "authorization", "Bearer "+token)
		}
		ownerCtx := as(tokenOf(owner.ClientID, owner.ClientSecret))
		// Applications made through the User service.
		users := api.NewUserClient(s.conn)
		made := map[string]context.Context{}
		for _, name := range []string{"editor", "reader"} {
			res, err := users.CreateApplication(ownerCtx, &api.CreateApplicationRequest{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			made[name] = as(tokenOf(res.CreatedApplication.Id, res.CreatedApplication.Secret))
		}
		// gRPC's CreateApplication carries no role: the default, editor.
		if _, err := s.rpc.CreateDatabase(made["editor"], &api.CreateDatabaseRequest{Db: "shop"}); err != nil {
			t.Fatalf("an editor creates a database: %v", err)
		}
		// The role is set over HTTP (gRPC's messages have no field for it)
		// and applies to gRPC calls as to any.
		list, err := users.ListApplications(ownerCtx, &api.ListApplicationsRequest{})
		if err != nil || len(list.Applications) != 3 {
			t.Fatalf("list: %v %v", list, err)
		}
		var readerID string
		for _, a := range list.Applications {
			if a.Name == "reader" {
				readerID = a.Id
			}
		}
		code, body, _ := httpDo(t, s.http1, "POST", s.base+"/v1/users/applications/update", `{"id":"`+readerID+`","name":"reader","role":"reader"}`,
			"Authorization", "Bearer "+bearer(ownerCtx))
		if code != 200 {
			t.Fatalf("demote: %d %s", code, body)
		}
		_, err = s.rpc.CreateDatabase(made["reader"], &api.CreateDatabaseRequest{Db: "other"})
		if code, msg, _ := rpcError(t, err); code != codes.PermissionDenied || msg != "an application with role 'reader' may not make this call: it needs role 'editor'" {
			t.Errorf("a reader's create: %v %q", code, msg)
		}
		if _, err := s.rpc.ListDatabases(made["reader"], &api.ListDatabasesRequest{}); err != nil {
			t.Errorf("a reader lists: %v", err)
		}
		// No token: unary and streaming calls alike.
		_, err = s.rpc.ListDatabases(ctx(t), &api.ListDatabasesRequest{})
		if code, msg, reason := rpcError(t, err); code != codes.Unauthenticated || msg != "request unauthenticated with bearer" || reason != "UNAUTHENTICATED" {
			t.Errorf("no token: %v %q %s", code, msg, reason)
		}
		st, err := s.rpc.Read(ctx(t), &api.ReadRequest{Project: "shop", Collection: "c", Filter: []byte(`{}`)})
		if err == nil {
			_, err = st.Recv()
		}
		if code, _, _ := rpcError(t, err); code != codes.Unauthenticated {
			t.Errorf("a stream without a token: %v", err)
		}
		_, err = s.rpc.ListDatabases(as("garbage"), &api.ListDatabasesRequest{})
		if code, msg, _ := rpcError(t, err); code != codes.Unauthenticated || msg != "invalid token: malformed" {
			t.Errorf("a garbage token: %v %q", code, msg)
		}
		// Namespaces over Admin.
		admin := api.NewAdminClient(s.conn)
		if _, err := admin.CreateNamespace(ownerCtx, &api.CreateNamespaceRequest2022{Id: 3, Name: "acme"}); err != nil {
			t.Fatal(err)
		}
		nss, err := admin.ListNamespaces(ownerCtx, &api.ListNamespacesRequest2022{})
		if err != nil || len(nss.Namespaces) != 2 || nss.Namespaces[1].Name != "acme" || nss.Namespaces[1].Id != 3 {
			t.Fatalf("namespaces %v %v", nss, err)
		}
		_, err = admin.ListNamespaces(made["editor"], &api.ListNamespacesRequest2022{})
		if code, _, _ := rpcError(t, err); code != codes.PermissionDenied {
			t.Errorf("an editor lists namespaces: %v", err)
		}
		// The final API's Management: id the name, code the number.
		mgmt := api.NewManagementClient(s.conn)
		created, err := mgmt.CreateNamespace(ownerCtx, &api.CreateNamespaceRequest{Name: "beta", Code: 7})
		if err != nil || created.GetNamespace().GetCode() != 7 || created.GetNamespace().GetId() != "beta" ||
			created.GetMessage() != "Namespace created, with code=7, and id=beta" {
			t.Fatalf("create namespace: %v %v", created, err)
		}
		_, err = mgmt.CreateNamespace(ownerCtx, &api.CreateNamespaceRequest{Name: "gamma", Id: "other"})
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || msg != "'id' must be the namespace's name or left out: Folio names a namespace by its name" {
			t.Errorf("create with another id: %v %q", code, msg)
		}
		one, err := mgmt.ListNamespaces(ownerCtx, &api.ListNamespacesRequest{NamespaceId: "acme"})
		if err != nil || len(one.Namespaces) != 1 || one.Namespaces[0].Id != "acme" || one.Namespaces[0].Code != 3 {
			t.Fatalf("namespace acme: %v %v", one, err)
		}
		_, err = mgmt.ListNamespaces(ownerCtx, &api.ListNamespacesRequest{NamespaceId: "nowhere"})
		if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "namespace 'nowhere' doesn't exist" {
			t.Errorf("an unknown namespace: %v %q", code, msg)
		}
		if _, err := mgmt.DeleteNamespace(ownerCtx, &api.DeleteNamespaceRequest{NamespaceId: "beta"}); err != nil {
			t.Fatal(err)
		}
		_, err = mgmt.DeleteNamespace(ownerCtx, &api.DeleteNamespaceRequest{NamespaceId: "beta"})
		if code, _, _ := rpcError(t, err); code != codes.NotFound {
			t.Errorf("beta deleted twice: %v", err)
		}
		_, err = mgmt.DeleteNamespace(ownerCtx, &api.DeleteNamespaceRequest{NamespaceId: "default_namespace"})
		if code, _, _ := rpcError(t, err); code != codes.InvalidArgument {
			t.Errorf("the default namespace deleted: %v", err)
		}
	})
}

func bearer(ctx context.Context) string {
	md, _ := metadata.FromOutgoingContext(ctx)
	v := md.Get("authorization")
	return v[0][len("Bearer "):]
}
