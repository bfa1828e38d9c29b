package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A history is stored as JSON lines, one event per line, in the order the
// events happened (which is the real-time order the checkers use):
//
//	{"process":0,"type":"invoke","f":"txn","value":[["append","x",1],["r","y",null]],"time":1200}
//	{"process":0,"type":"ok","f":"txn","value":[["append","x",1],["r","y",[3,4]]],"time":5300}
//	{"process":1,"type":"invoke","f":"transfer","value":{"from":"a","to":"b","amount":5}}
//	{"process":1,"type":"info","f":"transfer","value":{"from":"a","to":"b","amount":5},"error":"timeout"}
//	{"process":2,"type":"ok","f":"read","value":{"a":45,"b":55}}
//
// It is Jepsen's history with EDN turned into JSON: a micro-operation is
// [f, key, value], a read's value null until it is known. Blank lines are
// skipped; any other line that is not one event is refused with its number.

// maxLine bounds one event's line: a read of a long list is long, but a
// line past this is a broken file, not a history.
const maxLine = 64 << 20

type jsonEvent struct {
	Process int             `json:"process"`
	Type    Type            `json:"type"`
	F       string          `json:"f"`
	Value   json.RawMessage `json:"value"`
	Time    int64           `json:"time,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// MarshalJSON writes an event as one line of a history.
func (e Event) MarshalJSON() ([]byte, error) {
	var value any
	switch e.F {
	case FTxn:
		value = e.Txn
	case FTransfer:
		value = e.Transfer
	case FRead:
		value = e.Balances
	default:
		return nil, fmt.Errorf("unknown function %q", e.F)
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonEvent{Process: e.Process, Type: e.Type, F: e.F, Value: raw, Time: e.Time, Error: e.Error})
}

// UnmarshalJSON reads one line of a history.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j jsonEvent
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	switch j.Type {
	case Invoke, OK, Fail, Info:
	default:
		return fmt.Errorf("unknown type %q", j.Type)
	}
	*e = Event{Process: j.Process, Type: j.Type, F: j.F, Time: j.Time, Error: j.Error}
	value := j.Value
	if len(value) == 0 {
		value = []byte("null")
	}
	switch j.F {
	case FTxn:
		return strictUnmarshal(value, &e.Txn)
	case FTransfer:
		return strictUnmarshal(value, &e.Transfer)
	case FRead:
		return strictUnmarshal(value, &e.Balances)
	}
	return fmt.Errorf("unknown function %q", j.F)
}

// MarshalJSON writes a micro-operation as [f, key, value].
func (m Mop) MarshalJSON() ([]byte, error) {
	switch m.F {
	case MAppend:
		return json.Marshal([]any{m.F, m.Key, m.Value})
	case MRead:
		return json.Marshal([]any{m.F, m.Key, m.Read})
	}
	return nil, fmt.Errorf("unknown micro-operation %q", m.F)
}

// UnmarshalJSON reads [f, key, value]; a read's value is null or a list.
func (m *Mop) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := strictUnmarshal(b, &parts); err != nil {
		return err
	}
	if len(parts) != 3 {
		return fmt.Errorf("micro-operation %s: want [f, key, value]", b)
	}
	*m = Mop{}
	if err := strictUnmarshal(parts[0], &m.F); err != nil {
		return fmt.Errorf("micro-operation's f: %w", err)
	}
	if err := strictUnmarshal(parts[1], &m.Key); err != nil {
		return fmt.Errorf("micro-operation's key: %w", err)
	}
	switch m.F {
	case MAppend:
		return strictUnmarshal(parts[2], &m.Value)
	case MRead:
		if err := strictUnmarshal(parts[2], &m.Read); err != nil {
			return err
		}
		if m.Read == nil && !bytes.Equal(bytes.TrimSpace(parts[2]), []byte("null")) {
			m.Read = []int64{} // [] is an empty list observed, not "unknown"
		}
		return nil
	}
	return fmt.Errorf("unknown micro-operation %q", m.F)
}

// strictUnmarshal refuses fields no event has, so that a misspelt field is
// an error rather than a silently missing value.
func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the value")
	}
	return nil
}

// Decode reads a history written as JSON lines.
func Decode(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var events []Event
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := e.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return events, nil
}

// Encoder writes events as JSON lines. It is not safe for concurrent use:
// a harness serializes its clients' events, since their order is the
// real-time order.
type Encoder struct {
	w *bufio.Writer
}

// NewEncoder writes to w; call Flush when done.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: bufio.NewWriter(w)} }

// Encode writes one event as one line.
func (enc *Encoder) Encode(e Event) error {
	b, err := e.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	b = append(b, '\n')
	_, err = enc.w.Write(b)
	return err
}

// Flush writes out what is buffered.
func (enc *Encoder) Flush() error { return enc.w.Flush() }
