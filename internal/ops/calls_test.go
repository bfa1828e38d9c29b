package ops

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// apiMethods are the calls of the API as Ops has them: its exported
// methods that take a Caller, after the context.
func apiMethods() []reflect.Method {
	caller := reflect.TypeFor[Caller]()
	t := reflect.TypeFor[*Ops]()
	var out []reflect.Method
	for i := range t.NumMethod() {
		m := t.Method(i)
		if m.Type.NumIn() > 2 && m.Type.In(2) == caller {
			out = append(out, m)
		}
	}
	return out
}

// TestEveryCallIsInTheTable: the calls table names every call of Ops, and
// nothing else, so that no call runs without its role decided.
func TestEveryCallIsInTheTable(t *testing.T) {
	methods := apiMethods()
	if len(methods) < 30 {
		t.Fatalf("found %d API methods: the check is out of date", len(methods))
	}
	var names []string
	for _, m := range methods {
		names = append(names, m.Name)
		if _, ok := calls[m.Name]; !ok {
			t.Errorf("Ops.%s is a call the calls table (calls.go) does not name: add the role it needs", m.Name)
		}
	}
	for name := range calls {
		if !slices.Contains(names, name) {
			t.Errorf("the calls table names %s, which Ops has no call of", name)
		}
	}
}

// TestEveryCallOpensUnderItsName: every API method starts with
// `ctx, op, err := o.open(ctx, c, "<its name>")` and `defer op.end(&err)`,
// so that each is checked against its own line of the table, bounded,
// given its codes and counted in the request metrics under its name.
func TestEveryCallOpensUnderItsName(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || !takesCaller(fn) {
				continue
			}
			found++
			if got := openedAs(fn); got != fn.Name.Name {
				t.Errorf("%s: Ops.%s does not start with `ctx, op, err := o.open(ctx, c, %q)` and `defer op.end(&err)` (found %q)",
					fset.Position(fn.Pos()), fn.Name.Name, fn.Name.Name, got)
			}
		}
	}
	if found != len(apiMethods()) {
		t.Errorf("found %d API methods in the source, Ops has %d: the check is out of date", found, len(apiMethods()))
	}
}

func takesCaller(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		if id, ok := p.Type.(*ast.Ident); ok && id.Name == "Caller" {
			return true
		}
	}
	return false
}

// openedAs is the call name fn opens with, if its first statement opens a
// call (o.open, assigning op and err) and its second defers op.end(&err),
// else "".
func openedAs(fn *ast.FuncDecl) string {
	if len(fn.Body.List) < 2 {
		return ""
	}
	as, ok := fn.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 3 || len(as.Rhs) != 1 || ident(as.Lhs[1]) != "op" || ident(as.Lhs[2]) != "err" {
		return ""
	}
	open, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(open.Args) != 3 {
		return ""
	}
	if sel, ok := open.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "open" {
		return ""
	}
	d, ok := fn.Body.List[1].(*ast.DeferStmt)
	if !ok {
		return ""
	}
	if sel, ok := d.Call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "end" || ident(sel.X) != "op" {
		return ""
	}
	lit, ok := open.Args[2].(*ast.BasicLit)
	if !ok {
		return ""
	}
	name, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return name
}

