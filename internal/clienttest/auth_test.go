package clienttest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"
	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv/backendtest"
	"github.com/foliodb/folio/internal/node"
)

// The official Go client against a node with authentication and TLS on,
// over gRPC and over HTTPS: the owner's credentials make an application
// through the client's own management API, and the application's id and
// secret (exchanged for tokens by the client) run the whole flow. A wrong
// secret, or no credentials, gets nowhere.
func TestOfficialGoClientWithAuthAndTLS(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		certFile, keyFile, roots := selfSigned(t)
		ownerFile := filepath.Join(t.TempDir(), "owner.json")
		n, err := node.Start(context.Background(), node.Config{Store: b.Open(t), Addr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second,
			Auth: true, OwnerFile: ownerFile, Tokens: auth.Config{HashCost: bcrypt.MinCost}, TLSCert: certFile, TLSKey: keyFile})
		if err != nil {
			t.Fatalf("start a node: %v", err)
		}
		t.Cleanup(func() { n.Close() })
		var owner auth.OwnerCredentials
		raw, err := os.ReadFile(ownerFile)
		if err != nil || json.Unmarshal(raw, &owner) != nil {
			t.Fatalf("the owner file: %v %s", err, raw)
		}
		addr := n.Addr().String()
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

// selfSigned makes a certificate for 127.0.0.1 and localhost, and the pool
// that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "folio test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}
