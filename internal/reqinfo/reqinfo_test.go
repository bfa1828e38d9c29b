package reqinfo

import (
	"context"
	"fmt"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
)

type plan string

func (p plan) String() string { return string(p) }

func TestInfo(t *testing.T) {
	// A context without notes: every method is a no-op.
	var none *Info = From(context.Background())
	none.NotePlan("c", plan("scan"))
	none.NoteCode(apierror.Internal)
	if ps, more := none.Plans(); ps != nil || more != 0 || none.Code() != "" {
		t.Fatalf("nil Info: plans %v %d, code %q", ps, more, none.Code())
	}

	info := &Info{ID: "r1"}
	ctx := With(context.Background(), info)
	if From(ctx) != info {
		t.Fatal("From does not return the Info With stored")
	}
	for i := range maxPlans + 3 {
		info.NotePlan("items", plan(fmt.Sprint("plan ", i)))
	}
	ps, more := info.Plans()
	if len(ps) != maxPlans || ps[0] != "items: plan 0" || ps[maxPlans-1] != fmt.Sprint("items: plan ", maxPlans-1) || more != 3 {
		t.Fatalf("plans %v, %d more; want the first %d and 3 more", ps, more, maxPlans)
	}
	info.NoteCode(apierror.NotFound)
	info.NoteCode(apierror.Internal)
	if info.Code() != apierror.NotFound {
		t.Fatalf("code %q, want the first noted", info.Code())
	}
}
