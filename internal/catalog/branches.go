package catalog

import (
	"context"
	"sort"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// A database's branches (the 2023 API's): main is the database itself; any
// other branch is a database of its own, stored under a name that joins the
// database's and the branch's with branchSeparator. The separator holds '$',
// which no database or branch name may hold, so a branch's stored name
// never collides with a database a user named, and splits back into the
// two names one way only. Being a database, a branch has its own
// collections (so its own ids): documents, indexes, the search index, the
// change log's records and streams all keep it apart from main as they keep
// two databases apart. The original server stored its branches the same
// way (with the same separator).

// MainBranch is the branch that every database has: the database itself.
const MainBranch = "main"

const branchSeparator = "_$branch$_"

// MaxBranchNameLength bounds branch names. A branch is stored under its
// database's name, the separator and its own name: at most MaxNameLength +
// 10 + 64 bytes, well within a key.
const MaxBranchNameLength = 64

// branchRule: a letter or digit first, then letters, digits, '_', '-' or
// '.', at most MaxBranchNameLength bytes. The original checked nothing;
// this admits the usual names of git branches and releases ("feature-1",
// "pr_42", "v1.2") and nothing that could be mistaken for the separator.
func branchRule(name string) bool {
	if len(name) == 0 || len(name) > MaxBranchNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := isLetter(c) || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-' && c != '.') {
			return false
		}
	}
	return true
}

// CheckBranchName refuses a branch name the API does not allow. The empty
// name is main's, as in a request without a branch.
func CheckBranchName(name string) error {
	if name != "" && !branchRule(name) {
		return invalidBranch(name)
	}
	return nil
}

func invalidBranch(name string) error {
	return apierror.Errorf(apierror.InvalidArgument, "invalid branch name '%s': a branch name is 1 to %d letters, digits, '_', '-' or '.', starting with a letter or digit", name, MaxBranchNameLength)
}

// IsMainBranch reports whether branch names main: "" or "main".
func IsMainBranch(branch string) bool { return branch == "" || branch == MainBranch }

// BranchDatabase is the name a database's branch is stored under: the
// database's own name for main. The names must have been checked.
func BranchDatabase(db, branch string) string {
	if IsMainBranch(branch) {
		return db
	}
	return db + branchSeparator + branch
}

// SplitBranch is BranchDatabase's inverse: the database and branch that a
// stored name holds (MainBranch for a database's own name).
func SplitBranch(stored string) (db, branch string) {
	if db, branch, ok := strings.Cut(stored, branchSeparator); ok {
		return db, branch
	}
	return stored, MainBranch
}

// IsBranch reports whether a stored database name is a branch's.
func IsBranch(stored string) bool { return strings.Contains(stored, branchSeparator) }

// checkStoredName refuses a stored database name that is neither a
// database's nor a branch's: the catalog's own guard, since names reach it
// from the API and from BranchDatabase. A branch part of "" or main is
// refused too: BranchDatabase stores main as the database itself.
func checkStoredName(stored string) error {
	db, branch, isBranch := strings.Cut(stored, branchSeparator)
	if err := CheckDatabaseName(db); err != nil {
		return err
	}
	if isBranch && (IsMainBranch(branch) || !branchRule(branch)) {
		return invalidBranch(branch)
	}
	return nil
}

// noDatabase is the error of a database that is not there. The original's
// wording, which clients match; ops rewords it for branches and projects
// (IsNoDatabase).
func noDatabase(name string) error {
	return apierror.Errorf(apierror.NotFound, "database doesn't exist '%s'", name)
}

// IsNoDatabase reports whether err is the catalog's answer for the stored
// database name, not being there (not a collection's, nor another
// database's).
func IsNoDatabase(err error, name string) bool {
	e, ok := apierror.From(err)
	return ok && e.Code == apierror.NotFound && e.Message == "database doesn't exist '"+name+"'"
}

