package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

var bg = context.Background()

// fixture is a service on a fresh store, with a clock the test moves.
type fixture struct {
	store kv.Store
	svc   *Service
	now   time.Time
}

func newFixture(t *testing.T, open func(testing.TB) kv.Store) *fixture {
	f := &fixture{store: open(t), now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	f.svc = New(f.store, Config{HashCost: bcrypt.MinCost})
	f.svc.nowFunc = func() time.Time { return f.now }
	return f
}

func (f *fixture) run(t *testing.T, fn func(tx kv.Tx) error) {
	t.Helper()
	if _, err := kv.Run(bg, f.store, fn); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) createApp(t *testing.T, ns Namespace, role Role) *Application {
	t.Helper()
	var app *Application
	f.run(t, func(tx kv.Tx) error {
		var err error
		app, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "app " + string(role), Namespace: ns, Role: role})
		return err
	})
	return app
}

func (f *fixture) token(t *testing.T, app *Application) *Tokens {
	t.Helper()
	tok, err := f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: app.Secret, From: "10.0.0.1"})
	if err != nil {
		t.Fatalf("token for %s: %v", app.ID, err)
	}
	return tok
}

func wantCode(t *testing.T, err error, code apierror.Code, msg string) {
	t.Helper()
	if apierror.CodeOf(err) != code || (msg != "" && !strings.Contains(err.Error(), msg)) {
		t.Fatalf("error %v, want %s containing %q", err, code, msg)
	}
}

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		r, need Role
		ok      bool
	}{
		{RoleReader, RoleReader, true}, {RoleReader, RoleEditor, false},
		{RoleEditor, RoleReader, true}, {RoleEditor, RoleEditor, true}, {RoleEditor, RoleAdmin, false},
		{RoleAdmin, RoleEditor, true}, {RoleAdmin, RoleAdmin, true}, {RoleAdmin, RoleOwner, false},
		{RoleOwner, RoleOwner, true}, {RoleOwner, RoleReader, true},
		{"", RoleReader, false}, {"root", RoleReader, false},
	} {
		if got := tc.r.Allows(tc.need); got != tc.ok {
			t.Errorf("%q allows %q = %v, want %v", tc.r, tc.need, got, tc.ok)
		}
	}
	if _, err := ParseRole("superuser"); apierror.CodeOf(err) != apierror.InvalidArgument {
		t.Fatalf("ParseRole of an unknown role: %v", err)
	}
}

func TestNamespaces(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		f.run(t, func(tx kv.Tx) error {
			if _, err := CreateNamespace(bg, tx, "acme", 7); err != nil {
				return err
			}
			ns, err := CreateNamespace(bg, tx, "beta", 0) // the next id
			if err == nil && ns.ID != 8 {
				t.Errorf("an id left to the server: %d, want 8", ns.ID)
			}
			return err
		})
		for _, tc := range []struct {
			name string
			id   int64
			code apierror.Code
			msg  string
		}{
			{"acme", 9, apierror.AlreadyExists, "namespace 'acme' already exists"},
			{"gamma", 7, apierror.AlreadyExists, "namespace id 7 is taken by 'acme'"},
			{"gamma", 1, apierror.AlreadyExists, "taken by 'default_namespace'"},
			{DefaultNamespaceName, 0, apierror.AlreadyExists, "already exists"},
			{"9lives", 0, apierror.InvalidArgument, "invalid namespace name"},
			{"", 0, apierror.InvalidArgument, "invalid namespace name"},
			{"a b", 0, apierror.InvalidArgument, "invalid namespace name"},
			{"gamma", -1, apierror.InvalidArgument, "invalid namespace id"},
			{"gamma", 1 << 31, apierror.InvalidArgument, "invalid namespace id"},
		} {
			_, err := kv.Run(bg, f.store, func(tx kv.Tx) error { _, err := CreateNamespace(bg, tx, tc.name, tc.id); return err })
			wantCode(t, err, tc.code, tc.msg)
		}
		f.run(t, func(tx kv.Tx) error {
			all, err := ListNamespaces(bg, tx)
			if err != nil {
				return err
			}
			var got []string
			for _, ns := range all {
				got = append(got, ns.Name+":"+string(rune('0'+ns.ID)))
			}
			if strings.Join(got, ",") != "default_namespace:1,acme:7,beta:8" {
				t.Errorf("namespaces %v", got)
			}
			if ns, err := LookupNamespace(bg, tx, "acme"); err != nil || ns.ID != 7 {
				t.Errorf("lookup acme: %+v %v", ns, err)
			}
			_, err = LookupNamespace(bg, tx, "nope")
			wantCode(t, err, apierror.NotFound, "namespace 'nope' doesn't exist")
			return nil
		})
	})
}

