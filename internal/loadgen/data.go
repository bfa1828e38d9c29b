package loadgen

import (
	"math/rand/v2"
	"strconv"
)

// The documents of every workload: about 1 KB each, like YCSB's records of
// ten 100-byte fields, with two fields more for Folio's own queries.
//
//	{"id": 42, "email": "user42@example.com", "score": 7313, "group": "g10",
//	 "field0": "…100 letters…", …, "field8": "…"}
//
// id is the primary key. email is unique, for equality on a non-key field.
// score is an integer that spreads the ids over [0, Docs) in an order
// unrelated to the key (a permutation while no document was inserted), for
// ranges on a non-key field. group takes one of Groups values, for an
// equality that matches many documents.
const (
	// Fields is the number of filler fields, field0 to field(Fields-1).
	Fields = 9
	// FieldLength is the length in bytes of each filler value.
	FieldLength = 100
	// Groups is the number of distinct values of the group field.
	Groups = 16
)

// FieldNames are the filler fields that updates change.
var FieldNames = func() []string {
	names := make([]string, Fields)
	for i := range names {
		names[i] = "field" + strconv.Itoa(i)
	}
	return names
}()

// Dataset describes the documents of a run; the same Dataset gives the same
// documents on every driver.
type Dataset struct {
	// Docs is the number of documents loaded: ids 0 to Docs-1.
	Docs int64
	// Seed makes the filler text, and so the documents, reproducible.
	Seed uint64
}

// Email returns the email field of document id.
func Email(id int64) string { return "user" + strconv.FormatInt(id, 10) + "@example.com" }

// Group returns the group field of document id: "g" and id mod Groups.
func Group(id int64) string { return "g" + strconv.FormatInt(id%Groups, 10) }

// Score returns the score field of document id: (id·p) mod Docs for a p
// coprime with Docs, which maps the loaded ids one to one onto [0, Docs).
func (d Dataset) Score(id int64) int64 {
	n := max(d.Docs, 1)
	return int64((uint64(id) * d.scoreMultiplier()) % uint64(n))
}

// scoreMultiplier returns the smallest number from a large odd start that
// is coprime with Docs.
func (d Dataset) scoreMultiplier() uint64 {
	n := uint64(max(d.Docs, 1))
	p := uint64(2654435761) % n
	for p == 0 || gcd(p, n) != 1 {
		p++
		if p >= n {
			p = 1
		}
	}
	return p
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Document returns the JSON of document id. Both drivers store exactly
// these bytes.
func (d Dataset) Document(id int64) []byte {
	return d.AppendDocument(make([]byte, 0, 1100), id)
}

// AppendDocument appends the JSON of document id to b.
func (d Dataset) AppendDocument(b []byte, id int64) []byte {
	r := rand.New(rand.NewPCG(d.Seed, uint64(id)))
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"email":"`...)
	b = append(b, Email(id)...)
	b = append(b, `","score":`...)
	b = strconv.AppendInt(b, d.Score(id), 10)
	b = append(b, `,"group":"g`...)
	b = strconv.AppendInt(b, id%Groups, 10)
	b = append(b, '"')
	for _, name := range FieldNames {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":"`...)
		b = appendText(b, r, FieldLength)
		b = append(b, '"')
	}
	return append(b, '}')
}

// Text returns n random lowercase letters: a new field value.
func Text(r *rand.Rand, n int) string { return string(appendText(nil, r, n)) }

func appendText(b []byte, r *rand.Rand, n int) []byte {
	for i := 0; i < n; i++ {
		b = append(b, byte('a'+r.IntN(26)))
	}
	return b
}

// Schema returns the body of the HTTP call that creates the collection:
// the Folio schema of the documents under "schema" (the PostgreSQL driver
// keeps them in one jsonb column instead).
func Schema(collection string) []byte {
	return append(append([]byte(`{"schema":`), schemaObject(collection)...), '}')
}

// schemaObject is the collection's schema itself, as a gRPC request holds
// it.
func schemaObject(collection string) []byte {
	b := []byte(`{"title":"` + collection + `","primary_key":["id"],"properties":{` +
		`"id":{"type":"integer"},"email":{"type":"string"},"score":{"type":"integer"},"group":{"type":"string"}`)
	for _, name := range FieldNames {
		b = append(b, `,"`+name+`":{"type":"string"}`...)
	}
	return append(b, "}}"...)
}
