package schemagen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

// edit is one place where Folio's final text differs from the final
// server's, on purpose: old, in beta.122's text, is new in Folio's.
type edit struct {
	old, new string
	why      string
}

// The reasons of the edits (docs/api.md lists them too).
const (
	whyEquals = "Java: == compares strings, dates and UUIDs by reference, and a byte[] by identity: equal documents read twice were not equal"
	whyHash   = "Java: Objects.hash of an array hashes its identity"
	whyDims   = "an array of arrays has every dimension (beta.122 wrote one [], which does not hold the values)"
	whyKey    = "beta.122's unit test generated a schema without a primary key; a collection always has one (Folio's default id, as the server stored it)"
	whyAuto   = "input adapted: Folio refuses autoGenerate on a field outside the primary key, so the test's schema has none there"
	whyStamp  = "TypeScript refuses an object literal with the key timestamp twice; JavaScript would keep the second, createdAt"
)

// beta122Cases are the schemas of the final server's own tests, with its
// expected texts in testdata/beta122 as it wrote them (its integration
// test TestDescribeCollectionSchemaFormat's test_collection, and its
// generator's unit tests' types, tags, object and no_tag); the schemas
// are there as Folio reads them (tags.json and object.json adapted, see
// the edits).
var beta122Cases = []struct {
	name, collection string
	edits            map[Format][]edit
}{
	{"test_collection", "test_collection", map[Format][]edit{
		Java: {
			{"product == other.product", "Objects.equals(product, other.product)", whyEquals},
			{"name == other.name", "Objects.equals(name, other.name)", whyEquals},
			{"added_string_value == other.added_string_value", "Objects.equals(added_string_value, other.added_string_value)", whyEquals},
			{"bytes_value == other.bytes_value", "Arrays.equals(bytes_value, other.bytes_value)", whyEquals},
			{"date_time_value == other.date_time_value", "Objects.equals(date_time_value, other.date_time_value)", whyEquals},
			{"string_value == other.string_value", "Objects.equals(string_value, other.string_value)", whyEquals},
			{"uuid_value == other.uuid_value", "Objects.equals(uuid_value, other.uuid_value)", whyEquals},
			{"            array_value,\n", "            Arrays.hashCode(array_value),\n", whyHash},
			{"            bytes_value,\n", "            Arrays.hashCode(bytes_value),\n", whyHash},
			{"            simple_array_value,\n", "            Arrays.hashCode(simple_array_value),\n", whyHash},
		},
	}},
	{"types", "products", map[Format][]edit{
		Go: {
			{"Id int32 `json:\"id\"`", "Id int32 `json:\"id\" tigris:\"primaryKey:1\"`", whyKey},
			{"TwoDArrs []int64", "TwoDArrs [][]int64", whyDims},
		},
		TypeScript: {
			{"\nexport class Product {", "\n@TigrisCollection(\"products\")\nexport class Product {", whyKey},
			{"  @Field(TigrisDataTypes.INT32)\n  id: number;", "  @PrimaryKey(TigrisDataTypes.INT32, { order: 1 })\n  id: number;", whyKey},
		},
		Java: {
			{"\nclass Product {", "\n@com.tigrisdata.db.annotation.TigrisCollection(value = \"products\")\npublic class Product implements TigrisCollectionType {", whyKey},
			{"    private int id;", "    @TigrisPrimaryKey(order = 1)\n    private int id;", whyKey},
			{"long[] twoDArr", "long[][] twoDArr", whyDims},
			{"long[] getTwoDArr", "long[][] getTwoDArr", whyDims},
			{"long[] twoDArrs", "long[][] twoDArrs", whyDims}, // the setter's and the constructor's
			{"long[] twoDArrs", "long[][] twoDArrs", whyDims},
			{"byte1 == other.byte1", "Arrays.equals(byte1, other.byte1)", whyEquals},
			{"name == other.name", "Objects.equals(name, other.name)", whyEquals},
			{"time1 == other.time1", "Objects.equals(time1, other.time1)", whyEquals},
			{"Arrays.equals(twoDArr, other.twoDArr)", "Arrays.deepEquals(twoDArr, other.twoDArr)", whyDims},
			{"uUID1 == other.uUID1", "Objects.equals(uUID1, other.uUID1)", whyEquals},
			{"            arrIntPtrPtrs,\n", "            Arrays.hashCode(arrIntPtrPtrs),\n", whyHash},
			{"            arrIntPtrs,\n", "            Arrays.hashCode(arrIntPtrs),\n", whyHash},
			{"            arrInts,\n", "            Arrays.hashCode(arrInts),\n", whyHash},
			{"            byte1,\n", "            Arrays.hashCode(byte1),\n", whyHash},
			{"            twoDArr,\n", "            Arrays.deepHashCode(twoDArr),\n", whyHash},
		},
	}},
	{"tags", "products", map[Format][]edit{
		Go: {
			{"Gen int32 `tigris:\"autoGenerate\"`", "Gen int32", whyAuto},
			{"NameGen int32 `json:\"name_gen\" tigris:\"autoGenerate\"`", "NameGen int32 `json:\"name_gen\"`", whyAuto},
		},
		TypeScript: {
			{"@Field(TigrisDataTypes.INT32, { autoGenerate: true })\n  Gen?: number;", "@Field(TigrisDataTypes.INT32)\n  Gen: number;", whyAuto},
			{"@Field(TigrisDataTypes.INT32, { autoGenerate: true })\n  name_gen?: number;", "@Field(TigrisDataTypes.INT32)\n  name_gen: number;", whyAuto},
			{`timestamp: "updatedAt", timestamp: "createdAt"`, `timestamp: "createdAt"`, whyStamp},
		},
		Java: {
			{"    @TigrisPrimaryKey(autoGenerate = true)\n    private int Gen;", "    private int Gen;", whyAuto},
			{"    @TigrisPrimaryKey(autoGenerate = true)\n    private int name_gen;", "    private int name_gen;", whyAuto},
			{"def_val_cuid == other.def_val_cuid", "Objects.equals(def_val_cuid, other.def_val_cuid)", whyEquals},
			{"def_val_date == other.def_val_date", "Objects.equals(def_val_date, other.def_val_date)", whyEquals},
			{"def_val_date_const == other.def_val_date_const", "Objects.equals(def_val_date_const, other.def_val_date_const)", whyEquals},
			{"def_val_str == other.def_val_str", "Objects.equals(def_val_str, other.def_val_str)", whyEquals},
			{"def_val_str_q == other.def_val_str_q", "Objects.equals(def_val_str_q, other.def_val_str_q)", whyEquals},
			{"def_val_uuid == other.def_val_uuid", "Objects.equals(def_val_uuid, other.def_val_uuid)", whyEquals},
			{"max_len_str == other.max_len_str", "Objects.equals(max_len_str, other.max_len_str)", whyEquals},
			{"max_len_str_req == other.max_len_str_req", "Objects.equals(max_len_str_req, other.max_len_str_req)", whyEquals},
			{"name_si == other.name_si", "Objects.equals(name_si, other.name_si)", whyEquals},
			{"name_sifs == other.name_sifs", "Objects.equals(name_sifs, other.name_sifs)", whyEquals},
			{"time_f == other.time_f", "Objects.equals(time_f, other.time_f)", whyEquals},
		},
	}},
	{"object", "products", map[Format][]edit{
		// beta.122's schema has primary_key ["Id"] and no Id property,
		// which Folio refuses: object.json has no primary_key, so Folio's
		// default id is the key, first in name order.
		Go:         {{"type Product struct {\n", "type Product struct {\n\tId uuid.UUID `json:\"id\" tigris:\"primaryKey:1,autoGenerate\"`\n", whyKey}},
		TypeScript: {{"export class Product {\n", "export class Product {\n  @PrimaryKey(TigrisDataTypes.UUID, { order: 1, autoGenerate: true })\n  id?: string;\n\n", whyKey}},
		Java: {
			{"            subArrayNesteds,\n", "            Arrays.hashCode(subArrayNesteds),\n", whyHash},
			{"implements TigrisCollectionType {\n", "implements TigrisCollectionType {\n    @TigrisPrimaryKey(order = 1, autoGenerate = true)\n    private UUID id;\n", whyKey},
			{"\n    public SubArray[] getSubArrays", "\n    public UUID getId() {\n        return id;\n    }\n\n    public void setId(UUID id) {\n        this.id = id;\n    }\n\n    public SubArray[] getSubArrays", whyKey},
			{"    public Product(\n", "    public Product(\n        UUID id,\n", whyKey},
			{"    ) {\n        this.subArrays", "    ) {\n        this.id = id;\n        this.subArrays", whyKey},
			{"            Arrays.equals(subArrays, other.subArrays)", "            Objects.equals(id, other.id) &&\n            Arrays.equals(subArrays, other.subArrays)", whyKey},
			{"            subArrays,\n", "            id,\n            Arrays.hashCode(subArrays),\n", whyHash},
		},
	}},
	{"no_tag", "products", map[Format][]edit{
		Go: {{"\tName string\n}", "\tName string\n\tId uuid.UUID `json:\"id\" tigris:\"primaryKey:1,autoGenerate\"`\n}", whyKey}},
	}},
}

