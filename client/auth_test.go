package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/tlstest"
)

// With authentication and TLS on: credentials are exchanged for a token,
// a token works as it is, and the refusals are typed errors.
// Over HTTPS and over gRPC with TLS.
func TestAuthenticationAndTLS(t *testing.T) {
	for _, scheme := range []string{"https", "grpcs"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			authenticationAndTLS(t, scheme)
		})
	}
}

func authenticationAndTLS(t *testing.T, scheme string) {
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	cert, key, roots := tlstest.SelfSigned(t)
	n := startNode(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Addr = "127.0.0.1:0"
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
		nc.TLSCert = cert
		nc.TLSKey = key
	}))
	defer n.Close()
	var owner auth.OwnerCredentials
	raw, err := os.ReadFile(ownerFile)
	must(t, err)
	must(t, json.Unmarshal(raw, &owner))
	url := scheme + "://" + n.Addr().String()
	ctx := context.Background()
	tlsConf := &tls.Config{RootCAs: roots}

	c := open(t, url, client.Options{ApplicationID: owner.ClientID, ApplicationSecret: owner.ClientSecret, TLS: tlsConf})
	_, err = c.CreateDatabase(ctx, "shop")
	must(t, err)
	dbs, err := c.ListDatabases(ctx)
	must(t, err)
	if len(dbs) != 1 {
		t.Fatalf("databases: %+v", dbs)
	}

	_, err = open(t, url, client.Options{TLS: tlsConf}).ListDatabases(ctx)
	wantCode(t, err, client.Unauthenticated)
	_, err = open(t, url, client.Options{ApplicationID: owner.ClientID, ApplicationSecret: "wrong", TLS: tlsConf}).ListDatabases(ctx)
	wantCode(t, err, client.Unauthenticated)
	_, err = open(t, url, client.Options{Token: "not.a.token", TLS: tlsConf}).ListDatabases(ctx)
	wantCode(t, err, client.Unauthenticated)
	// The management calls, as the owner, then as an admin it makes.
	msg, err := c.CreateNamespace(ctx, "acme", 7)
	must(t, err)
	if msg != "Namespace created, with id=7, and name=acme" {
		t.Fatalf("CreateNamespace: %q", msg)
	}
	nss, err := c.ListNamespaces(ctx)
	must(t, err)
	if len(nss) != 2 || nss[1] != (client.Namespace{ID: 7, Name: "acme"}) {
		t.Fatalf("ListNamespaces: %+v", nss)
	}
	admin, err := c.CreateApplication(ctx, client.NewApplication{Name: "ops", Role: "admin", Namespace: "acme"})
	must(t, err)
	if admin.Secret == "" || admin.Role != "admin" || admin.Namespace != "acme" || admin.CreatedAt.IsZero() {
		t.Fatalf("CreateApplication: %+v", admin)
	}
	ac := open(t, url, client.Options{ApplicationID: admin.ID, ApplicationSecret: admin.Secret, TLS: tlsConf})
	reader, err := ac.CreateApplication(ctx, client.NewApplication{Name: "dashboard", Role: "reader"})
	must(t, err)
	_, err = ac.CreateApplication(ctx, client.NewApplication{Name: "boss", Role: "owner"})
	wantCode(t, err, client.PermissionDenied)
	apps, err := ac.ListApplications(ctx)
	must(t, err)
	if len(apps) != 2 || apps[0].Secret != "" {
		t.Fatalf("ListApplications: %+v", apps)
	}
	rotated, err := ac.RotateApplicationSecret(ctx, reader.ID)
	must(t, err)
	if rotated.Secret == "" || rotated.Secret == reader.Secret {
		t.Fatalf("RotateApplicationSecret: %+v", rotated)
	}
	_, err = open(t, url, client.Options{ApplicationID: reader.ID, ApplicationSecret: reader.Secret, TLS: tlsConf}).ListDatabases(ctx)
	wantCode(t, err, client.Unauthenticated)
	_, err = open(t, url, client.Options{ApplicationID: reader.ID, ApplicationSecret: rotated.Secret, TLS: tlsConf}).ListDatabases(ctx)
	must(t, err)
	must(t, ac.DeleteApplication(ctx, reader.ID))
	wantCode(t, ac.DeleteApplication(ctx, reader.ID), client.NotFound)
	_, err = ac.ListNamespaces(ctx)
	wantCode(t, err, client.PermissionDenied)
	// A namespace is deleted only empty: acme still has its admin.
	_, err = ac.DeleteNamespace(ctx, "acme")
	wantCode(t, err, client.PermissionDenied)
	_, err = c.DeleteNamespace(ctx, "acme")
	wantCode(t, err, client.FailedPrecondition)
	_, err = c.CreateNamespace(ctx, "empty", 0)
	must(t, err)
	msg, err = c.DeleteNamespace(ctx, "empty")
	must(t, err)
	if msg != "Namespace: empty deleted successfully" {
		t.Fatalf("DeleteNamespace: %q", msg)
	}
	_, err = c.DeleteNamespace(ctx, "empty")
	wantCode(t, err, client.NotFound)
	keyID, err := c.RotateSigningKey(ctx)
	if scheme == "grpcs" {
		// The gRPC API has no call for it.
		wantCode(t, err, client.Unimplemented)
	} else if must(t, err); keyID == "" {
		t.Fatal("RotateSigningKey: no key id")
	}
	// A token fetched before the rotation still works; the client renews
	// nothing until it expires.
	_, err = c.ListDatabases(ctx)
	must(t, err)

	// A token fetched by other means is sent as it is.
	form := neturl.Values{"grant_type": {"client_credentials"}, "client_id": {owner.ClientID}, "client_secret": {owner.ClientSecret}}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}}
	res, err := hc.PostForm("https://"+n.Addr().String()+"/v1/auth/token", form)
	must(t, err)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	must(t, json.NewDecoder(res.Body).Decode(&tok))
	res.Body.Close()
	dbs, err = open(t, url, client.Options{Token: tok.AccessToken, TLS: tlsConf}).ListDatabases(ctx)
	must(t, err)
	if len(dbs) != 1 {
		t.Fatalf("databases with a token: %+v", dbs)
	}

	// Without the certificate's root the connection fails before any API.
	_, err = open(t, url, client.Options{ApplicationID: owner.ClientID, ApplicationSecret: owner.ClientSecret}).ListDatabases(ctx)
	if err == nil || client.IsCode(err, client.Unauthenticated) {
		t.Fatalf("an untrusted certificate: %v", err)
	}
}

func TestOpenRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		url  string
		opts client.Options
	}{
		{"localhost:8081", client.Options{}},
		{"ftp://localhost:8081", client.Options{}},
		{"grpc://localhost:8081/v1", client.Options{}},
		{"grpc://", client.Options{}},
		{"http://", client.Options{}},
		{"http://localhost:8081", client.Options{ApplicationID: "x"}},
	} {
		if _, err := client.Open(tc.url, tc.opts); err == nil {
			t.Errorf("Open(%q, %+v) did not fail", tc.url, tc.opts)
		}
	}
}
