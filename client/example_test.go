package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/foliodb/folio/client"
)

// Product is the model of the examples' collection: the server generates
// its id.
type Product struct {
	ID    int64   `json:"id" tigris:"primaryKey:1,autoGenerate"`
	Name  string  `json:"name"`
	Brand string  `json:"brand"`
	Price float64 `json:"price"`
	Stock int32   `json:"stock"`
}

// catalog makes a database with a products collection for an example.
func catalog(ctx context.Context, c *client.Client, name string) *client.Collection[Product] {
	db, err := c.CreateDatabase(ctx, name)
	if err != nil {
		log.Fatal(err)
	}
	schema, err := client.SchemaOf[Product]("products")
	if err != nil {
		log.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "products", schema); err != nil {
		log.Fatal(err)
	}
	return client.Coll[Product](db, "products")
}

func ExampleOpen() {
	ctx := context.Background()
	// With authentication on: client.Options{ApplicationID: …, ApplicationSecret: …}
	// and, for a certificate of your own, TLS: &tls.Config{RootCAs: …}.
	c, err := client.Open(serverURL, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateDatabase(ctx, "example_open"); err != nil {
		log.Fatal(err)
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, db := range dbs {
		if db.Name == "example_open" {
			fmt.Println("found", db.Name)
		}
	}
	// Output: found example_open
}

// Over gRPC: the same calls, types and errors, chosen by the URL's
// scheme ("grpcs://" with Options.TLS for TLS). The server listens for
// both on one port; in a program the URL would be
// "grpc://localhost:8081".
func ExampleOpen_grpc() {
	ctx := context.Background()
	c, err := client.Open(grpcURL, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	products := catalog(ctx, c, "example_grpc")
	kettle := &Product{Name: "Kettle", Brand: "Acme", Price: 25, Stock: 3}
	if _, err := products.Insert(ctx, kettle); err != nil {
		log.Fatal(err)
	}
	for p, err := range products.Read(ctx, client.Eq("brand", "Acme")) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(p.ID == kettle.ID, p.Name, p.Stock)
	}
	_, err = c.CreateDatabase(ctx, "example_grpc")
	fmt.Println(client.IsCode(err, client.AlreadyExists), err)
	// Output:
	// true Kettle 3
	// true ALREADY_EXISTS: database already exist
}

func ExampleSchemaOf() {
	schema, err := client.SchemaOf[Product]("products")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(schema))
	// Output: {"title":"products","properties":{"id":{"type":"integer","autoGenerate":true},"name":{"type":"string"},"brand":{"type":"string"},"price":{"type":"number"},"stock":{"type":"integer","format":"int32"}},"primary_key":["id"]}
}

func ExampleDatabase_CreateCollection() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	db, err := c.CreateDatabase(ctx, "example_collections")
	if err != nil {
		log.Fatal(err)
	}
	// A schema as raw JSON; SchemaOf makes one from a struct.
	err = db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"},"text":{"type":"string"}},"primary_key":["id"]}`))
	if err != nil {
		log.Fatal(err)
	}
	d, err := db.DescribeCollection(ctx, "notes")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(d.Schema))
	// Output: {"title":"notes","properties":{"id":{"type":"string"},"text":{"type":"string"}},"primary_key":["id"]}
}

func ExampleCollection_Insert() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_insert")
	p := &Product{Name: "Kettle", Brand: "Acme", Price: 25}
	keys, err := products.Insert(ctx, p)
	if err != nil {
		log.Fatal(err)
	}
	// The generated id is in the document, and its key among the keys.
	fmt.Println(p.ID != 0, string(keys[0]) == fmt.Sprintf(`{"id":%d}`, p.ID))
	_, err = products.Insert(ctx, p)
	fmt.Println(client.IsCode(err, client.AlreadyExists))
	// Output:
	// true true
	// true
}

func ExampleCollection_Read() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_read")
	_, err := products.Insert(ctx,
		&Product{Name: "Kettle", Brand: "Acme", Price: 25},
		&Product{Name: "Toaster", Brand: "Acme", Price: 40},
		&Product{Name: "Mug", Brand: "Bolt", Price: 8})
	if err != nil {
		log.Fatal(err)
	}
	filter := client.And(client.Eq("brand", "acme"), client.Gt("price", 10))
	for p, err := range products.Read(ctx, filter, client.CaseInsensitive(), client.Sort(client.Desc("price"))) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(p.Name, p.Price)
	}
	// Output:
	// Toaster 40
	// Kettle 25
}

func ExampleCollection_Replace() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_replace")
	p := &Product{Name: "Kettle", Price: 25}
	if _, err := products.Insert(ctx, p); err != nil {
		log.Fatal(err)
	}
	// The whole document is replaced: fields left out are gone.
	if _, err := products.Replace(ctx, &Product{ID: p.ID, Name: "Kettle 2"}); err != nil {
		log.Fatal(err)
	}
	for d, err := range products.ReadDocuments(ctx, client.Eq("id", p.ID)) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.Data.Name, d.Data.Price, !d.CreatedAt.IsZero())
	}
	// Output: Kettle 2 0 true
}

