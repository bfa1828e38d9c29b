package finalclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/tigris"
)

// TestAggregateFlow: documents the final client writes, unchanged (inserts
// outside and inside its transaction), are grouped by Folio's own
// aggregate call on the project the client made. The client has no call
// for it, so the flow makes it over HTTP on the server's port, as an
// application beside the client would; each group's count is the client's
// own Count of that group, and its sum the sum of what the client reads.
func TestAggregateFlow(t *testing.T) {
	ctx, e, _ := projectFlow(t)
	c, err := tigris.NewClient(ctx, &tigris.Config{URL: e.url, Project: e.project})
	if err != nil {
		t.Fatalf("tigris.NewClient: %v", err)
	}
	defer c.Close()
	db, err := c.OpenDatabase(ctx, &Product{})
	if err != nil {
		t.Fatalf("OpenDatabase: %v", err)
	}
	products := tigris.GetCollection[Product](db)
	brands := []string{"Acme", "Bolt", "Core"}
	var docs []*Product
	for i := range 12 {
		docs = append(docs, &Product{Name: "p", Brand: brands[i%3], Price: float64(i) + 0.25})
	}
	if _, err := products.Insert(ctx, docs...); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	err = db.Tx(ctx, func(ctx context.Context) error {
		_, err := tigris.GetCollection[Product](db).Insert(ctx, &Product{Name: "q", Brand: "Dash", Price: 2.5}, &Product{Name: "q", Brand: "Acme", Price: 1})
		return err
	})
	if err != nil {
		t.Fatalf("Tx insert: %v", err)
	}

	sums := map[string]float64{}
	it, err := products.ReadAll(ctx)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	var p Product
	for it.Next(&p) {
		sums[p.Brand] += p.Price
	}
	if err := it.Err(); err != nil {
		t.Fatalf("ReadAll: %v", err)
	}

	u, _ := url.Parse(e.url)
	body := `{"group_by":["brand"],"fields":{"n":{"$count":{}},"total":{"$sum":"price"}},"sort":[{"brand":"$asc"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+u.Host+"/v1/projects/"+e.project+"/database/collections/products/documents/aggregate", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("aggregate: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("aggregate: %d %s", resp.StatusCode, raw)
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var line struct {
			Result struct {
				Group struct {
					Brand string `json:"brand"`
				} `json:"group"`
				N     int64   `json:"n"`
				Total float64 `json:"total"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("aggregate line %s: %v", sc.Bytes(), err)
		}
		r := line.Result
		got = append(got, r.Group.Brand)
		n, err := products.Count(ctx, filter.Eq("brand", r.Group.Brand))
		if err != nil || n != r.N {
			t.Errorf("brand %s: aggregate counted %d, the client's Count %d (%v)", r.Group.Brand, r.N, n, err)
		}
		if r.Total != sums[r.Group.Brand] {
			t.Errorf("brand %s: aggregate summed %v, the client's documents %v", r.Group.Brand, r.Total, sums[r.Group.Brand])
		}
	}
	if want := []string{"Acme", "Bolt", "Core", "Dash"}; len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
		t.Errorf("groups %q, want %q", got, want)
	}
}