// A namespace is deleted only empty, the default never; its id is not
// given again, to a namespace the server numbers or one that asks for it.
func TestDeleteNamespace(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		var beta Namespace
		f.run(t, func(tx kv.Tx) (err error) {
			if _, err = CreateNamespace(bg, tx, "acme", 0); err != nil {
				return err
			}
			beta, err = CreateNamespace(bg, tx, "beta", 0)
			return err
		})
		app := f.createApp(t, beta, RoleReader)
		none := func(Namespace) ([]string, error) { return nil, nil }
		someDBs := func(ns Namespace) ([]string, error) {
			if ns.Name != "acme" {
				t.Errorf("the databases of %q asked, want acme's", ns.Name)
			}
			return []string{"a", "b", "c", "d", "e", "f"}, nil
		}
		for _, tc := range []struct {
			name  string
			holds func(Namespace) ([]string, error)
			code  apierror.Code
			msg   string
		}{
			{DefaultNamespaceName, none, apierror.InvalidArgument, "namespace 'default_namespace' cannot be deleted"},
			{"nope", none, apierror.NotFound, "namespace 'nope' doesn't exist"},
			{"acme", someDBs, apierror.FailedPrecondition, "namespace 'acme' holds 6 database(s) (a, b, c, d, e, …): drop them first"},
			{"beta", none, apierror.FailedPrecondition, "namespace 'beta' has 1 application(s) (" + app.ID + "): delete them first"},
		} {
			_, err := kv.Run(bg, f.store, func(tx kv.Tx) error { return DeleteNamespace(bg, tx, tc.name, tc.holds) })
			wantCode(t, err, tc.code, tc.msg)
		}
		// Refused, nothing changed: both are still there.
		f.run(t, func(tx kv.Tx) error {
			for _, name := range []string{"acme", "beta"} {
				if _, err := LookupNamespace(bg, tx, name); err != nil {
					t.Errorf("%s after a refused delete: %v", name, err)
				}
			}
			return nil
		})
		f.run(t, func(tx kv.Tx) error {
			return f.svc.DeleteApplication(bg, tx, Caller{Role: RoleOwner, Namespace: Default}, app.ID)
		})
		f.run(t, func(tx kv.Tx) error { return DeleteNamespace(bg, tx, "beta", none) })
		f.run(t, func(tx kv.Tx) error {
			_, err := LookupNamespace(bg, tx, "beta")
			wantCode(t, err, apierror.NotFound, "namespace 'beta' doesn't exist")
			// beta's id (the highest) is skipped by the next namespace;
			// asked for, it is refused.
			ns, err := CreateNamespace(bg, tx, "gamma", 0)
			if err != nil {
				return err
			}
			if ns.ID != beta.ID+1 {
				t.Errorf("the namespace after a deleted one has id %d, want %d (not %d again)", ns.ID, beta.ID+1, beta.ID)
			}
			_, err = CreateNamespace(bg, tx, "delta", beta.ID)
			wantCode(t, err, apierror.AlreadyExists, "was a deleted namespace's: ids are not reused")
			// The name is free again, with a new id.
			again, err := CreateNamespace(bg, tx, "beta", 0)
			if err == nil && again.ID == beta.ID {
				t.Errorf("beta made again took its old id %d", beta.ID)
			}
			return err
		})
	})
}

