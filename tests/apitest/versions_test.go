package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// versionedSchema is one of the original TestSchemaVersion's schemas of
// collection coll: "base" (two fields), "one" (three) and "two" (four),
// and "three" (five), at version v (0 leaves the member out).
func versionedSchema(coll, variant string, v int) string {
	props := `"int_value":{"type":"integer"},"string_value":{"type":"string"}`
	switch variant {
	case "three":
		props += `,"string_value3":{"type":"string"}`
		fallthrough
	case "two":
		props += `,"string_value2":{"type":"string"}`
		fallthrough
	case "one":
		props += `,"string_value1":{"type":"string"}`
	}
	version := ""
	if v != 0 {
		version = fmt.Sprintf(`"version":%d,`, v)
	}
	return fmt.Sprintf(`{"schema":{%s"title":"%s","properties":{%s}}}`, version, coll, props)
}

// schemaVersionOf is the "version" member of the collection's schema as
// describe shows it (0 without one).
func schemaVersionOf(t *testing.T, c *client, project, coll string) int {
	t.Helper()
	var desc struct {
		Schema struct {
			Version int `json:"version"`
		} `json:"schema"`
	}
	r := c.ok(t, "POST", p23Coll(project, coll, "describe"), "")
	if err := json.Unmarshal(r.body, &desc); err != nil {
		t.Fatalf("describe: %s: %v", r, err)
	}
	return desc.Schema.Version
}

