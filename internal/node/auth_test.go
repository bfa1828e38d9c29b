package node_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
)

// An application made while authentication was off may be anyone's (an
// intruder's owner, here): a node started with --auth over it refuses to
// start and names it, rather than let it in and ignore the operator's
// owner file. Once it is deleted, the owner file makes the owner: the
// operator's credentials work and the intruder's do not.
func TestAuthRefusesApplicationsMadeWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	withoutAuth := func() (*node.Node, string) {
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.DataDir = dir
			nc.Addr = "127.0.0.1:0"
		}))
		if err != nil {
			t.Fatal(err)
		}
		return n, "http://" + n.Addr().String()
	}
	n, base := withoutAuth()
	code, body := post(t, base, "/v1/management/applications/create", `{"name":"intruder","role":"owner"}`)
	if code != 200 {
		t.Fatalf("create an application without auth: %d %s", code, body)
	}
	id, secret := between(body, `"id":"`, `"`), between(body, `"secret":"`, `"`)
	n.Close()

	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	operator := auth.OwnerCredentials{ClientID: "ops", ClientSecret: "the operator's own secret"}
	if err := os.WriteFile(ownerFile, []byte(`{"client_id":"ops","client_secret":"`+operator.ClientSecret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
	})
	refused, err := node.Start(context.Background(), withAuth)
	if err == nil {
		refused.Close()
		t.Fatal("a node started with --auth over an owner application made without it")
	}
	for _, want := range []string{id, `"intruder"`, "role owner", "without --auth", "folio app delete"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}

	// Deleted (without auth, as it was made), it lets the node start.
	n, base = withoutAuth()
	req, _ := http.NewRequest("DELETE", base+"/v1/management/applications/delete", strings.NewReader(`{"id":"`+id+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("delete: %v %v", err, res)
	} else {
		res.Body.Close()
	}
	n.Close()
	n, err = node.Start(context.Background(), withAuth)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base = "http://" + n.Addr().String()
	for _, tc := range []struct {
		id, secret string
		want       int
	}{{operator.ClientID, operator.ClientSecret, 200}, {id, secret, 401}} {
		res, err := http.PostForm(base+"/v1/auth/token", url.Values{"grant_type": {"client_credentials"},
			"client_id": {tc.id}, "client_secret": {tc.secret}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("a token for %s: %d, want %d", tc.id, res.StatusCode, tc.want)
		}
	}
}

// Raising an application's role while authentication is off is as good as
// making it then: whoever holds its secret (a reader's holder who raised
// it, say) would be owner once --auth is back. A node started with --auth
// over it refuses to start and names it, but not the owner made from the
// owner file, which starts with --auth again and again.
func TestAuthRefusesRolesRaisedWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	if err := os.WriteFile(ownerFile, []byte(`{"client_id":"ops","client_secret":"the operator's own secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
	})
	start := func(cfg node.Config) (*node.Node, string) {
		t.Helper()
		n, err := node.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return n, "http://" + n.Addr().String()
	}

	n, base := start(withAuth)
	res, err := http.PostForm(base+"/v1/auth/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {"ops"}, "client_secret": {"the operator's own secret"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := io.ReadAll(res.Body)
	res.Body.Close()
	code, body := post(t, base, "/v1/management/applications/create", `{"name":"reader","role":"reader"}`,
		"Authorization", "Bearer "+between(string(tok), `"access_token":"`, `"`))
	if code != 200 {
		t.Fatalf("create a reader as the owner: %d %s", code, body)
	}
	id := between(body, `"id":"`, `"`)
	n.Close()

	// Restarted with --auth, the owner and the reader pass.
	n, _ = start(withAuth)
	n.Close()

	n, base = start(node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
	}))
	if code, body := post(t, base, "/v1/management/applications/update", `{"id":"`+id+`","name":"reader","role":"owner"}`); code != 200 {
		t.Fatalf("raise the reader to owner without auth: %d %s", code, body)
	}
	n.Close()

	refused, err := node.Start(context.Background(), withAuth)
	if err == nil {
		refused.Close()
		t.Fatal("a node started with --auth over an application raised to owner without it")
	}
	for _, want := range []string{id, `"reader"`, "role owner", "1 application(s)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ops (") {
		t.Errorf("the refusal %q names the owner made from the owner file", err)
	}
}
