// Package reqinfo carries, in a request's context, what the layers below
// the transports learn about a request for its log line: its id, the API
// code it was answered with, and the query plans it ran. A transport
// starts it (through the operations), the document layer notes its plans,
// and the operations write the line when the transport reports the end.
package reqinfo

import (
	"context"
	"fmt"
	"sync"

	"github.com/foliodb/folio/internal/apierror"
)

// maxPlans bounds the plans one request keeps: a transaction may run many
// reads, and the log line needs only the first few to explain a slow one.
const maxPlans = 8

// Info is one request's notes. Its methods are safe on a nil Info (a
// request started without one, as in tests of the layers below) and from
// several goroutines.
type Info struct {
	// ID names the request in the log and in its answer's header.
	ID string

	mu    sync.Mutex
	code  apierror.Code
	plans []notedPlan
	more  int // plans past maxPlans, counted only
}

// notedPlan is a plan kept as the query layer gave it: rendered only if
// the line shows it, which few do.
type notedPlan struct {
	collection string
	plan       fmt.Stringer
}

type key struct{}

// With returns ctx carrying info.
func With(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, key{}, info)
}

// From returns the Info ctx carries, or nil.
func From(ctx context.Context) *Info {
	info, _ := ctx.Value(key{}).(*Info)
	return info
}

// NotePlan records a plan the request ran on a collection.
func (i *Info) NotePlan(collection string, plan fmt.Stringer) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if len(i.plans) == maxPlans {
		i.more++
		return
	}
	i.plans = append(i.plans, notedPlan{collection, plan})
}

// Plans returns the plans noted, and how many more were left out.
func (i *Info) Plans() ([]string, int) {
	if i == nil {
		return nil, 0
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make([]string, len(i.plans))
	for n, p := range i.plans {
		out[n] = p.collection + ": " + p.plan.String()
	}
	return out, i.more
}

// NoteCode records the API code the request was answered with; the first
// error a request meets is the one that stands.
func (i *Info) NoteCode(c apierror.Code) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.code == "" {
		i.code = c
	}
}

// Code is the API code noted, "" if none (the request succeeded).
func (i *Info) Code() apierror.Code {
	if i == nil {
		return ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.code
}