func ident(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// heard records the calls an observer heard.
type heard struct{ calls []string }

func (h *heard) ObserveCall(op, transport string, code apierror.Code, _ time.Duration) {
	h.calls = append(h.calls, op+" "+transport+" "+string(code))
}

// below is the strongest role that does not allow need ("" if none).
func below(need auth.Role) auth.Role {
	var out auth.Role
	for _, r := range []auth.Role{auth.RoleReader, auth.RoleEditor, auth.RoleAdmin, auth.RoleOwner} {
		if !r.Allows(need) {
			out = r
		}
	}
	return out
}

// TestEveryCallChecksItsRole makes every call of Ops, through the method
// itself, as an application whose role is just below the one the table
// gives (or as an anonymous caller, for the reader's calls): each is
// refused by its opening with the role's message, before any of its work
// (the Ops under test has no store), and the observer hears it under the
// method's name. The calls anyone may make are not refused.
func TestEveryCallChecksItsRole(t *testing.T) {
	h := &heard{}
	o := New(Config{Observer: h, Options: Options{RequireAuth: true}})
	for _, m := range apiMethods() {
		need := calls[m.Name].role
		if need == Anyone {
			if err := o.authorize(Caller{refused: errors.New("no")}, need); err != nil {
				t.Errorf("%s needs no credentials, yet a caller without them is refused: %v", m.Name, err)
			}
			continue
		}
		c := Caller{App: "app", Role: below(need), Transport: TransportGRPC}
		code, msg := apierror.PermissionDenied, fmt.Sprintf("an application with role '%s' may not make this call: it needs role '%s'", c.Role, need)
		if c.Role == "" {
			c = Caller{Transport: TransportGRPC}
			code, msg = apierror.Unauthenticated, ""
		}
		args := []reflect.Value{reflect.ValueOf(o), reflect.ValueOf(context.Background()), reflect.ValueOf(c)}
		for i := 3; i < m.Type.NumIn(); i++ {
			args = append(args, reflect.Zero(m.Type.In(i)))
		}
		h.calls = h.calls[:0]
		out := m.Func.Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		se, ok := apierror.From(err)
		if !ok || se.Code != code || (msg != "" && se.Message != msg) {
			t.Errorf("%s by %q: %v, want %s %q", m.Name, c.Role, err, code, msg)
		}
		if want := m.Name + " grpc " + string(code); len(h.calls) != 1 || h.calls[0] != want {
			t.Errorf("%s: the observer heard %q, want %q", m.Name, h.calls, want)
		}
	}
}

// TestCallRoles: what the transports' role tests read is the table.
func TestCallRoles(t *testing.T) {
	roles := CallRoles()
	if len(roles) != len(calls) {
		t.Fatalf("CallRoles has %d calls, the table %d", len(roles), len(calls))
	}
	for name, c := range calls {
		if roles[name] != c.role {
			t.Errorf("CallRoles()[%s] = %q, the table says %q", name, roles[name], c.role)
		}
	}
	roles["Insert"] = auth.RoleOwner
	if calls["Insert"].role != auth.RoleEditor {
		t.Error("changing CallRoles' map changed the table")
	}
}

// The opening bounds a call's work by the request timeout unless the
// table says otherwise; the end gives an error without a code its code
// (apiError, with the call's context), keeps one that has a code as it is
// (a *SchemaError stays one), releases the context and reports the call.
func TestOpenAndEnd(t *testing.T) {
	h := &heard{}
	// A store: every call's opening reads its namespace's rate quota.
	o := New(Config{Store: backendtest.OpenPebble(t), Observer: h, Options: Options{RequestTimeout: time.Hour}})
	ctx := context.Background()
	c := Caller{Transport: TransportHTTP}

	bounded, op, err := o.open(ctx, c, "Insert")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := bounded.Deadline(); !ok || time.Until(d) > time.Hour || time.Until(d) < time.Hour-time.Minute {
		t.Errorf("Insert's context: deadline %v (%t), want the request timeout from now", d, ok)
	}
	failed := fmt.Errorf("commit: %w", kv.ErrConflict)
	op.end(&failed)
	if se, ok := apierror.From(failed); !ok || se.Code != apierror.Aborted {
		t.Errorf("a conflict after the end: %v, want ABORTED", failed)
	}
	if bounded.Err() == nil {
		t.Error("the end did not release the call's context")
	}

	for _, name := range []string{"Backup", "Events", "Subscribe", "Health", "Info"} {
		got, op, err := o.open(ctx, c, name)
		if _, ok := got.Deadline(); ok || err != nil {
			t.Errorf("%s: opened with a deadline (%v)", name, err)
		}
		var none error
		op.end(&none)
	}

	_, op, _ = o.open(ctx, c, "CreateOrUpdateCollections")
	var schemaErr error = &SchemaError{Index: 1, Err: &apierror.Error{Code: apierror.InvalidArgument, Message: "bad"}}
	kept := schemaErr
	op.end(&kept)
	if kept != schemaErr {
		t.Errorf("the end replaced an error with its code: %v", kept)
	}

	_, op, err = o.open(ctx, c, "Isnert")
	op.end(&err)
	if se, ok := apierror.From(err); !ok || se.Code != apierror.Internal || !errors.Is(err, errUnknownCall) {
		t.Errorf("a call the table lacks: %v, want INTERNAL", err)
	}

	want := []string{"Insert http ABORTED", "Backup http OK", "Events http OK", "Subscribe http OK", "Health http OK", "Info http OK",
		"CreateOrUpdateCollections http INVALID_ARGUMENT", "Isnert http INTERNAL"}
	if !slices.Equal(h.calls, want) {
		t.Errorf("the observer heard\n%q\nwant\n%q", h.calls, want)
	}
}
