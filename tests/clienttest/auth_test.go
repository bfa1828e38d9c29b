package clienttest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/tlstest"
)

// The official Go client against a server with authentication and TLS on,
// over gRPC and over HTTPS: the owner's credentials make an application
// through the client's own management API, and the application's id and
// secret (exchanged for tokens by the client) run the whole flow. A wrong
// secret, or no credentials, gets nowhere.
func TestOfficialGoClientWithAuthAndTLS(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		certFile, keyFile, roots := tlstest.SelfSigned(t)
		ownerFile := filepath.Join(t.TempDir(), "owner.json")
		srv := servetest.Start(t, servetest.Options{Backend: b,
			Args: []string{"--auth", "--owner-file", ownerFile, "--tls-cert", certFile, "--tls-key", keyFile}})
		var owner auth.OwnerCredentials
		raw, err := os.ReadFile(ownerFile)
		if err != nil || json.Unmarshal(raw, &owner) != nil {
			t.Fatalf("the owner file: %v %s", err, raw)
		}
		addr := srv.Addr
		tlsCfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}

		for _, protocol := range []string{driver.GRPC, driver.HTTP} {
			t.Run(protocol, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				// The client's management API, as the owner.
				var app *driver.Application
				err := withProtocol(protocol, func() error {
					url := addr
					if protocol == driver.HTTP {
						url = "https://" + addr
					}
					mgmt, err := driver.NewAuth(ctx, &config.Driver{URL: url, ApplicationId: owner.ClientID, ApplicationSecret: owner.ClientSecret, TLS: tlsCfg})
					if err != nil {
						return err
					}
					defer mgmt.Close()
					if app, err = mgmt.CreateApplication(ctx, "app-"+protocol, "made by the official client"); err != nil {
						return err
					}
					apps, err := mgmt.ListApplications(ctx)
					if err != nil {
						return err
					}
					found := false
					for _, a := range apps {
						found = found || (a.Id == app.Id && a.Secret == "")
					}
					if !found {
						t.Errorf("the new application is not listed (without its secret): %v", apps)
					}
					tok, err := mgmt.GetAccessToken(ctx, app.Id, app.Secret, "")
					if err != nil || tok.AccessToken == "" || tok.ExpiresIn != int32(auth.DefaultAccessTTL.Seconds()) {
						t.Errorf("the application's token: %+v %v", tok, err)
					}
					return nil
				})
				if err != nil {
					t.Fatalf("manage applications over %s: %v", protocol, err)
				}
				if app.Secret == "" {
					t.Fatal("the new application came without its secret")
				}

				// The application runs the whole flow.
				c, err := connectWith(addr, protocol, "https", config.Driver{ApplicationId: app.Id, ApplicationSecret: app.Secret, TLS: tlsCfg})
				if err != nil {
					t.Fatalf("connect as the application: %v", err)
				}
				defer c.Close()
				clientFlow(t, c, protocol, "shop_"+protocol)

				// A wrong secret gets nowhere.
				bad, err := connectWith(addr, protocol, "https", config.Driver{ApplicationId: app.Id, ApplicationSecret: "wrong", TLS: tlsCfg})
				if err == nil {
					defer bad.Close()
					_, err = bad.OpenDatabase(ctx, "nope", &User{})
				}
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), "invalid client credentials") {
					t.Errorf("a wrong secret: %v, want the token endpoint's refusal", err)
				}
			})
		}
	})
}