var formatExt = map[Format]string{Go: "go", TypeScript: "ts", Java: "java"}

func beta122Schema(t testing.TB, name, collection string) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "beta122", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse(collection, raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestGenerateFinalMatchesBeta122 checks the Final style against the
// final server's own expected texts: byte for byte, but for the listed
// edits, each of which must still apply.
func TestGenerateFinalMatchesBeta122(t *testing.T) {
	for _, c := range beta122Cases {
		s := beta122Schema(t, c.name, c.collection)
		for f, ext := range formatExt {
			path := filepath.Join("testdata", "beta122", c.name+"."+ext+".txt")
			raw, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				continue // beta.122's test had no text in this language
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Run(c.name+"/"+ext, func(t *testing.T) {
				want := string(raw)
				for _, e := range c.edits[f] {
					if !strings.Contains(want, e.old) {
						t.Fatalf("edit %q (%s) no longer applies", e.old, e.why)
					}
					want = strings.Replace(want, e.old, e.new, 1)
				}
				if got := Generate(s, f, Final); got != want {
					t.Errorf("differs from %s with its edits:\n%s", path, lineDiff(want, got))
				}
			})
		}
	}
}

// TestGenerateFinalGolden is TestGenerateGolden for the Final style over
// the same cases (testdata/final; go test -update rewrites them): the
// names, nesting and descriptions the final server's tests do not reach.
func TestGenerateFinalGolden(t *testing.T) {
	for _, c := range cases {
		s := parseCase(t, c.name, c.schema)
		for f, ext := range extensions {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				got := Generate(s, f, Final)
				path := filepath.Join("testdata", "final", c.name+"."+ext)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -update writes it)", err)
				}
				if got != string(want) {
					t.Errorf("output differs from %s:\n%s", path, lineDiff(string(want), got))
				}
			})
		}
	}
}