func TestApplications(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		var acme Namespace
		f.run(t, func(tx kv.Tx) error { var err error; acme, err = CreateNamespace(bg, tx, "acme", 0); return err })
		owner := Caller{App: "o", Namespace: Default, Role: RoleOwner}
		acmeAdmin := Caller{App: "a", Namespace: acme, Role: RoleAdmin}
		inDefault := f.createApp(t, Default, RoleEditor)
		inAcme := f.createApp(t, acme, RoleReader)

		// The secret is returned once and stored only as a hash.
		if len(inAcme.Secret) < 40 {
			t.Fatalf("secret %d bytes", len(inAcme.Secret))
		}
		f.run(t, func(tx kv.Tx) error {
			raw, err := tx.Get(bg, keyspace.Application(inAcme.ID))
			if bytes.Contains(raw, []byte(inAcme.Secret)) {
				t.Error("the stored record holds the secret")
			}
			return err
		})
		// Listing: an admin sees its namespace's, the owner every one,
		// and no listing has secrets.
		f.run(t, func(tx kv.Tx) error {
			for _, tc := range []struct {
				by   Caller
				want []string
			}{{acmeAdmin, []string{inAcme.ID}}, {owner, sortedIDs(inDefault.ID, inAcme.ID)}} {
				apps, err := f.svc.ListApplications(bg, tx, tc.by)
				if err != nil {
					return err
				}
				var got []string
				for _, a := range apps {
					got = append(got, a.ID)
					if a.Secret != "" {
						t.Error("a listed application has its secret")
					}
				}
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Errorf("%s lists %v, want %v", tc.by.Role, got, tc.want)
				}
			}
			return nil
		})
		// Another namespace's application is not there for an admin.
		for name, op := range map[string]func(tx kv.Tx) error{
			"update": func(tx kv.Tx) error {
				_, err := f.svc.UpdateApplication(bg, tx, acmeAdmin, ApplicationUpdate{ID: inDefault.ID, Name: "x"})
				return err
			},
			"rotate": func(tx kv.Tx) error { _, err := f.svc.RotateSecret(bg, tx, acmeAdmin, inDefault.ID); return err },
			"delete": func(tx kv.Tx) error { return f.svc.DeleteApplication(bg, tx, acmeAdmin, inDefault.ID) },
		} {
			_, err := kv.Run(bg, f.store, op)
			wantCode(t, err, apierror.NotFound, "application '"+inDefault.ID+"' doesn't exist")
			_ = name
		}
		// An admin cannot grant owner; it can grant editor.
		_, err := kv.Run(bg, f.store, func(tx kv.Tx) error {
			_, err := f.svc.UpdateApplication(bg, tx, acmeAdmin, ApplicationUpdate{ID: inAcme.ID, Name: "n", Role: RoleOwner})
			return err
		})
		wantCode(t, err, apierror.PermissionDenied, "cannot grant role 'owner'")
		f.run(t, func(tx kv.Tx) error {
			app, err := f.svc.UpdateApplication(bg, tx, acmeAdmin, ApplicationUpdate{ID: inAcme.ID, Name: "renamed", Description: "d", Role: RoleEditor})
			if err == nil && (app.Name != "renamed" || app.Role != RoleEditor || app.UpdatedBy != "a" || app.Namespace.Name != "acme") {
				t.Errorf("updated %+v", app)
			}
			return err
		})
		// Bad fields.
		for _, tc := range []NewApplication{
			{Name: "", Namespace: acme, Role: RoleReader},
			{Name: strings.Repeat("n", MaxAppNameBytes+1), Namespace: acme, Role: RoleReader},
			{Name: "x", Description: strings.Repeat("d", MaxAppDescriptionBytes+1), Namespace: acme, Role: RoleReader},
			{Name: "x", Namespace: acme, Role: "god"},
			{Name: "x", Namespace: acme, Role: RoleReader, Secret: "short"},
		} {
			_, err := kv.Run(bg, f.store, func(tx kv.Tx) error { _, err := f.svc.CreateApplication(bg, tx, tc); return err })
			wantCode(t, err, apierror.InvalidArgument, "")
		}
	})
}

func sortedIDs(a, b string) []string {
	if a > b {
		a, b = b, a
	}
	return []string{a, b}
}

