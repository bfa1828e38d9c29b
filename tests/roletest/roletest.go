// Package roletest is the role each call of the API needs, as the role
// tests of the transports expect it, with the checks that keep those tests
// whole: the table names every call internal/ops has, and a transport's
// test reached every call that has a role (read from the node's request
// metrics, which count calls by the operation they reached). A call added
// to ops without a line here, or left out of a transport's test, fails it.
package roletest

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/ops"
)

// Open is the "role" of the calls anyone may make: health, info and the
// token endpoint.
const Open auth.Role = ""

// Need is the role each call needs, by its method name on ops.Ops.
var Need = map[string]auth.Role{
	"Health":         Open,
	"Info":           Open,
	"GetAccessToken": Open,

	"ListDatabases":       auth.RoleReader,
	"DescribeDatabase":    auth.RoleReader,
	"ListCollections":     auth.RoleReader,
	"DescribeCollection":  auth.RoleReader,
	"Read":                auth.RoleReader,
	"Explain":             auth.RoleReader,
	"Count":               auth.RoleReader,
	"Search":              auth.RoleReader,
	"Events":              auth.RoleReader,
	"Subscribe":           auth.RoleReader,
	"BeginTransaction":    auth.RoleReader,
	"CommitTransaction":   auth.RoleReader,
	"RollbackTransaction": auth.RoleReader,
	"ListProjects":        auth.RoleReader,
	"ListBranches":        auth.RoleReader,

	"CreateDatabase":           auth.RoleEditor,
	"DropDatabase":             auth.RoleEditor,
	"CreateOrUpdateCollection": auth.RoleEditor,
	"DropCollection":           auth.RoleEditor,
	"Insert":                   auth.RoleEditor,
	"Replace":                  auth.RoleEditor,
	"Update":                   auth.RoleEditor,
	"Delete":                   auth.RoleEditor,
	"Publish":                  auth.RoleEditor,
	"Import":                   auth.RoleEditor,
	// The index builds answer at once (Folio has nothing to build), but
	// the original's read-only role could not ask for one.
	"BuildCollectionIndex": auth.RoleEditor,
	"BuildSearchIndex":     auth.RoleEditor,
	// A project is a database, a branch a database of its own: creating
	// and deleting them is an editor's, as for databases.
	"CreateProject":             auth.RoleEditor,
	"DeleteProject":             auth.RoleEditor,
	"CreateBranch":              auth.RoleEditor,
	"DeleteBranch":              auth.RoleEditor,
	"CreateOrUpdateCollections": auth.RoleEditor,

	"CreateApplication":       auth.RoleAdmin,
	"UpdateApplication":       auth.RoleAdmin,
	"RotateApplicationSecret": auth.RoleAdmin,
	"DeleteApplication":       auth.RoleAdmin,
	"ListApplications":        auth.RoleAdmin,

	"CreateNamespace":  auth.RoleOwner,
	"ListNamespaces":   auth.RoleOwner,
	"DeleteNamespace":  auth.RoleOwner,
	"RotateSigningKey": auth.RoleOwner,
	"Backup":           auth.RoleOwner,
}

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

// CheckTable fails t for every call of ops.Ops that Need lacks, and every
// name in Need that is no call (any longer).
func CheckTable(t testing.TB) {
	t.Helper()
	calls := Calls()
	for _, c := range calls {
		if _, ok := Need[c]; !ok {
			t.Errorf("ops.Ops.%s is a call the role table (tests/roletest.Need) does not name: add the role it needs, and add it to the role tests of every transport", c)
		}
	}
	for c := range Need {
		if !slices.Contains(calls, c) {
			t.Errorf("the role table names %s, which ops.Ops has no call of", c)
		}
	}
}

// requestsLine is a line of the request metrics: the operation and
// transport of a count.
var requestsLine = regexp.MustCompile(`^folio_requests_total\{.*operation="([^"]+)",transport="([^"]+)"\} [1-9]`)

// Reached returns the calls that requests over transport
// (ops.TransportHTTP, ...) reached, as the node's metrics (the text of a
// scrape of /metrics) count them.
func Reached(t testing.TB, metrics, transport string) map[string]bool {
	t.Helper()
	reached := map[string]bool{}
	for line := range strings.Lines(metrics) {
		if m := requestsLine.FindStringSubmatch(line); m != nil && m[2] == transport {
			reached[m[1]] = true
		}
	}
	if len(reached) == 0 {
		t.Fatalf("the metrics count no call over %s", transport)
	}
	return reached
}

// CheckCovered fails t for every call that needs a role and that reached
// does not hold, but those the transport does not serve (absent).
func CheckCovered(t testing.TB, reached map[string]bool, transport string, absent ...string) {
	t.Helper()
	for c, role := range Need {
		if role != Open && !reached[c] && !slices.Contains(absent, c) {
			t.Errorf("the role test over %s never reached %s (needs role %s): add it to the test's calls", transport, c, role)
		}
	}
	for _, c := range absent {
		if reached[c] {
			t.Errorf("%s is reached over %s: it is not absent from the transport, test its roles there", c, transport)
		}
	}
}