func ExampleCollection_Update() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_update")
	if _, err := products.Insert(ctx, &Product{Name: "Kettle", Price: 25, Stock: 3}); err != nil {
		log.Fatal(err)
	}
	n, err := products.Update(ctx, client.Eq("name", "Kettle"), client.Set("price", 20).Set("stock", 2))
	if err != nil {
		log.Fatal(err)
	}
	p, err := products.ReadOne(ctx, client.Eq("name", "Kettle"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, p.Price, p.Stock)
	// Output: 1 20 2
}

func ExampleCollection_Delete() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_delete")
	if _, err := products.Insert(ctx, &Product{Name: "Kettle"}, &Product{Name: "Mug"}); err != nil {
		log.Fatal(err)
	}
	n, err := products.Delete(ctx, client.Eq("name", "Mug"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = products.ReadOne(ctx, client.Eq("name", "Mug"))
	fmt.Println(n, errors.Is(err, client.ErrNoDocument))
	// Output: 1 true
}

func ExampleCollection_Search() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_search")
	_, err := products.Insert(ctx,
		&Product{Name: "Electric kettle", Brand: "Acme", Price: 25},
		&Product{Name: "Stove kettle", Brand: "Bolt", Price: 15},
		&Product{Name: "Kettle descaler", Brand: "Acme", Price: 5})
	if err != nil {
		log.Fatal(err)
	}
	req := client.SearchRequest{Q: "kettle", Filter: client.Gte("price", 10), Facets: map[string]int{"brand": 10}, Sort: []client.SortField{client.Asc("price")}}
	for page, err := range products.Search(ctx, req) {
		if err != nil {
			log.Fatal(err)
		}
		for _, hit := range page.Hits {
			fmt.Println(hit.Data.Name)
		}
		for _, fc := range page.Facets["brand"].Counts {
			fmt.Println(fc.Value, fc.Count)
		}
	}
	// Unordered output:
	// Stove kettle
	// Electric kettle
	// Acme 1
	// Bolt 1
}

func ExampleDatabase_Tx() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_tx")
	kettle := &Product{Name: "Kettle", Stock: 3}
	if _, err := products.Insert(ctx, kettle); err != nil {
		log.Fatal(err)
	}
	// Take one from stock: read and write in one serializable
	// transaction, run again if a concurrent one changed the stock.
	db := c.Database("example_tx")
	err := db.Tx(ctx, func(tx *client.Tx) error {
		in := client.Coll[Product](tx, "products")
		p, err := in.ReadOne(ctx, client.Eq("id", kettle.ID))
		if err != nil {
			return err
		}
		if p.Stock == 0 {
			return errors.New("out of stock") // rolls back
		}
		_, err = in.Update(ctx, client.Eq("id", kettle.ID), client.Set("stock", p.Stock-1))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	p, _ := products.ReadOne(ctx, client.Eq("id", kettle.ID))
	fmt.Println(p.Stock)
	// Output: 2
}

func ExampleCollection_Events() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := client.Open(serverURL, client.Options{})
	products := catalog(ctx, c, "example_events")
	go func() {
		time.Sleep(time.Second) // the stream starts now: let it open first
		p := &Product{Name: "Kettle"}
		products.Insert(ctx, p)
		products.Delete(ctx, client.Eq("id", p.ID))
	}()
	var position string
	for ev, err := range products.Events(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Data != nil {
			fmt.Println(ev.Op, ev.Data.Name)
		} else {
			fmt.Println(ev.Op)
		}
		position = ev.Position
		if ev.Op == "delete" {
			break
		}
	}
	// client.StartAfter(position) resumes after the last event, also
	// after a restart of the server.
	_ = position
	// Output:
	// insert Kettle
	// delete
}

func ExampleCollection_Subscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := client.Open(serverURL, client.Options{})
	db, err := c.CreateDatabase(ctx, "example_subscribe")
	if err != nil {
		log.Fatal(err)
	}
	type Alert struct {
		Level string `json:"level"`
		Text  string `json:"text"`
	}
	err = db.CreateCollection(ctx, "alerts", []byte(`{"collection_type":"messages","properties":{"level":{"type":"string"},"text":{"type":"string"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	alerts := client.Coll[Alert](db, "alerts")
	go func() {
		time.Sleep(time.Second) // the subscription starts now: let it open first
		alerts.Publish(ctx, Alert{"info", "disk 50% full"}, Alert{"error", "disk full"})
	}()
	for m, err := range alerts.Subscribe(ctx, client.Eq("level", "error")) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.Data.Text)
		break
	}
	// Output: disk full
}

func ExampleIsCode() {
	ctx := context.Background()
	c, _ := client.Open(serverURL, client.Options{})
	err := c.Database("no_such_db").Drop(ctx)
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Code, apiErr.HTTPStatus, apiErr.Message)
	}
	fmt.Println(client.IsCode(err, client.NotFound))
	// Output:
	// NOT_FOUND 404 database doesn't exist 'no_such_db'
	// true
}
