package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
)

// AggregateRequest is an aggregation (Folio's own call, docs/api.md
// "Aggregate"): the documents Filter selects (nil: every one), grouped by
// the values of GroupBy's fields (none: one group), each group answering
// the accumulators of Fields, such as
// {"n":{"$count":{}},"total":{"$sum":"price"}}.
type AggregateRequest struct {
	Filter  Filter          `json:"filter,omitempty"`
	GroupBy []string        `json:"group_by,omitempty"`
	Fields  json.RawMessage `json:"fields"`
	// Sort orders the groups by group fields and accumulator names
	// (default: by the groups' values).
	Sort  []SortField `json:"sort,omitempty"`
	Limit int64       `json:"limit,omitempty"`
	// CaseInsensitive makes the filter's string comparisons ignore case.
	CaseInsensitive bool `json:"-"`
}

// AggregateResult is one group's result: Group holds the group's values
// by field, Values each accumulator's result by name.
type AggregateResult struct {
	Group  map[string]any
	Values map[string]any
}

// Aggregate streams the groups' results, in order. Numbers come as
// json.Number.
func (c *Collection[T]) Aggregate(ctx context.Context, req AggregateRequest) iter.Seq2[*AggregateResult, error] {
	return func(yield func(*AggregateResult, error) bool) {
		// The collation at the top level, where the gRPC message has it;
		// HTTP takes it there too.
		body := struct {
			AggregateRequest
			Collation *collation `json:"collation,omitempty"`
		}{AggregateRequest: req}
		if req.CaseInsensitive {
			body.Collation = &collation{Case: "ci"}
		}
		stopped := false
		err := c.s.stream(ctx, "aggregate", routeAggregate, c.name, body, func(raw json.RawMessage) bool {
			r, err := decodeAggregateResult(raw)
			if err != nil {
				stopped = !yield(nil, fmt.Errorf("aggregate %s: decode a result: %w", c.name, err))
			} else {
				stopped = !yield(r, nil)
			}
			return !stopped
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

// decodeAggregateResult reads one result: HTTP's line holds it as it is,
// gRPC's message in its result member (a result always has "group", which
// no accumulator may be named).
func decodeAggregateResult(raw json.RawMessage) (*AggregateResult, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if _, ok := m["group"]; !ok {
		inner, ok := m["result"]
		if !ok {
			return nil, fmt.Errorf("no group in %s", raw)
		}
		return decodeAggregateResult(inner)
	}
	out := &AggregateResult{Values: map[string]any{}}
	for name, v := range m {
		var x any
		if err := unmarshalNumbers(v, &x); err != nil {
			return nil, err
		}
		if name == "group" {
			g, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("group is not an object in %s", raw)
			}
			out.Group = g
			continue
		}
		out.Values[name] = x
	}
	return out, nil
}

// unmarshalNumbers is json.Unmarshal keeping numbers as json.Number: a
// sum of integers may pass float64's exact range.
func unmarshalNumbers(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
