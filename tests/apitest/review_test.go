package apitest

import (
	"net/url"
	"strings"
	"testing"
)

// An admin of the default namespace, where the owner application lives,
// cannot take the owner's place: rotating the owner's secret (by the
// applications' call or the global app keys' one) would hand it the
// owner's credentials, and updating or deleting it would lock the owner
// out. Each is refused and the owner's token still works.
func TestAdminCannotTakeOverTheOwner(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		admin := s.appClient(t, s.owner, `{"name":"a","role":"admin"}`)
		owner := `{"id":"` + s.creds.ClientID + `"}`
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/v1/management/applications/rotate", owner},
			{"POST", "/v1/apps/keys/rotate", owner},
			{"POST", "/v1/management/applications/update", `{"id":"` + s.creds.ClientID + `","name":"x","role":"reader"}`},
			{"POST", "/v1/apps/keys/update", `{"id":"` + s.creds.ClientID + `","role":"reader"}`},
			{"DELETE", "/v1/management/applications/delete", owner},
			{"DELETE", "/v1/apps/keys/delete", owner},
		} {
			r := admin.do(t, c.method, c.path, c.body)
			if r.status < 400 {
				t.Errorf("%s %s by the default namespace's admin: %s", c.method, c.path, r)
			}
		}
		s.token(t, s.creds.ClientID, s.creds.ClientSecret)
		s.owner.ok(t, "GET", "/v1/projects", "")
	})
}

// A namespace deleted and made again under its name is a new tenant: a
// code its old admin handed out before the deletion does not let anyone
// into the new one. Invitations are keyed by the namespace's name, which
// is given again, unlike its id.
func TestInvitationDiesWithItsNamespace(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{}`)
		adminID, adminSecret := s.app(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		access, _ := s.token(t, adminID, adminSecret)
		admin := s.anon.as(access)
		made := admin.okObject(t, "POST", "/v1/auth/namespace/invitations/create", `{"invitations":[{"email":"eve@example.com","role":"admin"}]}`)
		code := made["created"].([]any)[0].(map[string]any)["code"].(string)

		s.owner.ok(t, "DELETE", "/v1/management/applications/delete", `{"id":"`+adminID+`"}`)
		s.owner.ok(t, "DELETE", "/v1/management/namespaces/acme", "")
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{}`)

		wantError(t, s.anon.do(t, "POST", "/v1/auth/namespace/invitations/verify", `{"email":"eve@example.com","code":"`+code+`"}`),
			401, "UNAUTHENTICATED", anyMessage)
	})
}

// A project's app keys go with the project, as the original's did
// (DeleteProject deleted them): a key of a deleted project must not reach
// a project made later under its name, perhaps by another team of the
// namespace, by the 2023 delete or the 2022 drop.
func TestProjectKeysDieWithTheirProject(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		admin := s.appClient(t, s.owner, `{"name":"a","role":"admin"}`)
		for _, drop := range []struct{ method, path string }{
			{"DELETE", projectPath("p1", "delete")},
			{"DELETE", dbPath("p1", "drop")},
		} {
			admin.ok(t, "POST", projectPath("p1", "create"), "")
			id, secret := s.appKey(t, admin, "/v1/projects/p1/apps/keys/create", `{"name":"k","role":"editor"}`)
			access, _ := s.token(t, id, secret)
			k := s.anon.as(access)
			k.ok(t, "GET", p23Path("p1", "branches"), "")

			admin.ok(t, drop.method, drop.path, "")
			admin.ok(t, "POST", projectPath("p1", "create"), "")
			if r := k.do(t, "GET", p23Path("p1", "branches"), ""); r.status != 401 {
				t.Errorf("after %s, the old project's key on the new p1: %s, want 401", drop.path, r)
			}
			if r := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}); r.status != 401 {
				t.Errorf("after %s, a token for the old project's key: %s, want 401", drop.path, r)
			}
			if got := admin.ok(t, "GET", "/v1/projects/p1/apps/keys", "").body; strings.Contains(string(got), id) {
				t.Errorf("after %s, the new p1 lists the old one's key: %s", drop.path, got)
			}
			admin.ok(t, drop.method, drop.path, "")
		}
	})
}
