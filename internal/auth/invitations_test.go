package auth

import (
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func (f *fixture) invite(t *testing.T, by Caller, email string, role Role) Invitation {
	t.Helper()
	var made []Invitation
	f.run(t, func(tx kv.Tx) (err error) {
		made, err = f.svc.CreateInvitations(bg, tx, by, []NewInvitation{{Email: email, Role: role, SentByName: "Ann"}})
		return err
	})
	if len(made) != 1 || made[0].Code == "" || made[0].Status != InvitationPending {
		t.Fatalf("invitation made: %+v", made)
	}
	return made[0]
}

func (f *fixture) verify(email, code string) (*Application, error) {
	var app *Application
	_, err := kv.Run(bg, f.store, func(tx kv.Tx) (err error) {
		app, err = f.svc.VerifyInvitation(bg, tx, email, code)
		return err
	})
	return app, err
}

// An invitation verifies once into an application of its namespace with
// its role, whose secret gets tokens; a second use, a wrong code, an
// older code of a replaced invitation and an expired one are refused.
func TestInvitationOneTimeUse(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		var acme Namespace
		f.run(t, func(tx kv.Tx) (err error) { acme, err = CreateNamespace(bg, tx, "acme", 0); return err })
		admin := Caller{App: "admin-app", Namespace: acme, Role: RoleAdmin}

		first := f.invite(t, admin, "ann@example.com", RoleEditor)
		again := f.invite(t, admin, "ann@example.com", RoleReader) // replaces the first
		if _, err := f.verify("ann@example.com", first.Code); apierror.CodeOf(err) != apierror.Unauthenticated {
			t.Fatalf("the replaced invitation's code: %v, want UNAUTHENTICATED", err)
		}
		if _, err := f.verify("bob@example.com", again.Code); apierror.CodeOf(err) != apierror.Unauthenticated {
			t.Fatalf("the code with another email: %v, want UNAUTHENTICATED", err)
		}
		app, err := f.verify("ann@example.com", again.Code)
		if err != nil {
			t.Fatal(err)
		}
		if app.Namespace.Name != "acme" || app.Role != RoleReader || app.Email != "ann@example.com" || app.Secret == "" || app.CreatedBy != "admin-app" {
			t.Fatalf("the application: %+v", app)
		}
		c, err := f.svc.Verify(bg, f.token(t, app).Access)
		if err != nil || c.Namespace.Name != "acme" || c.Role != RoleReader {
			t.Fatalf("its token's caller %+v %v", c, err)
		}
		_, err = f.verify("ann@example.com", again.Code)
		wantCode(t, err, apierror.Unauthenticated, "no pending invitation")

		f.run(t, func(tx kv.Tx) error {
			list, err := f.svc.ListInvitations(bg, tx, admin, InvitationAccepted)
			if err == nil && (len(list) != 1 || list[0].Email != "ann@example.com" || list[0].Code != "") {
				t.Errorf("accepted invitations: %+v", list)
			}
			users, err := f.svc.ListUsers(bg, tx, admin)
			if err == nil && (len(users) != 1 || users[0].Email != "ann@example.com") {
				t.Errorf("users: %+v", users)
			}
			return err
		})

		late := f.invite(t, admin, "cy@example.com", RoleEditor)
		f.now = f.now.Add(DefaultInvitationTTL)
		_, err = f.verify("cy@example.com", late.Code)
		wantCode(t, err, apierror.Unauthenticated, "expired")
		f.run(t, func(tx kv.Tx) error {
			list, err := f.svc.ListInvitations(bg, tx, admin, InvitationExpired)
			if err == nil && (len(list) != 1 || list[0].Email != "cy@example.com") {
				t.Errorf("expired invitations: %+v", list)
			}
			return err
		})
		// Deleted, an invitation's code verifies no more.
		gone := f.invite(t, admin, "dee@example.com", RoleEditor)
		f.run(t, func(tx kv.Tx) error {
			return f.svc.DeleteInvitations(bg, tx, admin, "dee@example.com", InvitationPending)
		})
		_, err = f.verify("dee@example.com", gone.Code)
		wantCode(t, err, apierror.Unauthenticated, "")
	})
}

// Two verifications of one code at once: one application, one refusal.
func TestInvitationVerifiedOnceUnderConcurrency(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		admin := Caller{App: "admin-app", Namespace: Default, Role: RoleAdmin}
		for round := range 5 {
			inv := f.invite(t, admin, "race@example.com", RoleEditor)
			const n = 4
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = f.verify(inv.Email, inv.Code) }()
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case apierror.CodeOf(err) != apierror.Unauthenticated:
					t.Errorf("round %d: a losing verification: %v, want UNAUTHENTICATED", round, err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d verifications succeeded, want 1: %v", round, won, errs)
			}
		}
		f.run(t, func(tx kv.Tx) error {
			users, err := f.svc.ListUsers(bg, tx, admin)
			if err == nil && len(users) != 5 {
				t.Errorf("%d applications made by 5 invitations", len(users))
			}
			return err
		})
	})
}

// Nobody invites with a role above its own; an app key confined to a
// project manages no invitations; malformed invitations are refused whole.
func TestInvitationRules(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		admin := Caller{App: "a", Namespace: Default, Role: RoleAdmin}
		for _, tc := range []struct {
			name string
			by   Caller
			list []NewInvitation
			code apierror.Code
			msg  string
		}{
			{"above the inviter's role", admin, []NewInvitation{{Email: "x@y.z", Role: RoleOwner}}, apierror.PermissionDenied, "cannot grant role 'owner'"},
			{"unknown role", admin, []NewInvitation{{Email: "x@y.z", Role: "boss"}}, apierror.InvalidArgument, "unknown role"},
			{"no email", admin, []NewInvitation{{Role: RoleReader}}, apierror.InvalidArgument, "email"},
			{"not an email", admin, []NewInvitation{{Email: "nobody", Role: RoleReader}}, apierror.InvalidArgument, "email"},
			{"none", admin, nil, apierror.InvalidArgument, "no invitations"},
			{"one bad of two", admin, []NewInvitation{{Email: "ok@y.z", Role: RoleReader}, {Email: "x@y.z", Role: RoleOwner}}, apierror.PermissionDenied, ""},
			{"a project's key", Caller{App: "k", Namespace: Default, Role: RoleAdmin, Project: "shop"},
				[]NewInvitation{{Email: "x@y.z", Role: RoleReader}}, apierror.PermissionDenied, "project 'shop'"},
		} {
			_, err := kv.Run(bg, f.store, func(tx kv.Tx) error {
				_, err := f.svc.CreateInvitations(bg, tx, tc.by, tc.list)
				return err
			})
			if apierror.CodeOf(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
			wantCode(t, err, tc.code, tc.msg)
		}
		// Nothing of the refused ones was written.
		f.run(t, func(tx kv.Tx) error {
			list, err := f.svc.ListInvitations(bg, tx, admin, "")
			if err == nil && len(list) != 0 {
				t.Errorf("invitations after refusals: %+v", list)
			}
			return err
		})
		// An invitation expires after the TTL, not before.
		inv := f.invite(t, admin, "t@y.z", RoleReader)
		if want := f.now.Add(DefaultInvitationTTL); !inv.ExpiresAt.Equal(want) {
			t.Errorf("expires at %v, want %v", inv.ExpiresAt, want)
		}
		f.now = f.now.Add(DefaultInvitationTTL - time.Second)
		if _, err := f.verify("t@y.z", inv.Code); err != nil {
			t.Errorf("a second before it expires: %v", err)
		}
	})
}