// TestSchemaVersion is the original's test of the same name (its final
// release's test/v1/server/schema_test.go), step for step over the 2023
// routes, with every refusal checked to change nothing, then what it left
// out: the 2022 route, CreateOrUpdateCollections, a branch, and the
// Tigris-Schema-Version header, which the original neither read nor sent.
func TestSchemaVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const p, a, b = "versions", "coll", "coll_1"
		create := func(coll, variant string, v int) *response {
			return c.do(t, "POST", p23Coll(p, coll, "createOrUpdate"), versionedSchema(coll, variant, v))
		}
		refused := func(r *response, before, message string) {
			t.Helper()
			wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", message)
			if after := c.snapshot(t); after != before {
				t.Errorf("refused with %q, yet changed:\n%s\nwas\n%s", message, after, before)
			}
		}
		c.ok(t, "POST", projectPath(p, "create"), "")
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "base", 0)) // a's version 1
		c.ok(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "base", 0)) // b's 1
		c.ok(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "one", 0))  // b's 2

		// The first version must be above every collection's: 3.
		refused(create(a, "one", 1), c.snapshot(t), "next schema version should be 3")
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "one", 5))
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "two", 6))
		c.ok(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "two", 7))
		refused(create(a, "one", 3), c.snapshot(t), "schema version cannot be less than 5")
		refused(create(a, "two", 5), c.snapshot(t), "historical schema mismatch. provided version 5. current version 7")
		// An old version's own schema is accepted, and changes nothing.
		before := c.snapshot(t)
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "one", 5))
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "two", 7))
		if after := c.snapshot(t); after != before {
			t.Errorf("an old version's schema changed the data:\n%s\nwas\n%s", after, before)
		}
		if v := schemaVersionOf(t, c, p, a); v != 6 {
			t.Errorf("describe shows version %d, want 6: the schema as it was last changed", v)
		}
		refused(create(a, "one", 7), c.snapshot(t), "historical schema mismatch. provided version 7. current version 7")

		// In a transaction: every schema at the version of its first.
		tx := c.begin(t, p)
		tx.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "two", 7))
		before = c.snapshot(t)
		wantError(t, tx.do(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "one", 5)),
			http.StatusBadRequest, "INVALID_ARGUMENT", "collection schema version should be the same in the transaction. got 5 expected 7")
		tx.ok(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "two", 7))
		tx.ok(t, "POST", p23Path(p, "transactions/commit"), "")
		if after := c.snapshot(t); after != before {
			t.Errorf("the transaction changed the data:\n%s\nwas\n%s", after, before)
		}

		// A new version in a transaction, refused inside it: nothing of
		// the transaction is left, and the version is still to take.
		tx = c.begin(t, p)
		tx.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), versionedSchema(a, "three", 8))
		wantError(t, tx.do(t, "POST", p23Coll(p, b, "createOrUpdate"), versionedSchema(b, "base", 0)),
			http.StatusBadRequest, "INVALID_ARGUMENT", "collection schema version should be the same in the transaction. got 0 expected 8")
		tx.ok(t, "POST", p23Path(p, "transactions/rollback"), "")
		refused(create(a, "three", 9), c.snapshot(t), "next schema version should be 8")
		refused(create(a, "base", 0), c.snapshot(t), "schema version cannot be less than 5")

		// The 2022 route reaches the same database: the same rules.
		refused(c.do(t, "POST", collPath(p, a, "createOrUpdate"), versionedSchema(a, "one", 7)), c.snapshot(t),
			"historical schema mismatch. provided version 7. current version 7")
		c.ok(t, "POST", collPath(p, a, "createOrUpdate"), versionedSchema(a, "two", 6))

		// CreateOrUpdateCollections: one transaction, one version.
		schemas := func(s ...string) string {
			for i := range s {
				s[i] = strings.TrimSuffix(strings.TrimPrefix(s[i], `{"schema":`), "}")
			}
			return `{"schemas":[` + strings.Join(s, ",") + `]}`
		}
		before = c.snapshot(t)
		wantError(t, c.do(t, "POST", p23Path(p, "collections/createOrUpdate"), schemas(versionedSchema(a, "three", 8), versionedSchema(b, "three", 7))),
			http.StatusBadRequest, "INVALID_ARGUMENT",
			"schemas[1] (collection 'coll_1'): collection schema version should be the same in the transaction. got 7 expected 8; no collection was created or changed")
		if after := c.snapshot(t); after != before {
			t.Errorf("a refused createOrUpdate of two changed the data:\n%s\nwas\n%s", after, before)
		}
		c.ok(t, "POST", p23Path(p, "collections/createOrUpdate"), schemas(versionedSchema(a, "three", 8), versionedSchema(b, "three", 8), versionedSchema("coll_2", "one", 8)))
		for coll, want := range map[string]int{a: 8, b: 8, "coll_2": 8} {
			if v := schemaVersionOf(t, c, p, coll); v != want {
				t.Errorf("%s: version %d, want %d", coll, v, want)
			}
		}

		// A branch starts at main's version, without main's lowest: a
		// schema without a version changes a collection there.
		c.ok(t, "POST", p23Path(p, "branches/dev/create"), "")
		c.ok(t, "POST", p23Coll(p, "coll_3", "createOrUpdate"), withBranch(versionedSchema("coll_3", "base", 0), "dev"))
		wantError(t, c.do(t, "POST", p23Coll(p, a, "createOrUpdate"), withBranch(versionedSchema(a, "three", 10), "dev")),
			http.StatusBadRequest, "INVALID_ARGUMENT", "next schema version should be 9")
		c.ok(t, "POST", p23Coll(p, a, "createOrUpdate"), withBranch(versionedSchema(a, "three", 9), "dev"))
		// Main is where it was.
		wantError(t, create(a, "three", 10), http.StatusBadRequest, "INVALID_ARGUMENT", "next schema version should be 9")

		// The header: the final Go client sends its version in
		// Tigris-Schema-Version; the schema's member is what counts, and
		// no answer carries the header.
		req, err := http.NewRequest("POST", c.base+p23Coll(p, "coll_4", "createOrUpdate"), strings.NewReader(versionedSchema("coll_4", "one", 8)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Tigris-Schema-Version", "3")
		r := c.doRequest(t, req)
		if r.status != http.StatusOK || r.header.Get("Tigris-Schema-Version") != "" {
			t.Errorf("with Tigris-Schema-Version 3 and version 8 in the schema: %s, headers %v", r, r.header)
		}
	})
}