func TestTokens(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		var acme Namespace
		f.run(t, func(tx kv.Tx) error { var err error; acme, err = CreateNamespace(bg, tx, "acme", 0); return err })
		app := f.createApp(t, acme, RoleEditor)
		tok := f.token(t, app)
		if tok.ExpiresIn != DefaultAccessTTL || tok.Access == "" || tok.Refresh == "" || tok.Access == tok.Refresh {
			t.Fatalf("tokens %+v", tok)
		}
		c, err := f.svc.Verify(bg, tok.Access)
		if err != nil || c.App != app.ID || c.Namespace.Name != "acme" || c.Namespace.ID != acme.ID || c.Role != RoleEditor {
			t.Fatalf("verify: %+v %v", c, err)
		}
		// The payload says who, where and as what; never the secret.
		payload := decodePayload(t, tok.Access)
		if payload["sub"] != app.ID || payload["ns"] != "acme" || payload["role"] != "editor" || payload["iss"] != "folio" || strings.Contains(tok.Access, app.Secret) {
			t.Fatalf("claims %v", payload)
		}

		// Requests refused.
		for _, tc := range []struct {
			name string
			req  TokenRequest
			code apierror.Code
			msg  string
		}{
			{"wrong secret", TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: "wrong"}, apierror.Unauthenticated, "invalid client credentials"},
			{"unknown id", TokenRequest{GrantType: GrantClientCredentials, ClientID: "nobody", ClientSecret: app.Secret}, apierror.Unauthenticated, "invalid client credentials"},
			{"no secret", TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID}, apierror.InvalidArgument, "client_id and client_secret are required"},
			{"other grant", TokenRequest{GrantType: "password", ClientID: app.ID, ClientSecret: app.Secret}, apierror.InvalidArgument, "unsupported grant_type, it has to be one of [refresh_token, client_credentials]"},
			{"no refresh token", TokenRequest{GrantType: GrantRefreshToken}, apierror.InvalidArgument, "refresh_token is required"},
			{"access token as refresh token", TokenRequest{GrantType: GrantRefreshToken, RefreshToken: tok.Access}, apierror.Unauthenticated, "its use is 'access', not 'refresh'"},
		} {
			tc.req.From = "10.9.9." + tc.name // a limiter bucket of its own
			_, err := f.svc.Token(bg, tc.req)
			wantCode(t, err, tc.code, tc.msg)
		}

		// Access tokens refused.
		other := New(f.store, Config{Audience: "elsewhere", HashCost: bcrypt.MinCost})
		other.nowFunc = f.svc.nowFunc
		foreign, err := other.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: app.Secret})
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(tok.Access, ".")
		for _, tc := range []struct{ name, token, msg string }{
			{"garbage", "garbage", "malformed"},
			{"empty", "", "malformed"},
			{"forged signature", parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 64)), "bad signature"},
			{"changed claims", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(mustDecode(t, parts[1])), `"editor"`, `"owner"`, 1))) + "." + parts[2], "bad signature"},
			{"alg none", unsigned(t, payload), "bad signature"},
			{"other audience", foreign.Access, "issued for another audience"},
			{"refresh token as access token", tok.Refresh, "its use is 'refresh', not 'access'"},
		} {
			_, err := f.svc.Verify(bg, tc.token)
			wantCode(t, err, apierror.Unauthenticated, tc.msg)
		}

		// Refresh: a new pair, until the secret is rotated.
		again, err := f.svc.Token(bg, TokenRequest{GrantType: GrantRefreshToken, RefreshToken: tok.Refresh})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Verify(bg, again.Access); err != nil {
			t.Fatal(err)
		}
		var rotated *Application
		f.run(t, func(tx kv.Tx) error {
			var err error
			rotated, err = f.svc.RotateSecret(bg, tx, Caller{App: "x", Namespace: acme, Role: RoleAdmin}, app.ID)
			return err
		})
		if rotated.Secret == "" || rotated.Secret == app.Secret {
			t.Fatal("rotation gave no new secret")
		}
		_, err = f.svc.Verify(bg, again.Access)
		wantCode(t, err, apierror.Unauthenticated, "token revoked")
		_, err = f.svc.Token(bg, TokenRequest{GrantType: GrantRefreshToken, RefreshToken: again.Refresh})
		wantCode(t, err, apierror.Unauthenticated, "refresh token revoked")
		_, err = f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: app.Secret, From: "10.0.0.2"})
		wantCode(t, err, apierror.Unauthenticated, "invalid client credentials")
		fresh := f.token(t, rotated)

		// Expiry, of a token verified (and so remembered) before.
		if _, err := f.svc.Verify(bg, fresh.Access); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(DefaultAccessTTL + time.Second)
		_, err = f.svc.Verify(bg, fresh.Access)
		wantCode(t, err, apierror.Unauthenticated, "expired")

		// Deleting the application revokes its tokens.
		later := f.token(t, rotated)
		f.run(t, func(tx kv.Tx) error { return f.svc.DeleteApplication(bg, tx, Caller{Role: RoleOwner}, app.ID) })
		_, err = f.svc.Verify(bg, later.Access)
		wantCode(t, err, apierror.Unauthenticated, "token revoked")
	})
}

