package node_test

import (
	"context"
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
		n, err := node.Start(context.Background(), node.Config{DataDir: dir, Addr: "127.0.0.1:0"})
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
	withAuth := node.Config{DataDir: dir, Addr: "127.0.0.1:0", Auth: true, OwnerFile: ownerFile,
		Tokens: auth.Config{HashCost: bcrypt.MinCost}}
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
