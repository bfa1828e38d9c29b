package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/foliodb/folio/client"
)

// Aggregate over both transports: the groups in order, numbers as
// json.Number (an integer sum keeps its digits), a transaction's writes
// seen inside it, and a bad accumulator refused.
func TestAggregate(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx := context.Background()
		db, users := newUsers(t, c)
		_, err := users.Insert(ctx, newUser("Ann", 30, "Paris"), newUser("Bob", 20, "Paris"), newUser("Cy", 40, "Rome"))
		must(t, err)
		collect := func(in *client.Collection[User], req client.AggregateRequest) []string {
			t.Helper()
			var out []string
			for r, err := range in.Aggregate(ctx, req) {
				must(t, err)
				out = append(out, fmt.Sprint(r.Group, r.Values))
			}
			return out
		}
		req := client.AggregateRequest{Filter: client.Gte("age", 20), GroupBy: []string{"address.city"},
			Fields: json.RawMessage(`{"n":{"$count":{}},"years":{"$sum":"age"}}`), Sort: []client.SortField{client.Desc("n")}}
		want := fmt.Sprint([]string{"map[address.city:Paris] map[n:2 years:50]", "map[address.city:Rome] map[n:1 years:40]"})
		if got := fmt.Sprint(collect(users, req)); got != want {
			t.Fatalf("aggregate: %s, want %s", got, want)
		}
		must(t, db.Tx(ctx, func(tx *client.Tx) error {
			in := client.Coll[User](tx, "users")
			if _, err := in.Insert(ctx, newUser("Dee", 50, "Rome")); err != nil {
				return err
			}
			if got := collect(in, client.AggregateRequest{Fields: json.RawMessage(`{"n":{"$count":{}}}`)}); fmt.Sprint(got) != "[map[] map[n:4]]" {
				return fmt.Errorf("in the transaction: %v", got)
			}
			return nil
		}))
		for _, err := range users.Aggregate(ctx, client.AggregateRequest{Fields: json.RawMessage(`{"n":{"$median":"age"}}`)}) {
			wantCode(t, err, client.InvalidArgument)
		}
	})
}