func decodePayload(t *testing.T, token string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustDecode(t, strings.Split(token, ".")[1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unsigned is a token with the claims given and "alg": "none".
func unsigned(t *testing.T, payload map[string]any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims(payload)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// After a rotation the new key signs; tokens of the old one verify until
// they expire, and the old key is dropped once none it signed can be
// valid. A node that has not read the new key yet reads it when it meets
// a token signed with it.
func TestKeyRotation(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	app := f.createApp(t, Default, RoleReader)
	before := f.token(t, app)
	oldKid := kidOf(t, before.Access)

	otherNode := New(f.store, Config{HashCost: bcrypt.MinCost})
	otherNode.nowFunc = f.svc.nowFunc
	if _, err := otherNode.Verify(bg, before.Access); err != nil {
		t.Fatal(err)
	}

	newKid, err := f.svc.RotateSigningKey(bg)
	if err != nil {
		t.Fatal(err)
	}
	after := f.token(t, app)
	if kidOf(t, after.Access) != newKid || newKid == oldKid {
		t.Fatalf("signed with %s after rotating to %s (was %s)", kidOf(t, after.Access), newKid, oldKid)
	}
	f.now = f.now.Add(reloadEvery)
	for name, svc := range map[string]*Service{"this node": f.svc, "another node": otherNode} {
		for _, tok := range []*Tokens{before, after} {
			if _, err := svc.Verify(bg, tok.Access); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	// Past the refresh lifetime, a second rotation drops the first key.
	f.now = f.now.Add(DefaultRefreshTTL + 2*time.Minute)
	if _, err := f.svc.RotateSigningKey(bg); err != nil {
		t.Fatal(err)
	}
	f.run(t, func(tx kv.Tx) error {
		if _, err := tx.Get(bg, keyspace.SigningKey(oldKid)); err != kv.ErrNotFound {
			t.Errorf("the first key is still stored: %v", err)
		}
		if _, err := tx.Get(bg, keyspace.SigningKey(newKid)); err != nil {
			t.Errorf("the second key is gone: %v", err)
		}
		return nil
	})
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	var h map[string]any
	json.Unmarshal(mustDecode(t, strings.Split(token, ".")[0]), &h)
	kid, _ := h["kid"].(string)
	return kid
}

// Failed token requests are limited per client id and per address; past
// the limit even the right secret is refused until a failure drains.
func TestFailedTokenRequestsLimited(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	app := f.createApp(t, Default, RoleReader)
	bad := TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: "wrong", From: "10.0.1.1"}
	for range DefaultFailedPerMinute {
		_, err := f.svc.Token(bg, bad)
		wantCode(t, err, apierror.Unauthenticated, "")
	}
	right := TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: app.Secret, From: bad.From}
	_, err := f.svc.Token(bg, right)
	wantCode(t, err, apierror.ResourceExhausted, "too many failed token requests")
	if se, _ := apierror.From(err); se.RetryDelay <= 0 || se.RetryDelay > time.Minute {
		t.Fatalf("retry delay %v", se.RetryDelay)
	}
	// Neither another address nor another application from this one is
	// limited by these failures.
	f.token(t, app) // from 10.0.0.1
	other := f.createApp(t, Default, RoleReader)
	if _, err := f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: other.ID, ClientSecret: other.Secret, From: bad.From}); err != nil {
		t.Fatalf("another application from the same address: %v", err)
	}
	// Nor do failures spread over addresses add up.
	for i := range DefaultFailedPerMinute {
		bad.From = fmt.Sprintf("10.0.2.%d", i)
		_, err := f.svc.Token(bg, bad)
		wantCode(t, err, apierror.Unauthenticated, "")
	}
	f.token(t, app)
	// Once a failure has drained, the right secret works again.
	f.now = f.now.Add(time.Minute / DefaultFailedPerMinute)
	if _, err := f.svc.Token(bg, right); err != nil {
		t.Fatalf("after a failure drained: %v", err)
	}

	// An address is limited across client ids, at twice the rate.
	for i := range 2 * DefaultFailedPerMinute {
		_, err := f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: "guess" + string(rune('a'+i)), ClientSecret: "x", From: "10.6.6.6"})
		wantCode(t, err, apierror.Unauthenticated, "")
	}
	_, err = f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: other.ID, ClientSecret: other.Secret, From: "10.6.6.6"})
	wantCode(t, err, apierror.ResourceExhausted, "")
	_, err = f.svc.Token(bg, TokenRequest{GrantType: GrantRefreshToken, RefreshToken: "x", From: "10.6.6.6"})
	wantCode(t, err, apierror.ResourceExhausted, "")
}

