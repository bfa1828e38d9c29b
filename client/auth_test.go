package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv/backendtest"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/tlstest"
)

// With authentication and TLS on: credentials are exchanged for a token,
// a token works as it is, and the refusals are typed errors.
func TestAuthenticationAndTLS(t *testing.T) {
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	cert, key, roots := tlstest.SelfSigned(t)
	n := startNode(t, backendtest.OpenPebble(t), node.Config{Addr: "127.0.0.1:0", Auth: true, OwnerFile: ownerFile,
		Tokens: auth.Config{HashCost: bcrypt.MinCost}, TLSCert: cert, TLSKey: key})
	defer n.Close()
	var owner auth.OwnerCredentials
	raw, err := os.ReadFile(ownerFile)
	must(t, err)
	must(t, json.Unmarshal(raw, &owner))
	url := "https://" + n.Addr().String()
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
		{"grpc://localhost:8081", client.Options{}},
		{"http://", client.Options{}},
		{"http://localhost:8081", client.Options{ApplicationID: "x"}},
	} {
		if _, err := client.Open(tc.url, tc.opts); err == nil {
			t.Errorf("Open(%q, %+v) did not fail", tc.url, tc.opts)
		}
	}
}
