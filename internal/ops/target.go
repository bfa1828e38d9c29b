package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/session"
)

// target is the database a request is on: a database (the 2023 API's
// project) and one of its branches, with the name the catalog stores that
// branch under (catalog.BranchDatabase). Every call on a database's
// contents finds its storage through one.
type target struct {
	db     string
	branch string // "" or catalog.MainBranch: main
	stored string
}

// resolveNames checks a request's names and returns the database it is on. It
// checks its collection's name first (when hasColl), then its database's
// and its branch's, and then reports malformed: the order of the original,
// whose names came first (see Malformed). A request without a branch, or
// with "" (every 2022 request), is on main, the database itself.
//
// Every request that names a database goes through here, by
// Caller.resolve (which also refuses a project an app key does not
// reach), and then through inTx, inCollection or filtered with the target,
// which answer a database or branch that is not there in the API's words.
func resolveNames(db, branch, coll string, hasColl bool, malformed error) (target, error) {
	if err := checkNames(db, coll, hasColl, nil); err != nil {
		return target{}, err
	}
	if err := catalog.CheckBranchName(branch); err != nil {
		return target{}, err
	}
	if malformed != nil {
		return target{}, malformed
	}
	return target{db: db, branch: branch, stored: catalog.BranchDatabase(db, branch)}, nil
}

// resolve is resolve for caller c, whose token may reach one project
// only (an app key's): a request on another is refused.
func (c Caller) resolve(db, branch, coll string, hasColl bool, malformed error) (target, error) {
	t, err := resolveNames(db, branch, coll, hasColl, malformed)
	if err != nil {
		return target{}, err
	}
	return t, c.reach(db)
}

// reach refuses a request on database db (a project) of a caller whose
// token is an app key of another project, with the original's
// PERMISSION_DENIED. Every call that names a database checks it: through
// Caller.resolve, or after checkNames.
func (c Caller) reach(db string) error {
	if c.OnlyProject != "" && c.OnlyProject != db {
		return auth.ErrOtherProject(db)
	}
	return nil
}

// checkNames is checkNames for caller c (see reach).
func (c Caller) checkNames(db, coll string, hasColl bool, malformed error) error {
	if err := checkNames(db, coll, hasColl, malformed); err != nil {
		return err
	}
	return c.reach(db)
}

// mainOf is the target of a database's main branch, for the calls on a
// database itself (dropping it, creating or deleting one of its branches).
func mainOf(db string) target { return target{db: db, stored: db} }

// missing is the error of a request whose database (t.stored) the catalog
// did not find, read in tx: the project (or, in the 2022 API, the
// database) when that is not there, else the branch.
func (o *Ops) missing(ctx context.Context, tx kv.Tx, c Caller, t target) error {
	if !catalog.IsMainBranch(t.branch) {
		_, err := o.catalog.Database(ctx, tx, c.ns(), t.db)
		if err == nil {
			return catalog.NoBranch(t.branch)
		}
		if !catalog.IsNoDatabase(err, t.db) {
			return err
		}
	}
	return c.noDatabase(t.db)
}

// noDatabase is the error of a database that is not there, in the words of
// the API generation the caller speaks.
func (c Caller) noDatabase(db string) error {
	if c.Projects {
		return apierror.Errorf(apierror.NotFound, "project doesn't exist '%s'", db)
	}
	return apierror.Errorf(apierror.NotFound, "database doesn't exist '%s'", db)
}

// wrongDatabase words a request refused by its transaction for being on
// another database or branch (session.WrongDatabaseError) in the API's
// names rather than the stored ones: between two databases' mains, as the
// 2022 API always said it.
func wrongDatabase(err error) error {
	var wrong *session.WrongDatabaseError
	if !errors.As(err, &wrong) {
		return err
	}
	if !catalog.IsBranch(wrong.Bound) && !catalog.IsBranch(wrong.Asked) {
		return apierror.Errorf(apierror.InvalidArgument, "transaction %s belongs to database '%s', not '%s'", wrong.ID, wrong.Bound, wrong.Asked)
	}
	return apierror.Errorf(apierror.InvalidArgument, "transaction %s belongs to %s, not %s: a transaction is bound to the branch it began on",
		wrong.ID, describeStored(wrong.Bound), describeStored(wrong.Asked))
}

// describeStored names a stored database as the API knows it: a branch of
// a database.
func describeStored(stored string) string {
	db, branch := catalog.SplitBranch(stored)
	return fmt.Sprintf("branch '%s' of database '%s'", branch, db)
}