func TestEnsureOwner(t *testing.T) {
	t.Run("generated", func(t *testing.T) {
		f := newFixture(t, backendtest.OpenPebble)
		path := filepath.Join(t.TempDir(), "owner.json")
		app, err := f.svc.EnsureOwner(bg, path)
		if err != nil || app == nil || app.Role != RoleOwner || app.Secret != "" {
			t.Fatalf("owner %+v, %v", app, err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("owner file: %v %v", st, err)
		}
		creds, err := readOwnerFile(path)
		if err != nil || creds.ClientID != app.ID {
			t.Fatalf("owner file holds %+v (%v)", creds, err)
		}
		c := f.tokenCaller(t, creds)
		if c.Role != RoleOwner || c.Namespace != Default {
			t.Fatalf("owner's caller %+v", c)
		}
		// Once there is an owner, nothing changes.
		if again, err := f.svc.EnsureOwner(bg, filepath.Join(t.TempDir(), "other.json")); err != nil || again != nil {
			t.Fatalf("second EnsureOwner: %+v %v", again, err)
		}
	})
	t.Run("chosen by the operator", func(t *testing.T) {
		f := newFixture(t, backendtest.OpenPebble)
		path := filepath.Join(t.TempDir(), "owner.json")
		creds := OwnerCredentials{ClientID: "ops-team", ClientSecret: "a secret of the operator's own"}
		if err := writeOwnerFile(path, creds); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.EnsureOwner(bg, path); err != nil {
			t.Fatal(err)
		}
		if c := f.tokenCaller(t, creds); c.App != "ops-team" {
			t.Fatalf("caller %+v", c)
		}
	})
	t.Run("bad file", func(t *testing.T) {
		f := newFixture(t, backendtest.OpenPebble)
		path := filepath.Join(t.TempDir(), "owner.json")
		os.WriteFile(path, []byte(`{"client_id":"x"}`), 0o600)
		if _, err := f.svc.EnsureOwner(bg, path); err == nil || !strings.Contains(err.Error(), "client_secret are required") {
			t.Fatalf("a file without a secret: %v", err)
		}
	})
}

func (f *fixture) tokenCaller(t *testing.T, creds OwnerCredentials) Caller {
	t.Helper()
	tok, err := f.svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Verify(bg, tok.Access)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// BenchmarkVerify is what authentication adds to every call: a token's
// signature and claims checked, its application found in the cache.
func BenchmarkVerify(b *testing.B) {
	store := backendtest.OpenPebble(b)
	svc := New(store, Config{HashCost: bcrypt.MinCost})
	var app *Application
	if _, err := kv.Run(bg, store, func(tx kv.Tx) error {
		var err error
		app, err = svc.CreateApplication(bg, tx, NewApplication{Name: "bench", Namespace: Default, Role: RoleEditor})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	tok, err := svc.Token(bg, TokenRequest{GrantType: GrantClientCredentials, ClientID: app.ID, ClientSecret: app.Secret})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.Verify(bg, tok.Access); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// An application whose secret an anonymous caller (of a server without
// authentication) got, by making it or rotating its secret, is one a start
// with authentication refuses, until someone signed in rotates it again.
func TestMadeWithoutAuth(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	anonymous := Caller{Namespace: Default, Role: RoleOwner} // ops.principal's
	owner := Caller{App: "ops", Namespace: Default, Role: RoleOwner}
	var made, kept, rotated *Application
	f.run(t, func(tx kv.Tx) (err error) {
		if made, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "made", Namespace: Default, Role: RoleOwner, WithoutAuth: true}); err != nil {
			return err
		}
		if kept, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "kept", Namespace: Default, Role: RoleEditor, CreatedBy: owner.App}); err != nil {
			return err
		}
		if rotated, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "rotated", Namespace: Default, Role: RoleEditor, CreatedBy: owner.App}); err != nil {
			return err
		}
		_, err = f.svc.RotateSecret(bg, tx, anonymous, rotated.ID)
		return err
	})
	madeWithoutAuth := func() []string {
		apps, err := f.svc.MadeWithoutAuth(bg)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range apps {
			names = append(names, a.Name)
		}
		return names
	}
	if got, want := madeWithoutAuth(), sortedNames(made, rotated); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("made without auth: %v, want %v (not %s)", got, want, kept.Name)
	}
	f.run(t, func(tx kv.Tx) error {
		_, err := f.svc.RotateSecret(bg, tx, owner, rotated.ID)
		return err
	})
	if got := madeWithoutAuth(); len(got) != 1 || got[0] != made.Name {
		t.Fatalf("after the owner rotated %s's secret, made without auth: %v, want [made]", rotated.Name, got)
	}
}

