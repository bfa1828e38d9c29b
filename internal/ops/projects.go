package ops

import (
	"context"

	"github.com/foliodb/folio/internal/kv"
)

// The 2023 API's projects are the 2022 API's databases under another name:
// a database created as "shop" is project "shop", and the calls below are
// the database calls with the 2023 API's wording of their errors.

// CreateProject creates a project: a database, with its main branch.
func (o *Ops) CreateProject(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CreateProject")
	defer op.end(&err)
	if err != nil {
		return err
	}
	c.Projects = true
	return o.createDatabase(ctx, c, req)
}

// DeleteProject deletes a project with everything in it: its branches,
// their collections and documents.
func (o *Ops) DeleteProject(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteProject")
	defer op.end(&err)
	if err != nil {
		return err
	}
	c.Projects = true
	return o.dropDatabase(ctx, c, req)
}

// ListProjects lists the projects (the databases) in name order.
func (o *Ops) ListProjects(ctx context.Context, c Caller) (_ []DatabaseInfo, err error) {
	ctx, op, err := o.open(ctx, c, "ListProjects")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.listDatabases(ctx, c)
}

// BranchRequest names a branch of a project: the request of create and
// delete branch.
type BranchRequest struct {
	Malformed error // see Malformed
	DB        string
	Branch    string
}

// CreateBranch creates a branch of a project: as in the original, it
// starts with main's collections and their schemas, and no documents.
// Later changes to either side's schemas stay on that side.
func (o *Ops) CreateBranch(ctx context.Context, c Caller, req BranchRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CreateBranch")
	defer op.end(&err)
	if err != nil {
		return err
	}
	c.Projects = true
	if _, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed); err != nil {
		return err
	}
	return o.inTx(ctx, c, mainOf(req.DB), TxRef{}, func(tx kv.Tx) error {
		return o.catalog.CreateBranch(ctx, tx, c.ns(), req.DB, req.Branch)
	})
}

// DeleteBranch deletes a branch of a project with everything in it; main
// cannot be deleted (delete the project instead).
func (o *Ops) DeleteBranch(ctx context.Context, c Caller, req BranchRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteBranch")
	defer op.end(&err)
	if err != nil {
		return err
	}
	c.Projects = true
	if _, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed); err != nil {
		return err
	}
	return o.inTx(ctx, c, mainOf(req.DB), TxRef{}, func(tx kv.Tx) error {
		return o.catalog.DeleteBranch(ctx, tx, c.ns(), req.DB, req.Branch)
	})
}

// ListBranches names a project's branches: main first, then the others in
// name order.
func (o *Ops) ListBranches(ctx context.Context, c Caller, req DatabaseRequest) (_ []string, err error) {
	ctx, op, err := o.open(ctx, c, "ListBranches")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	c.Projects = true
	if err := c.checkNames(req.DB, "", false, req.Malformed); err != nil {
		return nil, err
	}
	var out []string
	err = o.inTx(ctx, c, mainOf(req.DB), TxRef{}, func(tx kv.Tx) (err error) {
		out, err = o.catalog.Branches(ctx, tx, c.ns(), req.DB)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
