package finalclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tigrisdata/tigris-client-go/code"
	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"
	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/tigris"
)

// authEnv is a server with authentication, which the client reaches over
// TLS (it insists on TLS once it has credentials): the owner's credentials
// and the certificate to trust, from FOLIO_OWNER_ID, FOLIO_OWNER_SECRET
// and FOLIO_CA_FILE (tests/clienttest's TestFinalClientsAppKeys sets them).
type authEnv struct {
	env
	ownerID, ownerSecret string
	tls                  *tls.Config
}

func readAuthEnv(t *testing.T) authEnv {
	t.Helper()
	id, secret, ca := os.Getenv("FOLIO_OWNER_ID"), os.Getenv("FOLIO_OWNER_SECRET"), os.Getenv("FOLIO_CA_FILE")
	if id == "" || secret == "" || ca == "" {
		t.Skip("FOLIO_OWNER_ID, FOLIO_OWNER_SECRET and FOLIO_CA_FILE are not set: no server with authentication to run against")
	}
	e := readEnv(t)
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", ca)
	}
	return authEnv{env: e, ownerID: id, ownerSecret: secret, tls: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
}

// driverAs is the client's driver with an application's credentials.
func (e authEnv) driverAs(ctx context.Context, t *testing.T, id, secret string) driver.Driver {
	t.Helper()
	drv, err := driver.NewDriver(ctx, &config.Driver{URL: e.url, ClientID: id, ClientSecret: secret, TLS: e.tls, Branch: "main"})
	if err != nil {
		t.Fatalf("driver.NewDriver as %s: %v", id, err)
	}
	t.Cleanup(func() { drv.Close() })
	return drv
}

