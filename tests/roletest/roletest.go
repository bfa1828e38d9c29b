// Package roletest holds the transports' role tests to the operations'
// calls table (ops.CallRoles), the one place where the role each call
// needs is decided: the table names every call internal/ops has
// (CheckTable), and a transport's test made every call that has a role
// both with a role below it, refused, and with one that allows it (read
// from the node's request metrics, which count calls by the operation they
// reached and the code they answered: CheckCovered). A call added to ops
// without a line in the table, or left out of a transport's test, fails
// it.
package roletest

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/ops"
)

// Open is the "role" of the calls anyone may make: health, info and the
// token endpoint.
const Open = ops.Anyone

// Need is the role each call needs, by its method name on ops.Ops: the
// operations' calls table (ops.CallRoles), the one place roles are
// decided. The role tests hold each transport to it.
var Need = ops.CallRoles()

// Roles are the roles an application may have, weakest first.
var Roles = []auth.Role{auth.RoleReader, auth.RoleEditor, auth.RoleAdmin, auth.RoleOwner}

// Calls are the API calls of ops.Ops: its methods that take a Caller, as
// every call does (ops: "one method per call").
func Calls() []string {
	caller := reflect.TypeFor[ops.Caller]()
	t := reflect.TypeFor[*ops.Ops]()
	var out []string
	for i := range t.NumMethod() {
		m := t.Method(i)
		// In 0 is the receiver, In 1 the context.
		if m.Type.NumIn() > 2 && m.Type.In(2) == caller {
			out = append(out, m.Name)
		}
	}
	return out
}

// CheckTable fails t for every call of ops.Ops that the calls table (Need)
// lacks, and every name in it that is no call (any longer).
func CheckTable(t testing.TB) {
	t.Helper()
	calls := Calls()
	for _, c := range calls {
		if _, ok := Need[c]; !ok {
			t.Errorf("ops.Ops.%s is a call the calls table (internal/ops/calls.go) does not name: add the role it needs, and add it to the role tests of every transport", c)
		}
	}
	for c := range Need {
		if !slices.Contains(calls, c) {
			t.Errorf("the role table names %s, which ops.Ops has no call of", c)
		}
	}
}

// requestsLine is a line of the request metrics with a count, and label
// one of its labels.
var (
	requestsLine = regexp.MustCompile(`^folio_requests_total\{(.*)\} [1-9]`)
	label        = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// Answers are the API codes each call answered over one transport, by the
// call's name, as the node's request metrics count them.
type Answers map[string]map[apierror.Code]bool

// Reached returns the codes each call answered over transport
// (ops.TransportHTTP, ...), as the node's metrics (the text of a scrape of
// /metrics) count them.
func Reached(t testing.TB, metrics, transport string) Answers {
	t.Helper()
	reached := Answers{}
	for line := range strings.Lines(metrics) {
		m := requestsLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range label.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		if labels["transport"] != transport {
			continue
		}
		op := labels["operation"]
		if reached[op] == nil {
			reached[op] = map[apierror.Code]bool{}
		}
		reached[op][apierror.Code(labels["code"])] = true
	}
	if len(reached) == 0 {
		t.Fatalf("the metrics count no call over %s", transport)
	}
	return reached
}

// CheckCovered fails t for every call of the table that needs a role and
// that the transport's role test did not make both ways: refused
// (PERMISSION_DENIED) to a role below the one it needs, where there is
// one, and made by a role that allows it (answered anything else but
// UNAUTHENTICATED). Calls the transport does not serve (absent) are
// left out.
func CheckCovered(t testing.TB, reached Answers, transport string, absent ...string) {
	t.Helper()
	for c, role := range Need {
		if role == Open || slices.Contains(absent, c) {
			continue
		}
		codes := reached[c]
		if len(codes) == 0 {
			t.Errorf("the role test over %s never reached %s (needs role %s): add it to the test's calls", transport, c, role)
			continue
		}
		if slices.ContainsFunc(Roles, func(r auth.Role) bool { return !r.Allows(role) }) && !codes[apierror.PermissionDenied] {
			t.Errorf("the role test over %s never made %s (needs role %s) with a role below it: no PERMISSION_DENIED", transport, c, role)
		}
		allowed := false
		for code := range codes {
			allowed = allowed || (code != apierror.PermissionDenied && code != apierror.Unauthenticated)
		}
		if !allowed {
			t.Errorf("the role test over %s never made %s (needs role %s) with a role that allows it", transport, c, role)
		}
	}
	for _, c := range absent {
		if len(reached[c]) > 0 {
			t.Errorf("%s is reached over %s: it is not absent from the transport, test its roles there", c, transport)
		}
	}
}
