package ops

import (
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// Observer hears how every call ended: the hook of the request metrics
// (internal/metrics), which ops feeds without knowing Prometheus.
type Observer interface {
	// ObserveCall is called once per call: op is the operation's method
	// name ("Insert"), transport the caller's (Caller.Transport), code the
	// API code the call answered (OK if none), took how long it ran: for
	// a read or a search, until its last result was handed over; for
	// events and subscribe, until the stream was open.
	ObserveCall(op, transport string, code apierror.Code, took time.Duration)
}

// codeOK is what a call that returned no error answered.
const codeOK apierror.Code = "OK"

// observe reports a call's outcome, the API code it answered, to the
// observer, if there is one: the last step of every call's end
// (openCall.end).
func (o *Ops) observe(transport, op string, start time.Time, code apierror.Code) {
	if o.cfg.Observer == nil {
		return
	}
	o.cfg.Observer.ObserveCall(op, transport, code, time.Since(start))
}