// TestFinalStyleOnlyWhereAsked checks that the styles differ where they
// should, so that a Generate that ignored its style is caught.
func TestFinalStyleOnlyWhereAsked(t *testing.T) {
	s := beta122Schema(t, "test_collection", "test_collection")
	for f := range formatExt {
		if Generate(s, f, Style2022) == Generate(s, f, Final) {
			t.Errorf("%s: the 2022 and final texts are the same", f)
		}
	}
	if got := Generate(s, Go, Style2022); !strings.Contains(got, "ArrayValue  []ArrayValue") && !strings.Contains(got, "ArrayValue []ArrayValue") {
		t.Errorf("2022 Go text does not name the array field as its property:\n%s", got)
	}
}

func TestPlural(t *testing.T) {
	for in, want := range map[string]string{
		"ArrayValue": "ArrayValues", "Tags": "Tags", "Tag": "Tags", "Address": "Addresses", "Status": "Statuses",
		"Box": "Boxes", "Match": "Matches", "Dish": "Dishes", "Category": "Categories", "Day": "Days",
		"Person": "People", "UserPerson": "UserPeople", "People": "People", "Analysis": "Analyses",
		"Data": "Data", "TwoDArr": "TwoDArrs", "ArrIntPtrPtrs": "ArrIntPtrPtrs", "SubArrayNesteds": "SubArrayNesteds",
		"Class": "Classes", "Alias": "Aliases", "Leaf": "Leaves", "X3": "X3s", "USER": "USERS", "Child": "Children",
	} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
}