// sortedNames are the names of apps in the order of their ids.
func sortedNames(a, b *Application) []string {
	if a.ID > b.ID {
		a, b = b, a
	}
	return []string{a.Name, b.Name}
}

// An anonymous caller (of a server without authentication) who changes an
// application, its role above all, may have raised one whose secret it
// knows: a start with authentication refuses it as it refuses one made
// anonymously. A signed-in caller's change leaves no mark.
func TestUpdatedWithoutAuth(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	anonymous := Caller{Namespace: Default, Role: RoleOwner} // ops.principal's
	owner := Caller{App: "ops", Namespace: Default, Role: RoleOwner}
	var raised, renamed, signedIn *Application
	f.run(t, func(tx kv.Tx) (err error) {
		for _, a := range []**Application{&raised, &renamed, &signedIn} {
			if *a, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "reader", Namespace: Default, Role: RoleReader, CreatedBy: owner.App}); err != nil {
				return err
			}
		}
		if _, err = f.svc.UpdateApplication(bg, tx, anonymous, ApplicationUpdate{ID: raised.ID, Name: "raised", Role: RoleOwner}); err != nil {
			return err
		}
		if _, err = f.svc.UpdateApplication(bg, tx, anonymous, ApplicationUpdate{ID: renamed.ID, Name: "renamed"}); err != nil {
			return err
		}
		_, err = f.svc.UpdateApplication(bg, tx, owner, ApplicationUpdate{ID: signedIn.ID, Name: "signed in", Role: RoleEditor})
		return err
	})
	got := madeWithoutAuth(t, f)
	if want := []string{"raised", "renamed"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("made without auth: %v, want %v", got, want)
	}
	// A signed-in caller's later change does not clear the mark: the
	// secret may still be anyone's.
	f.run(t, func(tx kv.Tx) error {
		_, err := f.svc.UpdateApplication(bg, tx, owner, ApplicationUpdate{ID: raised.ID, Name: "raised", Role: RoleReader})
		return err
	})
	if got := madeWithoutAuth(t, f); !slices.Contains(got, "raised") {
		t.Fatalf("after a signed-in update, made without auth: %v, want raised still", got)
	}
}

// Versions before the mark (without_auth) stored an application made by
// the anonymous caller with no creator (created_by ""): such a record is
// taken for one made without authentication, unless it is the owner made
// from the owner file, marked or (stored by those versions) as
// EnsureOwner made it.
func TestMadeWithoutAuthBeforeTheMark(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	owner, err := f.svc.EnsureOwner(bg, filepath.Join(t.TempDir(), "owner.json"))
	if err != nil {
		t.Fatal(err)
	}
	legacy := func(id string, rec appRecord) {
		f.run(t, func(tx kv.Tx) error { return putApp(tx, id, rec) })
	}
	// As the versions before the mark stored them.
	legacy("anon1", appRecord{Name: "anonymous", NS: Default.Name, Role: RoleOwner, SecretGen: 1})
	legacy("oldowner", appRecord{Name: ownerName, Description: ownerDescription, NS: Default.Name, Role: RoleOwner, SecretGen: 1})
	legacy("signed", appRecord{Name: "signed in", NS: Default.Name, Role: RoleEditor, SecretGen: 1, CreatedBy: owner.ID, CreatedByOwner: true})
	if got, want := madeWithoutAuth(t, f), []string{"anonymous"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("made without auth: %v, want %v (not the owner %s, nor the old owner, nor one made signed in)", got, want, owner.ID)
	}
}

