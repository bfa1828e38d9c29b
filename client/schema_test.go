package client_test

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/client"
)

type Base struct {
	CreatedAt time.Time `json:"created_at"`
}

type Order struct {
	Shop   string `json:"shop" tigris:"primaryKey:1"`
	Number int64  `json:"number" tigris:"primary_key:2"`
	Base
	Lines []struct {
		SKU   string  `json:"sku"`
		Price float64 `json:"price"`
	} `json:"lines"`
	Qty      int32          `json:"qty,omitempty"`
	Paid     bool           `json:"paid"`
	Receipt  []byte         `json:"receipt"`
	Extra    map[string]any `json:"extra"`
	Note     *string        `json:"note"`
	internal int
	Skipped  string `json:"-"`
	Also     string `tigris:"-"`
	Plain    string
}

func TestSchemaOf(t *testing.T) {
	got, err := client.SchemaOf[Order]("orders")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"title":"orders","properties":{"shop":{"type":"string"},"number":{"type":"integer"},` +
		`"created_at":{"type":"string","format":"date-time"},` +
		`"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"price":{"type":"number"}}}},` +
		`"qty":{"type":"integer","format":"int32"},"paid":{"type":"boolean"},"receipt":{"type":"string","format":"byte"},` +
		`"extra":{"type":"object"},"note":{"type":"string"},"Plain":{"type":"string"}},"primary_key":["shop","number"]}`
	if string(got) != want {
		t.Fatalf("SchemaOf:\n got %s\nwant %s", got, want)
	}
	got, err = client.SchemaOf[*User]("users")
	if err != nil || !strings.Contains(string(got), `"id":{"type":"integer","autoGenerate":true}`) || !strings.HasSuffix(string(got), `"primary_key":["id"]}`) {
		t.Fatalf("SchemaOf[*User]: %s %v", got, err)
	}

	type twoFirst struct {
		A string `tigris:"primaryKey:1"`
		B string `tigris:"primaryKey:1"`
	}
	type badTag struct {
		A string `tigris:"primaryKey:x"`
	}
	type unknownTag struct {
		A string `tigris:"index"`
	}
	type nestedKey struct {
		In struct {
			A string `tigris:"primaryKey"`
		}
	}
	type loop struct {
		Next *loop
	}
	type iface struct{ X any }
	type unsigned struct{ X uint64 }
	for name, f := range map[string]func(string) ([]byte, error){
		"two first key fields": client.SchemaOf[twoFirst],
		"bad key order":        client.SchemaOf[badTag],
		"unknown tag":          client.SchemaOf[unknownTag],
		"nested key":           client.SchemaOf[nestedKey],
		"self-containing":      client.SchemaOf[loop],
		"interface":            client.SchemaOf[iface],
		"uint64":               client.SchemaOf[unsigned],
		"not a struct":         client.SchemaOf[int],
	} {
		if s, err := f("x"); err == nil {
			t.Errorf("%s: no error, schema %s", name, s)
		}
	}
}
