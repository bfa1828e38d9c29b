package catalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestBranchNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"", true}, // main, as in a request without a branch
		{"main", true},
		{"feat", true},
		{"f", true},
		{"7", true},
		{"0", true}, // the digits' ends, first and after a letter
		{"9", true},
		{"b0", true},
		{"b9", true},
		{"v1.2", true},
		{"feature-1_b", true},
		{"Select", true}, // no reserved words: a branch names no code
		{strings.Repeat("b", catalog.MaxBranchNameLength), true},
		{strings.Repeat("b", catalog.MaxBranchNameLength+1), false},
		{"-feat", false},
		{".feat", false},
		{"_feat", false},
		{"a$b", false}, // the separator's '$' above all
		{"_$branch$_", false},
		{"a/b", false},
		{"a b", false},
		{"fé", false},
		{"a\x00", false},
	} {
		err := catalog.CheckBranchName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("branch name %q: %v, want ok %v", tc.name, err, tc.ok)
		} else if err != nil {
			wantStatus(t, err, apierror.InvalidArgument, "invalid branch name '"+tc.name+"'")
		}
	}
}

func TestBranchDatabase(t *testing.T) {
	for _, tc := range []struct{ db, branch, stored, splitBranch string }{
		{"shop", "", "shop", "main"},
		{"shop", "main", "shop", "main"},
		{"shop", "feat", "shop_$branch$_feat", "feat"},
		{"shop_branch_", "x", "shop_branch__$branch$_x", "x"},
	} {
		stored := catalog.BranchDatabase(tc.db, tc.branch)
		if stored != tc.stored {
			t.Errorf("BranchDatabase(%q, %q) = %q, want %q", tc.db, tc.branch, stored, tc.stored)
		}
		if db, branch := catalog.SplitBranch(stored); db != tc.db || branch != tc.splitBranch {
			t.Errorf("SplitBranch(%q) = %q, %q", stored, db, branch)
		}
		if catalog.IsBranch(stored) == (tc.splitBranch == "main") {
			t.Errorf("IsBranch(%q) = %v", stored, catalog.IsBranch(stored))
		}
		// No database name a user may give is a branch's stored name.
		if tc.splitBranch != "main" && catalog.CheckDatabaseName(stored) == nil {
			t.Errorf("%q is a valid database name", stored)
		}
	}
}

func TestBranches(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "shop")
		users := createColl(t, s, cat, "shop", "users", usersSchema)
		createColl(t, s, cat, "shop", "orders", schemaOf("orders"))
		run(t, s, func(tx kv.Tx) error { return cat.CreateBranch(ctx, tx, ns, "shop", "feat") })

		// The branch has main's collections and schemas, under ids of its own.
		stored := catalog.BranchDatabase("shop", "feat")
		run(t, s, func(tx kv.Tx) error {
			db, err := cat.Database(ctx, tx, ns, stored)
			if err != nil {
				return err
			}
			colls, err := cat.ListCollections(ctx, tx, db)
			if err != nil {
				return err
			}
			var names []string
			for _, c := range colls {
				names = append(names, c.Name)
				if c.Name == "users" && (c.ID == users.ID || string(c.Schema.Raw()) != string(users.Schema.Raw())) {
					t.Errorf("branch's users: id %d schema %s; main's id %d schema %s", c.ID, c.Schema.Raw(), users.ID, users.Schema.Raw())
				}
			}
			equal(t, "branch collections", names, []string{"orders", "users"})
			return nil
		})
		run(t, s, func(tx kv.Tx) error { return cat.CreateBranch(ctx, tx, ns, "shop", "alpha") })
		run(t, s, func(tx kv.Tx) error {
			branches, err := cat.Branches(ctx, tx, ns, "shop")
			equal(t, "branches", branches, []string{"main", "alpha", "feat"})
			return err
		})
		listed := func() (list, all []string) {
			run(t, s, func(tx kv.Tx) error {
				dbs, err := cat.ListDatabases(ctx, tx, ns)
				for _, d := range dbs {
					list = append(list, d.Name)
				}
				alls, err2 := cat.AllDatabases(ctx, tx)
				for _, d := range alls {
					all = append(all, d.Name)
				}
				return errors.Join(err, err2)
			})
			return list, all
		}
		list, all := listed()
		equal(t, "listed", list, []string{"shop"})
		equal(t, "all", all, []string{"shop", "shop_$branch$_alpha", "shop_$branch$_feat"})

		_, err := kv.Run(ctx, s, func(tx kv.Tx) error { return cat.CreateBranch(ctx, tx, ns, "shop", "feat") })
		wantStatus(t, err, apierror.AlreadyExists, "branch already exist 'feat'")
		_, err = kv.Run(ctx, s, func(tx kv.Tx) error { return cat.CreateBranch(ctx, tx, ns, "ghost", "feat") })
		if !catalog.IsNoDatabase(err, "ghost") {
			t.Errorf("branch of a database that is not there: %v", err)
		}
		_, err = kv.Run(ctx, s, func(tx kv.Tx) error { return cat.DeleteBranch(ctx, tx, ns, "shop", "main") })
		wantStatus(t, err, apierror.InvalidArgument, "'main' database cannot be deleted.")
		_, err = kv.Run(ctx, s, func(tx kv.Tx) error { return cat.DeleteBranch(ctx, tx, ns, "shop", "nope") })
		wantStatus(t, err, apierror.NotFound, "database branch doesn't exist 'nope'")
		// The catalog's own guard: a stored name whose branch part no
		// branch could have is refused, whoever built it (BranchDatabase
		// never makes one for "" or main).
		for _, bad := range []string{"shop_$branch$_-x", "shop_$branch$_a b", "shop_$branch$_", "shop_$branch$_main"} {
			t.Run(bad, func(t *testing.T) {
				_, err := kv.Run(ctx, s, func(tx kv.Tx) error { return cat.CreateDatabase(ctx, tx, ns, bad) })
				wantStatus(t, err, apierror.InvalidArgument, "invalid branch name")
				_, err = kv.Run(ctx, s, func(tx kv.Tx) error { _, err := cat.Database(ctx, tx, ns, bad); return err })
				wantStatus(t, err, apierror.InvalidArgument, "invalid branch name")
			})
		}

		run(t, s, func(tx kv.Tx) error { return cat.DeleteBranch(ctx, tx, ns, "shop", "alpha") })
		_, all = listed()
		equal(t, "all after deleting a branch", all, []string{"shop", "shop_$branch$_feat"})
		// Dropping the database drops its branches.
		run(t, s, func(tx kv.Tx) error { return cat.DropDatabase(ctx, tx, ns, "shop") })
		_, all = listed()
		equal(t, "all after dropping the database", all, nil)
	})
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}