// madeWithoutAuth is the names of what MadeWithoutAuth returns, sorted.
func madeWithoutAuth(t *testing.T, f *fixture) []string {
	t.Helper()
	apps, err := f.svc.MadeWithoutAuth(bg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return names
}

// TestOwnerSeenAsAlias: where the owner made or changed an application,
// any caller but the owner sees "owner" rather than its id (half of its
// credentials); an application made or changed by nobody signed in (a
// server without authentication, whose caller has the owner's role) shows
// nobody, not the alias; the owner sees its own id. The HTTP side is
// apitest.TestOwnerIDHiddenFromAdmins; this one runs in a moment.
func TestOwnerSeenAsAlias(t *testing.T) {
	acme := Namespace{Name: "acme"}
	admin := Caller{App: "admin-id", Namespace: acme, Role: RoleAdmin}
	owner := Caller{App: "owner-id", Namespace: Default, Role: RoleOwner}
	for _, tc := range []struct {
		name                 string
		rec                  appRecord
		by                   Caller
		createdBy, updatedBy string
	}{
		{"owner's hand, seen by an admin", appRecord{CreatedBy: "owner-id", CreatedByOwner: true, UpdatedBy: "owner-id", UpdatedByOwner: true},
			admin, ownerAlias, ownerAlias},
		{"owner's hand, seen by the owner", appRecord{CreatedBy: "owner-id", CreatedByOwner: true, UpdatedBy: "owner-id", UpdatedByOwner: true},
			owner, "owner-id", "owner-id"},
		{"made by the owner, changed by the admin", appRecord{CreatedBy: "owner-id", CreatedByOwner: true, UpdatedBy: "admin-id"},
			admin, ownerAlias, "admin-id"},
		{"made by the admin, changed by the owner", appRecord{CreatedBy: "admin-id", UpdatedBy: "owner-id", UpdatedByOwner: true},
			admin, "admin-id", ownerAlias},
		{"made and changed by nobody signed in", appRecord{CreatedByOwner: true, UpdatedByOwner: true},
			admin, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.rec.seenBy(tc.by, "app-id", acme)
			if a.CreatedBy != tc.createdBy || a.UpdatedBy != tc.updatedBy {
				t.Errorf("created_by %q, updated_by %q; want %q, %q", a.CreatedBy, a.UpdatedBy, tc.createdBy, tc.updatedBy)
			}
		})
	}
}

// TestNamespaceIDsToTheLast: the API carries namespace ids as int32, and
// every one of them up to the largest can be given, asked for or picked;
// past it, a pick is refused as exhausted.
func TestNamespaceIDsToTheLast(t *testing.T) {
	f := newFixture(t, backendtest.OpenPebble)
	f.run(t, func(tx kv.Tx) error {
		if ns, err := CreateNamespace(bg, tx, "next_to_last", math.MaxInt32-1); err != nil || ns.ID != math.MaxInt32-1 {
			t.Fatalf("id %d asked for: %+v, %v", math.MaxInt32-1, ns, err)
		}
		if ns, err := CreateNamespace(bg, tx, "last", 0); err != nil || ns.ID != math.MaxInt32 {
			t.Fatalf("the last id picked: %+v, %v", ns, err)
		}
		_, err := CreateNamespace(bg, tx, "past_the_last", 0)
		wantCode(t, err, apierror.ResourceExhausted, "no namespace id is left")
		return nil
	})
}

// TestListSome: a refusal names up to five databases or applications, and
// says "…" only when there are more.
func TestListSome(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b", "c", "d", "e"}, "a, b, c, d, e"},
		{[]string{"a", "b", "c", "d", "e", "f"}, "a, b, c, d, e, …"},
	} {
		if got := listSome(tc.names); got != tc.want {
			t.Errorf("listSome(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

// Deleting an application deletes its metadata values, and no other's.
func TestDeleteApplicationClearsItsMetadata(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		gone, kept := f.createApp(t, Default, RoleEditor), f.createApp(t, Default, RoleEditor)
		f.run(t, func(tx kv.Tx) error {
			for _, app := range []string{gone.ID, kept.ID} {
				if err := tx.Set(keyspace.UserMetadata(Default.ID, app, "settings"), []byte(`{"a":1}`)); err != nil {
					return err
				}
			}
			return tx.Set(keyspace.NamespaceMetadata(Default.ID, "settings"), []byte(`1`))
		})
		owner := Caller{App: "o", Namespace: Default, Role: RoleOwner}
		f.run(t, func(tx kv.Tx) error { return f.svc.DeleteApplication(bg, tx, owner, gone.ID) })
		f.run(t, func(tx kv.Tx) error {
			for key, want := range map[string]bool{
				string(keyspace.UserMetadata(Default.ID, gone.ID, "settings")): false,
				string(keyspace.UserMetadata(Default.ID, kept.ID, "settings")): true,
				string(keyspace.NamespaceMetadata(Default.ID, "settings")):     true,
			} {
				_, err := tx.Get(bg, []byte(key))
				if found := err == nil; found != want {
					t.Errorf("%q after the delete: found %v (%v), want %v", key, found, err, want)
				}
			}
			return nil
		})
	})
}