// TestAppKeyFlow is a deployment script and an application with the final
// client against a server with authentication: the owner makes two
// projects and a key of each with the client's app key calls, lists,
// updates and rotates them, and makes and drops a global key; the
// application gets its tokens from its project's key and makes data calls
// and cache calls; the other project's key is refused on this project's
// collections and caches with the original's code (PERMISSION_DENIED).
func TestAppKeyFlow(t *testing.T) {
	e := readAuthEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	owner := e.driverAs(ctx, t, e.ownerID, e.ownerSecret)
	other := e.project + "_other"
	for _, p := range []string{e.project, other} {
		if _, err := owner.CreateProject(ctx, p); err != nil {
			t.Fatalf("CreateProject %s: %v", p, err)
		}
	}

	key, err := owner.CreateAppKey(ctx, e.project, "shop key", "the shop's backend")
	if err != nil {
		t.Fatalf("CreateAppKey: %v", err)
	}
	if key.Id == "" || key.Secret == "" || key.Project != e.project || key.Name != "shop key" || key.CreatedAt == 0 {
		t.Errorf("the created key: %+v", key)
	}
	otherKey, err := owner.CreateAppKey(ctx, other, "other key", "")
	if err != nil {
		t.Fatalf("CreateAppKey of %s: %v", other, err)
	}
	keys, err := owner.ListAppKeys(ctx, e.project)
	if err != nil {
		t.Fatalf("ListAppKeys: %v", err)
	}
	ids := []string{}
	for _, k := range keys {
		ids = append(ids, k.Id)
		if k.Secret != "" {
			t.Errorf("a listed key with its secret: %+v", k)
		}
	}
	if !slices.Equal(ids, []string{key.Id}) {
		t.Errorf("the project's keys %v, want [%s]", ids, key.Id)
	}
	if up, err := owner.UpdateAppKey(ctx, e.project, key.Id, "shop key 2", "renamed"); err != nil || up.Name != "shop key 2" || up.Description != "renamed" {
		t.Errorf("UpdateAppKey: %+v %v", up, err)
	}

	// The application, with its project's key.
	c, err := tigris.NewClient(ctx, &tigris.Config{URL: e.url, Project: e.project, ClientID: key.Id, ClientSecret: key.Secret, TLS: e.tls})
	if err != nil {
		t.Fatalf("tigris.NewClient with the key: %v", err)
	}
	defer c.Close()
	db, err := c.OpenDatabase(ctx, &Customer{})
	if err != nil {
		t.Fatalf("OpenDatabase with the key: %v", err)
	}
	customers := tigris.GetCollection[Customer](db)
	if _, err := customers.Insert(ctx, &Customer{Email: "ann@example.com", Name: "Ann"}); err != nil {
		t.Errorf("Insert with the key: %v", err)
	}
	if got, err := customers.ReadOne(ctx, filter.Eq("email", "ann@example.com")); err != nil || got.Name != "Ann" {
		t.Errorf("ReadOne with the key: %+v %v", got, err)
	}

	// Another project's key reaches its own project only.
	stranger := e.driverAs(ctx, t, otherKey.Id, otherKey.Secret)
	_, err = stranger.DescribeDatabase(ctx, e.project)
	wantCode(t, "DescribeDatabase with another project's key", err, code.PermissionDenied)
	_, err = stranger.UseDatabase(e.project).ListCollections(ctx)
	wantCode(t, "ListCollections with another project's key", err, code.PermissionDenied)
	if _, err := stranger.UseDatabase(other).ListCollections(ctx); err != nil {
		t.Errorf("ListCollections of its own project: %v", err)
	}

	// Caches, with a token of the project's key; another project's key
	// reaches none of this project's caches and changes nothing in them,
	// and makes caches in its own project.
	mine := e.cachesAs(ctx, t, key.Id, key.Secret)
	mine.flow(ctx, t, e.project)
	kept := []byte(`{"cart":3}`)
	mine.create(ctx, t, e.project, "kept", "cart", kept)
	theirs := e.cachesAs(ctx, t, otherKey.Id, otherKey.Secret)
	theirs.wantDenied(ctx, t, e.project, "kept", "cart")
	if got := mine.get(ctx, t, e.project, "kept", "cart"); !bytes.Equal(got, kept) {
		t.Errorf("the project's cache after another project's key: %s, want %s", got, kept)
	}
	theirs.create(ctx, t, other, "theirs", "k", []byte(`1`))

	// Rotation: the new secret gets tokens, the old one none.
	rotated, err := owner.RotateAppKeySecret(ctx, e.project, key.Id)
	if err != nil || rotated.Secret == "" || rotated.Secret == key.Secret {
		t.Fatalf("RotateAppKeySecret: %+v %v", rotated, err)
	}
	if _, err := e.driverAs(ctx, t, key.Id, rotated.Secret).UseDatabase(e.project).ListCollections(ctx); err != nil {
		t.Errorf("ListCollections with the rotated secret: %v", err)
	}
	old, err := driver.NewDriver(ctx, &config.Driver{URL: e.url, ClientID: key.Id, ClientSecret: key.Secret, TLS: e.tls, Branch: "main"})
	if err == nil {
		defer old.Close()
		_, err = old.UseDatabase(e.project).ListCollections(ctx)
	}
	if err == nil {
		t.Errorf("the old secret still works after the rotation")
	}

	global, err := owner.CreateGlobalAppKey(ctx, "global", "")
	if err != nil || global.Secret == "" {
		t.Fatalf("CreateGlobalAppKey: %+v %v", global, err)
	}
	globals, err := owner.ListGlobalAppKeys(ctx)
	if err != nil || !slices.ContainsFunc(globals, func(k *driver.GlobalAppKey) bool { return k.Id == global.Id }) {
		t.Errorf("ListGlobalAppKeys: %v %v", globals, err)
	}
	if err := owner.DeleteGlobalAppKey(ctx, global.Id); err != nil {
		t.Errorf("DeleteGlobalAppKey: %v", err)
	}
	for _, k := range []*driver.AppKey{key, otherKey} {
		if err := owner.DeleteAppKey(ctx, k.Project, k.Id); err != nil {
			t.Errorf("DeleteAppKey %s: %v", k.Id, err)
		}
	}
}
