package ops

import (
	"context"
	"errors"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
)

// Every call of the API opens and ends alike, around its own work:
//
//	func (o *Ops) Insert(ctx context.Context, c Caller, req WriteDocumentsRequest) (_ *WriteResult, err error) {
//		ctx, op, err := o.open(ctx, c, "Insert")
//		defer op.end(&err)
//		if err != nil {
//			return nil, err
//		}
//		... // check the request's names, then the rest; run in inTx, inCollection or filtered
//	}
//
// open notes the start, checks the caller's role against the calls table
// below and bounds the context by the request timeout; end gives an error
// without an API code its code (apiError), releases the context and
// reports the call to the observer. What differs from call to call (the
// names a request carries, the order of its checks, the transaction it
// runs in) is the call's own.

// call is what the calls table says of a call.
type call struct {
	// role is the role the caller needs (Anyone: none).
	role auth.Role
	// unbounded calls run past the request timeout: a backup takes the
	// time the disk takes; a stream stays open as long as its client, and
	// bounds only the lookup that opens it; health answers from a probe
	// the store bounds; info does no work.
	unbounded bool
}

// Anyone is the role of the calls a server that requires authentication
// answers without credentials: health, info and the token endpoint.
const Anyone auth.Role = ""

// calls is every call of the API, by its method name on Ops (which is also
// its name in the request metrics): the one place where the role each
// needs is decided. A method of Ops that takes a Caller is a call, and
// must have a line here (TestEveryCallIsInTheTable); the transports' role
// tests read the table (CallRoles), so a call missing from them fails too.
var calls = map[string]call{
	"Health":         {role: Anyone, unbounded: true},
	"Info":           {role: Anyone, unbounded: true},
	"GetAccessToken": {role: Anyone},
	// The invitee has no credentials yet: the code is one.
	"VerifyInvitation": {role: Anyone},

	"ListDatabases":       {role: auth.RoleReader},
	"DescribeDatabase":    {role: auth.RoleReader},
	"ListCollections":     {role: auth.RoleReader},
	"DescribeCollection":  {role: auth.RoleReader},
	"Read":                {role: auth.RoleReader},
	"Explain":             {role: auth.RoleReader},
	"Count":               {role: auth.RoleReader},
	"Aggregate":           {role: auth.RoleReader},
	"Search":              {role: auth.RoleReader},
	"Events":              {role: auth.RoleReader, unbounded: true},
	"Subscribe":           {role: auth.RoleReader, unbounded: true},
	"BeginTransaction":    {role: auth.RoleReader},
	"CommitTransaction":   {role: auth.RoleReader},
	"RollbackTransaction": {role: auth.RoleReader},
	"ListProjects":        {role: auth.RoleReader},
	"ListBranches":        {role: auth.RoleReader},
	"GetIndex":            {role: auth.RoleReader},
	"ListIndexes":         {role: auth.RoleReader},
	"IndexGet":            {role: auth.RoleReader},
	"IndexSearch":         {role: auth.RoleReader},
	"WhoAmI":              {role: auth.RoleReader},
	// Caches: reads for readers, writes and the caches themselves for
	// editors, as the original's roles had them.
	"ListCaches": {role: auth.RoleReader},
	"CacheGet":   {role: auth.RoleReader},
	"CacheKeys":  {role: auth.RoleReader},

	"CreateDatabase":           {role: auth.RoleEditor},
	"DropDatabase":             {role: auth.RoleEditor},
	"CreateOrUpdateCollection": {role: auth.RoleEditor},
	"DropCollection":           {role: auth.RoleEditor},
	"Insert":                   {role: auth.RoleEditor},
	"Replace":                  {role: auth.RoleEditor},
	"Update":                   {role: auth.RoleEditor},
	"Delete":                   {role: auth.RoleEditor},
	"Publish":                  {role: auth.RoleEditor},
	"Import":                   {role: auth.RoleEditor},
	// The index builds answer at once (Folio has nothing to build), but
	// the original's read-only role could not ask for one.
	"BuildCollectionIndex": {role: auth.RoleEditor},
	"BuildSearchIndex":     {role: auth.RoleEditor},
	// A project is a database, a branch a database of its own: creating
	// and deleting them is an editor's, as for databases.
	"CreateProject":             {role: auth.RoleEditor},
	"DeleteProject":             {role: auth.RoleEditor},
	"CreateBranch":              {role: auth.RoleEditor},
	"DeleteBranch":              {role: auth.RoleEditor},
	"CreateOrUpdateCollections": {role: auth.RoleEditor},
	// Search indexes: their schemas and documents, as collections'.
	"CreateOrUpdateIndex":  {role: auth.RoleEditor},
	"DeleteIndex":          {role: auth.RoleEditor},
	"IndexCreate":          {role: auth.RoleEditor},
	"IndexCreateByID":      {role: auth.RoleEditor},
	"IndexCreateOrReplace": {role: auth.RoleEditor},
	"IndexUpdate":          {role: auth.RoleEditor},
	"IndexDelete":          {role: auth.RoleEditor},
	"IndexDeleteByQuery":   {role: auth.RoleEditor},
	"CreateCache":          {role: auth.RoleEditor},
	"DeleteCache":          {role: auth.RoleEditor},
	"CacheSet":             {role: auth.RoleEditor},
	"CacheGetSet":          {role: auth.RoleEditor},
	"CacheDel":             {role: auth.RoleEditor},

	"CreateApplication":       {role: auth.RoleAdmin},
	"UpdateApplication":       {role: auth.RoleAdmin},
	"RotateApplicationSecret": {role: auth.RoleAdmin},
	"DeleteApplication":       {role: auth.RoleAdmin},
	"ListApplications":        {role: auth.RoleAdmin},
	// App keys are applications with a scope; invitations make them;
	// users are they.
	"CreateAppKey":             {role: auth.RoleAdmin},
	"UpdateAppKey":             {role: auth.RoleAdmin},
	"DeleteAppKey":             {role: auth.RoleAdmin},
	"ListAppKeys":              {role: auth.RoleAdmin},
	"RotateAppKeySecret":       {role: auth.RoleAdmin},
	"CreateGlobalAppKey":       {role: auth.RoleAdmin},
	"UpdateGlobalAppKey":       {role: auth.RoleAdmin},
	"DeleteGlobalAppKey":       {role: auth.RoleAdmin},
	"ListGlobalAppKeys":        {role: auth.RoleAdmin},
	"RotateGlobalAppKeySecret": {role: auth.RoleAdmin},
	"CreateInvitations":        {role: auth.RoleAdmin},
	"DeleteInvitations":        {role: auth.RoleAdmin},
	"ListInvitations":          {role: auth.RoleAdmin},
	"ListUsers":                {role: auth.RoleAdmin},

	// An application's own metadata is its own to keep, whatever its
	// role; its namespace's, shared by every application there, is read
	// by all and written by its admins.
	"GetUserMetadata":         {role: auth.RoleReader},
	"InsertUserMetadata":      {role: auth.RoleReader},
	"UpdateUserMetadata":      {role: auth.RoleReader},
	"GetNamespaceMetadata":    {role: auth.RoleReader},
	"InsertNamespaceMetadata": {role: auth.RoleAdmin},
	"UpdateNamespaceMetadata": {role: auth.RoleAdmin},
	// Every application may know its namespace's limits and usage.
	"QuotaLimits": {role: auth.RoleReader},
	"QuotaUsage":  {role: auth.RoleReader},

	"CreateNamespace":  {role: auth.RoleOwner},
	"ListNamespaces":   {role: auth.RoleOwner},
	"DeleteNamespace":  {role: auth.RoleOwner},
	"RotateSigningKey": {role: auth.RoleOwner},
	// Folio's: a hosted server's operator bounds its tenants.
	"SetNamespaceQuota": {role: auth.RoleOwner},
	// It reads every tenant's data and writes files on the server's
	// machine.
	"Backup": {role: auth.RoleOwner, unbounded: true},
}

