package roletest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/ops"
)

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// scrape is the request metrics of a role test that made every call of the
// table over HTTP both ways, but the lines drop leaves out.
func scrape(drop ...string) string {
	var b strings.Builder
	b.WriteString("# TYPE folio_requests_total counter\n")
	line := func(op string, code apierror.Code) {
		if l := fmt.Sprintf(`folio_requests_total{code="%s",operation="%s",transport="http"} 2`, code, op); !slices.Contains(drop, l) {
			b.WriteString(l + "\n")
		}
	}
	for op, role := range Need {
		line(op, "OK")
		if role != auth.RoleReader && role != Open {
			line(op, apierror.PermissionDenied)
		}
	}
	b.WriteString(`folio_requests_total{code="OK",operation="Insert",transport="grpc"} 0` + "\n")
	return b.String()
}

func TestCheckCovered(t *testing.T) {
	const (
		insertDenied = `folio_requests_total{code="PERMISSION_DENIED",operation="Insert",transport="http"} 2`
		readOK       = `folio_requests_total{code="OK",operation="Read",transport="http"} 2`
		backupOK     = `folio_requests_total{code="OK",operation="Backup",transport="http"} 2`
		backupDenied = `folio_requests_total{code="PERMISSION_DENIED",operation="Backup",transport="http"} 2`
	)
	for _, tc := range []struct {
		name   string
		drop   []string
		absent []string
		want   []string // what the errors name, one each
	}{
		{name: "every call both ways"},
		{name: "never refused", drop: []string{insertDenied}, want: []string{"never made Insert (needs role editor) with a role below it"}},
		{name: "only refused", drop: []string{readOK}, want: []string{"never reached Read"}},
		{name: "absent", drop: []string{backupOK, backupDenied}, absent: []string{"Backup"}},
		{name: "absent but reached", absent: []string{"Backup"}, want: []string{"Backup is reached over http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckCovered(r, Reached(t, scrape(tc.drop...), ops.TransportHTTP), ops.TransportHTTP, tc.absent...)
			if len(r.errors) != len(tc.want) {
				t.Fatalf("errors %q, want %d naming %q", r.errors, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if !strings.Contains(r.errors[i], want) {
					t.Errorf("error %q, want one naming %q", r.errors[i], want)
				}
			}
		})
	}
}

// A reader's call has no role below it: made by a role that allows it,
// and refused to no one, it is covered; refused only, it is not.
func TestCheckCoveredReaderCalls(t *testing.T) {
	r := &recorder{TB: t}
	text := strings.Replace(scrape(), `code="OK",operation="Read",`, `code="PERMISSION_DENIED",operation="Read",`, 1)
	CheckCovered(r, Reached(t, text, ops.TransportHTTP), ops.TransportHTTP)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "never made Read (needs role reader) with a role that allows it") {
		t.Errorf("errors %q", r.errors)
	}
}

// The table is the operations' own.
func TestNeedIsTheCallsTable(t *testing.T) {
	CheckTable(t)
	if Need["Insert"] != auth.RoleEditor || Need["Health"] != Open || len(Need) != len(ops.CallRoles()) {
		t.Errorf("Need is not ops.CallRoles: %v", Need)
	}
}
