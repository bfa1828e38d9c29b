package auth

import (
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// Which projects a caller reaches, and which applications it sees: its
// token's scope (an app key of a project reaches that one) and the call's
// View (the app key calls see only keys of their own scope).
func TestScopeRules(t *testing.T) {
	acme := Namespace{ID: 7, Name: "acme"}
	for _, tc := range []struct {
		name    string
		by      Caller
		project string // what it asks to reach
		reaches bool
	}{
		{"namespace-wide reaches any", Caller{Namespace: acme, Role: RoleAdmin}, "shop", true},
		{"project key reaches its own", Caller{Namespace: acme, Role: RoleEditor, Project: "shop"}, "shop", true},
		{"project key not another", Caller{Namespace: acme, Role: RoleEditor, Project: "shop"}, "blog", false},
		{"project key not a prefix of its name", Caller{Namespace: acme, Role: RoleEditor, Project: "shop"}, "sho", false},
	} {
		if got := tc.by.Reaches(tc.project); got != tc.reaches {
			t.Errorf("%s: Reaches(%q) = %v, want %v", tc.name, tc.project, got, tc.reaches)
		}
	}

	global := appRecord{NS: "acme"}
	shopKey := appRecord{NS: "acme", Project: "shop"}
	blogKey := appRecord{NS: "acme", Project: "blog"}
	otherNS := appRecord{NS: "beta", Project: "shop"}
	admin := Caller{Namespace: acme, Role: RoleAdmin}
	shopAdmin := Caller{Namespace: acme, Role: RoleAdmin, Project: "shop"}
	owner := Caller{Namespace: Default, Role: RoleOwner}
	with := func(c Caller, v Scope) Caller { c.View = v; return c }
	for _, tc := range []struct {
		name string
		by   Caller
		rec  appRecord
		sees bool
	}{
		{"admin sees a global key", admin, global, true},
		{"admin sees a project's key", admin, shopKey, true},
		{"admin not another namespace's", admin, otherNS, false},
		{"owner sees another namespace's", owner, otherNS, true},
		{"project admin sees its project's key", shopAdmin, shopKey, true},
		{"project admin not another project's", shopAdmin, blogKey, false},
		{"project admin not a global key", shopAdmin, global, false},
		{"shop's keys view: shop's key", with(admin, KeysOf("shop")), shopKey, true},
		{"shop's keys view: not blog's", with(admin, KeysOf("shop")), blogKey, false},
		{"shop's keys view: not a global key", with(admin, KeysOf("shop")), global, false},
		{"global keys view: a global key", with(admin, KeysOf("")), global, true},
		{"global keys view: not a project's", with(admin, KeysOf("")), shopKey, false},
		{"owner's view narrows it too", with(owner, KeysOf("")), otherNS, false},
	} {
		if got := tc.by.sees(tc.rec); got != tc.sees {
			t.Errorf("%s: sees = %v, want %v", tc.name, got, tc.sees)
		}
	}
}

// A project's key is an application: its token names its project (read
// from its record, as its role is), it cannot have the owner's role, and
// the calls that see keys of one scope find no other's.
func TestProjectKeys(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b.Open)
		var key, global *Application
		f.run(t, func(tx kv.Tx) (err error) {
			if key, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "shop key", Namespace: Default, Role: RoleEditor, Project: "shop"}); err != nil {
				return err
			}
			global, err = f.svc.CreateApplication(bg, tx, NewApplication{Name: "global", Namespace: Default, Role: RoleEditor})
			return err
		})
		if key.Project != "shop" || global.Project != "" {
			t.Fatalf("projects %q and %q", key.Project, global.Project)
		}
		c, err := f.svc.Verify(bg, f.token(t, key).Access)
		if err != nil || c.Project != "shop" || c.Role != RoleEditor || c.App != key.ID {
			t.Fatalf("the key's caller %+v %v", c, err)
		}
		if c, err := f.svc.Verify(bg, f.token(t, global).Access); err != nil || c.Project != "" {
			t.Fatalf("the global key's caller %+v %v", c, err)
		}

		_, err = kv.Run(bg, f.store, func(tx kv.Tx) error {
			_, err := f.svc.CreateApplication(bg, tx, NewApplication{Name: "x", Namespace: Default, Role: RoleOwner, Project: "shop"})
			return err
		})
		wantCode(t, err, apierror.InvalidArgument, "cannot have role 'owner'")
		owner := Caller{Namespace: Default, Role: RoleOwner}
		_, err = kv.Run(bg, f.store, func(tx kv.Tx) error {
			_, err := f.svc.UpdateApplication(bg, tx, owner, ApplicationUpdate{ID: key.ID, Role: RoleOwner, Partial: true})
			return err
		})
		wantCode(t, err, apierror.InvalidArgument, "cannot have role 'owner'")

		// Seen through the global keys' view, the project's key is not
		// there; a partial update keeps what it does not name.
		admin := Caller{Namespace: Default, Role: RoleAdmin, View: KeysOf("")}
		_, err = kv.Run(bg, f.store, func(tx kv.Tx) error { return f.svc.DeleteApplication(bg, tx, admin, key.ID) })
		wantCode(t, err, apierror.NotFound, "doesn't exist")
		admin.View = KeysOf("shop")
		f.run(t, func(tx kv.Tx) error {
			up, err := f.svc.UpdateApplication(bg, tx, admin, ApplicationUpdate{ID: key.ID, Description: "new", Partial: true})
			if err == nil && (up.Name != "shop key" || up.Description != "new" || up.Project != "shop") {
				t.Errorf("after a partial update: %+v", up)
			}
			return err
		})
		f.run(t, func(tx kv.Tx) error {
			list, err := f.svc.ListApplications(bg, tx, admin)
			if err == nil && (len(list) != 1 || list[0].ID != key.ID) {
				t.Errorf("shop's keys: %v", list)
			}
			return err
		})
	})
}