// CallRoles returns the role each call of the API needs (Anyone: none), by
// its method name on Ops: what the transports' role tests check them
// against. The map is the caller's.
func CallRoles() map[string]auth.Role {
	out := make(map[string]auth.Role, len(calls))
	for name, c := range calls {
		out[name] = c.role
	}
	return out
}

// openCall is a call under way: what open started and end finishes. It
// is a value, kept in the call's frame by its deferred end, so a call's
// opening allocates nothing of its own but its bounded context.
type openCall struct {
	o         *Ops
	name      string
	transport string
	start     time.Time
	// ctx is the call's context (bounded unless the call is not), which
	// apiError reads: an error after its end is the deadline's or the
	// client's. cancel releases it.
	ctx    context.Context
	cancel context.CancelFunc
}

// errUnknownCall is the opening's answer to a name the calls table lacks:
// a bug, which TestEveryCallIsInTheTable keeps out; refused rather than
// let through without a role check.
var errUnknownCall = errors.New("ops: the call has no line in the calls table")

// open opens call name for caller c: it notes the start, checks c's role
// against the calls table, and returns the context the call's work runs
// under (ctx bounded by the request timeout, unless the table says the
// call is unbounded). Every API method calls it first and defers the end
// of what it returns, whether it failed or not.
func (o *Ops) open(ctx context.Context, c Caller, name string) (context.Context, openCall, error) {
	op := openCall{o: o, name: name, transport: c.Transport, start: time.Now(), ctx: ctx}
	spec, ok := calls[name]
	if !ok {
		return ctx, op, &apierror.Error{Code: apierror.Internal, Message: "call " + name + " is not declared", Cause: errUnknownCall}
	}
	if err := o.authorize(c, spec.role); err != nil {
		return ctx, op, err
	}
	if err := o.checkRate(ctx, c, spec.role, op.start); err != nil {
		return ctx, op, err
	}
	if !spec.unbounded {
		op.ctx, op.cancel = o.bounded(ctx)
	}
	return op.ctx, op, nil
}

// end ends the call with its result error: an error that carries no API
// code gets one (apiError, the one place where the storage layers' errors
// get theirs); one that carries its code is returned as it is. Then the
// call's context is released and the call reported to the observer.
func (op openCall) end(err *error) {
	code := codeOK
	if *err != nil {
		se, coded := apierror.From(*err)
		if !coded {
			se = AsStatus(apiError(op.ctx, *err))
			*err = se
		}
		code = se.Code
	}
	if op.cancel != nil {
		op.cancel()
	}
	op.o.observe(op.transport, op.name, op.start, code)
}

// authorize checks that the caller may make a call that needs role need:
// the one place where permissions are checked, in every call's opening
// (open), with the role the calls table gives.
func (o *Ops) authorize(c Caller, need auth.Role) error {
	if !o.cfg.RequireAuth || need == Anyone {
		return nil
	}
	switch {
	case c.refused != nil:
		return c.refused
	case c.App == "":
		return auth.ErrUnauthenticated()
	case !c.Role.Allows(need):
		return apierror.Errorf(apierror.PermissionDenied, "an application with role '%s' may not make this call: it needs role '%s'", c.Role, need)
	}
	return nil
}
