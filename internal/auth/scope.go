package auth

import "github.com/foliodb/folio/internal/apierror"

// An application reaches its whole namespace, or, as an app key of a
// project, that one project (a database of the namespace): its
// Application.Project, fixed when it is made. A token carries no scope of
// its own: verifying it reads the application's, as it reads its role
// (Verify), so both are what the record says.

// Scope picks applications by what they reach: every application (the
// zero Scope), or the keys of one project (Keys, Project) or the global
// ones (Keys, Project ""), as the app key calls list and change them.
type Scope struct {
	Keys    bool
	Project string
}

// KeysOf is the scope of a project's keys, or with "" the global ones.
func KeysOf(project string) Scope { return Scope{Keys: true, Project: project} }

// holds reports whether the application of rec is in the scope.
func (sc Scope) holds(rec appRecord) bool { return !sc.Keys || rec.Project == sc.Project }

// sees reports whether by may see (and, with the role, change) the
// application of rec: one of its namespace (any namespace's, for the
// owner), of its own project if its token has one, in the call's View.
// The owner's application is the owner's alone: an admin of the default
// namespace, where it lives, who could rotate its secret would become the
// owner.
func (by Caller) sees(rec appRecord) bool {
	switch {
	case by.Role != RoleOwner && (rec.NS != by.Namespace.Name || rec.Role == RoleOwner):
		return false
	case by.Project != "" && rec.Project != by.Project:
		return false
	}
	return by.View.holds(rec)
}

// checkScope refuses an app key of a project with the owner's role: the
// owner's reach is the whole server, which a key confined to a project
// cannot have.
func checkScope(project string, r Role) error {
	if project != "" && r == RoleOwner {
		return apierror.Errorf(apierror.InvalidArgument, "an app key of a project cannot have role 'owner': the owner's role reaches every namespace")
	}
	return nil
}

// ErrOtherProject is the original's answer to a caller whose token is
// confined to a project and names another: PERMISSION_DENIED.
func ErrOtherProject(project string) error {
	return apierror.Errorf(apierror.PermissionDenied, "You are not allowed to perform operation on this project: %s", project)
}

// Reaches reports whether the caller's token reaches the project (a
// database of its namespace): always, but for an app key of another
// project.
func (by Caller) Reaches(project string) bool { return by.Project == "" || by.Project == project }