// CreateBranch creates a branch of database db in namespace ns: a database
// with a collection of the same name and schema as each of db's, empty. It
// fails with NOT_FOUND if db does not exist (IsNoDatabase of db), and with
// ALREADY_EXISTS if the branch does (main always does).
func (c *Catalog) CreateBranch(ctx context.Context, tx kv.Tx, ns int64, db, branch string) error {
	if err := CheckBranchName(branch); err != nil {
		return err
	}
	main, err := c.Database(ctx, tx, ns, db)
	if err != nil {
		return err
	}
	if IsMainBranch(branch) {
		return branchExists(branch)
	}
	var mainRec dbRecord
	if _, err := c.getJSON(ctx, tx, keyspace.Database(ns, db), &mainRec); err != nil {
		return err
	}
	stored := BranchDatabase(db, branch)
	if err := c.CreateDatabase(ctx, tx, ns, stored); err != nil {
		if apierror.CodeOf(err) == apierror.AlreadyExists {
			return branchExists(branch)
		}
		return err
	}
	if mainRec.SchemaVersion != 0 {
		// The branch starts at main's schema version, with no lowest
		// version, as the original's branches did (versions.go).
		if err := c.setBranchVersion(ctx, tx, keyspace.Database(ns, stored), mainRec.SchemaVersion); err != nil {
			return err
		}
	}
	created, err := c.Database(ctx, tx, ns, stored)
	if err != nil {
		return err
	}
	colls, err := c.ListCollections(ctx, tx, main)
	if err != nil {
		return err
	}
	for _, coll := range colls {
		// Each at the version its schema names, as in the original.
		if _, err := c.createOrUpdate(ctx, tx, created, coll.Name, coll.Schema.Raw(), true, false); err != nil {
			return err
		}
	}
	return nil
}

// setBranchVersion sets the schema version of the branch stored under key,
// just created.
func (c *Catalog) setBranchVersion(ctx context.Context, tx kv.Tx, key []byte, version int64) error {
	var rec dbRecord
	if _, err := c.getJSON(ctx, tx, key, &rec); err != nil {
		return err
	}
	rec.SchemaVersion = version
	return setJSON(tx, key, rec)
}

func branchExists(branch string) error {
	return apierror.Errorf(apierror.AlreadyExists, "branch already exist '%s'", branch)
}

// DeleteBranch drops a branch of database db with everything in it. Main
// cannot be deleted (INVALID_ARGUMENT, as in the original: drop the
// database instead); a branch that does not exist is NOT_FOUND, and so is
// db (IsNoDatabase of db).
func (c *Catalog) DeleteBranch(ctx context.Context, tx kv.Tx, ns int64, db, branch string) error {
	if err := CheckBranchName(branch); err != nil {
		return err
	}
	if _, err := c.Database(ctx, tx, ns, db); err != nil {
		return err
	}
	if IsMainBranch(branch) {
		return apierror.Errorf(apierror.InvalidArgument, "'main' database cannot be deleted.")
	}
	stored := BranchDatabase(db, branch)
	if err := c.DropDatabase(ctx, tx, ns, stored); err != nil {
		if IsNoDatabase(err, stored) {
			return NoBranch(branch)
		}
		return err
	}
	return nil
}

// NoBranch is the error of a branch that is not there, in the original's
// words.
func NoBranch(branch string) error {
	return apierror.Errorf(apierror.NotFound, "database branch doesn't exist '%s'", branch)
}

// Branches returns the names of database db's branches: main first, then
// the others in name order. NOT_FOUND if db does not exist.
func (c *Catalog) Branches(ctx context.Context, tx kv.Tx, ns int64, db string) ([]string, error) {
	if _, err := c.Database(ctx, tx, ns, db); err != nil {
		return nil, err
	}
	stored, err := c.branchDatabases(ctx, tx, ns, db)
	if err != nil {
		return nil, err
	}
	out := []string{MainBranch}
	for _, name := range stored {
		_, branch := SplitBranch(name)
		out = append(out, branch)
	}
	sort.Strings(out[1:])
	return out, nil
}

// branchDatabases returns the stored names of database db's branches other
// than main. It reads every database record of the namespace: they are
// few, and a branch's record does not sort next to its database's.
func (c *Catalog) branchDatabases(ctx context.Context, tx kv.Tx, ns int64, db string) ([]string, error) {
	all, err := c.scanDatabases(ctx, tx, keyspace.Databases(ns))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range all {
		if of, branch := SplitBranch(d.Name); of == db && branch != MainBranch {
			out = append(out, d.Name)
		}
	}
	return out, nil
}
