package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/session"
)

// resolve checks the names in the original's order (collection, database,
// then Folio's branch) before the body, and finds a branch's storage.
func TestResolve(t *testing.T) {
	bad := apierror.Errorf(apierror.InvalidArgument, "malformed JSON request: …")
	for _, tc := range []struct {
		db, branch, coll string
		malformed        error
		stored, err      string
	}{
		{db: "shop", coll: "users", stored: "shop"},
		{db: "shop", branch: "main", coll: "users", stored: "shop"},
		{db: "shop", branch: "feat", coll: "users", stored: "shop_$branch$_feat"},
		{db: "shop", branch: "v1.2", stored: "shop_$branch$_v1.2"},
		{db: "1shop", branch: "a$b", coll: "2users", malformed: bad, err: "invalid collection name"},
		{db: "1shop", branch: "a$b", coll: "users", malformed: bad, err: "invalid database name"},
		{db: "shop", branch: "a$b", coll: "users", malformed: bad, err: "invalid branch name 'a$b'"},
		{db: "shop_$branch$_feat", coll: "users", err: "invalid database name"},
		{db: "shop", branch: "feat", coll: "users", malformed: bad, err: "malformed JSON request: …"},
	} {
		got, err := resolveNames(tc.db, tc.branch, tc.coll, tc.coll != "", tc.malformed)
		if tc.err != "" {
			if e, ok := apierror.From(err); !ok || e.Code != apierror.InvalidArgument || !strings.HasPrefix(e.Message, tc.err) {
				t.Errorf("resolve(%q, %q, %q): %v, want %q", tc.db, tc.branch, tc.coll, err, tc.err)
			}
			continue
		}
		if err != nil || got.stored != tc.stored {
			t.Errorf("resolve(%q, %q, %q) = %+v, %v; want stored %q", tc.db, tc.branch, tc.coll, got, err, tc.stored)
		}
	}
}

// A request on another branch than its transaction's is told in the API's
// names; between mains, in the 2022 API's words.
func TestWrongDatabase(t *testing.T) {
	for _, tc := range []struct{ bound, asked, want string }{
		{"bank", "other", "transaction T belongs to database 'bank', not 'other'"},
		{"bank_$branch$_dev", "bank", "transaction T belongs to branch 'dev' of database 'bank', not branch 'main' of database 'bank': a transaction is bound to the branch it began on"},
	} {
		err := wrongDatabase(&session.WrongDatabaseError{ID: "T", Bound: tc.bound, Asked: tc.asked})
		if e, ok := apierror.From(err); !ok || e.Code != apierror.InvalidArgument || e.Message != tc.want {
			t.Errorf("%s → %s: %v, want %q", tc.bound, tc.asked, err, tc.want)
		}
	}
	other := errors.New("other")
	if wrongDatabase(other) != other {
		t.Error("wrongDatabase changed another error")
	}
}
