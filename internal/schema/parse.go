package schema

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/suggest"
)

// schemaKeys are the top-level members Parse reads (reference §5).
var schemaKeys = []string{"title", "description", "properties", "primary_key", "collection_type", "unique", "ttl"}

// clientSchemaKeys are the other top-level members a schema may have: what
// the official clients send besides schemaKeys, kept in the schema. version
// is the original's own and the final Go client's: the schema version,
// which the catalog checks (Schema.Version); the others change nothing, as
// the original server ignored them. required, index and source are the
// final Go client's; type and additionalProperties both TypeScript
// clients'; key the 2022 TypeScript client's, on a messages collection.
// $schema, $id and $comment are JSON Schema's annotations, which a schema
// written by hand or by a tool may carry.
var clientSchemaKeys = []string{"version", "required", "index", "source", "type", "additionalProperties", "key", "$schema", "$id", "$comment"}

// checkSchemaKeys refuses a top-level member that is neither read nor sent
// by a client. A typo there ("primary_keys") would otherwise be kept and
// ignored, and the collection created with another key than the one meant.
func checkSchemaKeys(top members) error {
	for _, m := range top {
		if slices.Contains(schemaKeys, m.name) || slices.Contains(clientSchemaKeys, m.name) {
			continue
		}
		if hint := suggest.Hint(m.name, schemaKeys); hint != "" {
			return invalidf("unsupported property found '%s' in schema%s", m.name, hint)
		}
		return invalidf("unsupported property found '%s' in schema: a schema has title, description, properties, primary_key, collection_type, unique and ttl", m.name)
	}
	return nil
}

// The property names a field definition may use (reference §5). Anything
// else is refused rather than ignored, so that a typo such as "max_length"
// does not silently leave a constraint out.
var fieldKeys = map[string]bool{
	"type":            true,
	"format":          true,
	"items":           true,
	"maxLength":       true,
	"description":     true,
	"contentEncoding": true,
	"properties":      true,
	"autoGenerate":    true,
	// sorted is the original's hint that a field will be sorted on. Every
	// field is sortable here, so it is kept in the schema and changes
	// nothing else.
	"sorted": true,
	// The final (2023) clients' annotations. index, searchIndex, sort and
	// facet ask for indexes and search options: every field is indexed,
	// searchable, sortable and facetable here, so they are kept and change
	// nothing. tags, required, additionalProperties, maxItems and id are
	// kept as well. default, createdAt, updatedAt, format "vector" and
	// dimensions have effects (defaults.go).
	"index": true, "searchIndex": true, "sort": true, "facet": true, "id": true,
	"tags": true, "required": true, "additionalProperties": true, "maxItems": true,
	"default": true, "createdAt": true, "updatedAt": true, "dimensions": true,
	// Folio's own: how a vector field's neighbours are measured.
	"distance": true,
	// Folio's own: no two documents may share the field's value (unique.go).
	"unique": true,
}

// fieldKeyList is fieldKeys in a fixed order, for suggestions.
var fieldKeyList = slices.Sorted(maps.Keys(fieldKeys))

// autoIDDefinition is the property added when a documents schema names no
// primary key and has no "id" field.
const autoIDDefinition = `"id":{"type":"string","format":"uuid","autoGenerate":true}`

// Parse parses the schema of the collection collectionName (reference §5),
// as a client sent it.
//
// The schema's title must equal collectionName. Of the other top-level
// members, those the official clients send (clientSchemaKeys) are kept and
// ignored, as the original server did; any other is refused. When a
// documents schema has no primary_key, Parse makes it ["id"] and, if there
// is no "id" property, adds
// {"type":"string","format":"uuid","autoGenerate":true}; Raw then returns the
// input with those two members appended. Field names must be non-empty and
// must not contain '.', which dot paths use as separator.
//
// Every error is an *Error with code INVALID_ARGUMENT.
func Parse(collectionName string, raw []byte) (*Schema, error) {
	return parse(collectionName, raw, true)
}

// ParseStored parses a schema that Parse accepted when it was stored.
// Unlike Parse it ignores unknown top-level members: servers before they
// were refused kept them, and their collections must still open.
func ParseStored(collectionName string, raw []byte) (*Schema, error) {
	return parse(collectionName, raw, false)
}

// parse is Parse, or ParseStored unless strict.
func parse(collectionName string, raw []byte, strict bool) (*Schema, error) {
	start, _, err := jsonscan.Whole(raw)
	if err != nil {
		return nil, invalidf("schema is not valid JSON: %v", err)
	}
	if jsonscan.KindAt(raw, start) != jsonscan.Object {
		return nil, invalidf("schema must be a JSON object")
	}
	top, topEnd, err := readMembers(raw, start, "schema")
	if err != nil {
		return nil, err
	}
	if strict {
		if err := checkSchemaKeys(top); err != nil {
			return nil, err
		}
	}

	s := &Schema{collectionType: Documents, paths: make(map[string]*Field)}

	if m, ok := top.get("collection_type"); ok {
		switch v, _ := m.str(raw); v {
		case "documents":
		case "messages", "topic":
			s.collectionType = Messages
		default:
			return nil, invalidf("unsupported collection type %s", quoteValue(m.text(raw)))
		}
	}

	title, _ := top.get("title")
	s.name, _ = title.str(raw)
	if s.name != collectionName || title.kind(raw) != jsonscan.String {
		return nil, invalidf("collection name is not same as schema name '%s' '%s'", collectionName, s.name)
	}

	if m, ok := top.get("description"); ok {
		if s.description, ok = m.str(raw); !ok {
			return nil, invalidf("schema description must be a string")
		}
	}
	if m, ok := top.get("version"); ok {
		if s.version, err = readVersion(raw, m); err != nil && strict {
			return nil, err
		}
	}

	pkNames, pkGiven, err := readPrimaryKey(raw, top)
	if err != nil {
		return nil, err
	}
	switch {
	case s.collectionType == Messages && len(pkNames) > 0:
		return nil, invalidf("setting primary key is not supported for messages collection")
	case s.collectionType == Documents && pkGiven && len(pkNames) == 0:
		return nil, invalidf("missing primary key field in schema")
	}
	defaultPK := s.collectionType == Documents && !pkGiven
	if defaultPK {
		pkNames = []string{"id"}
	}

	props, ok := top.get("properties")
	if !ok {
		return nil, invalidf("missing properties field in schema")
	}
	if props.kind(raw) != jsonscan.Object {
		return nil, invalidf("properties object is invalid")
	}
	isKey := make(map[string]bool, len(pkNames))
	for _, n := range pkNames {
		isKey[n] = true
	}
	fields, byName, propsInsert, err := parseProperties(raw, props.start, "", "", isKey, &budget{strict: strict}, 0)
	if err != nil {
		return nil, err
	}

	// The stored form is the input plus what defaulting added. Edits go
	// after the last member rather than before a closing brace, which keeps
	// any whitespace layout of the input intact.
	var edits []edit
	if _, hasID := byName["id"]; defaultPK && !hasID {
		text := autoIDDefinition
		if len(fields) > 0 {
			text = "," + text
		}
		edits = append(edits, edit{propsInsert, propsInsert, text})
		byName["id"] = len(fields)
		fields = append(fields, &Field{Name: "id", Path: "id", Type: UUID, AutoGenerate: true})
	}
	if defaultPK {
		if m, ok := top.getNull("primary_key"); ok {
			edits = append(edits, edit{m.start, m.end, `["id"]`})
		} else {
			edits = append(edits, edit{topEnd, topEnd, `,"primary_key":["id"]`})
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	s.raw = applyEdits(raw, edits)
	s.fields, s.byName = fields, byName
	s.defaults, s.stamps = hasDefaults(fields)
	if m, ok := top.get("required"); ok {
		if s.required, err = readRequired(raw, m, fields, byName, "the schema", strict); err != nil {
			return nil, err
		}
	}

	for _, n := range pkNames {
		i, ok := byName[n]
		if !ok {
			return nil, invalidf("missing primary key '%s' field in schema", n)
		}
		f := fields[i]
		if !f.Type.KeyType() {
			return nil, invalidf("unsupported primary key type detected '%s' for field '%s'", f.Type, n)
		}
		f.PrimaryKey = true
		s.primaryKey = append(s.primaryKey, f)
	}
	for _, f := range fields {
		s.index(f)
	}
	uniqueMember, hasUnique := top.get("unique")
	if err := s.readUnique(raw, uniqueMember, hasUnique); err != nil {
		return nil, err
	}
	if m, ok := top.get("ttl"); ok {
		// A stored schema from before ttl was read may hold anything
		// there (servers kept unknown members): it expires nothing.
		if err := s.readTTL(raw, m); err != nil && strict {
			return nil, err
		}
	}
	return s, nil
}

// readVersion reads the schema's version: a whole number that fits the
// original's uint32 (0 is no version, as the original took it).
func readVersion(raw []byte, m member) (int64, error) {
	v, err := strconv.ParseUint(m.text(raw), 10, 32)
	if m.kind(raw) != jsonscan.Number || err != nil {
		return 0, invalidf("schema version must be a whole number from 0 to %d, not %s", uint32(math.MaxUint32), quoteValue(m.text(raw)))
	}
	return int64(v), nil
}

// readPrimaryKey reads primary_key: a list of distinct, non-empty field
// names. given is false when the member is absent or null.
func readPrimaryKey(raw []byte, top members) (names []string, given bool, err error) {
	m, ok := top.get("primary_key")
	if !ok {
		return nil, false, nil
	}
	bad := invalidf("primary_key must be an array of field names")
	if m.kind(raw) != jsonscan.Array {
		return nil, false, bad
	}
	a, err := jsonscan.ArrayAt(raw, m.start)
	if err != nil {
		return nil, false, bad
	}
	for {
		v, ok, err := a.Next()
		if err != nil {
			return nil, false, bad
		}
		if !ok {
			return names, true, nil
		}
		e, _, err := jsonscan.StringEnd(raw, v)
		if err != nil {
			return nil, false, bad
		}
		n := unquoteSpan(raw, v, e)
		if n == "" {
			return nil, false, bad
		}
		for _, prev := range names {
			if prev == n {
				return nil, false, invalidf("duplicate primary key field '%s'", n)
			}
		}
		names = append(names, n)
		a.Resume(e)
	}
}

// edit replaces raw[start:end] with text; start == end inserts.
type edit struct {
	start, end int
	text       string
}

// applyEdits returns a copy of raw with the edits, which are in order and do
// not overlap, applied.
func applyEdits(raw []byte, edits []edit) []byte {
	n := len(raw)
	for _, e := range edits {
		n += len(e.text)
	}
	out := make([]byte, 0, n)
	pos := 0
	for _, e := range edits {
		out = append(out, raw[pos:e.start]...)
		out = append(out, e.text...)
		pos = e.end
	}
	return append(out, raw[pos:]...)
}

// MaxFields bounds the field definitions of a schema, at every depth (an
// array's items count as one). Parsing costs little per field, but every
// write builds the index entries and every read can filter on each field:
// at 2,000 a schema parses in milliseconds and its collection's documents
// stay cheap to index, far past what real collections declare, while a
// 2.5 MB schema of 90,000 fields took 30 seconds before there was a bound.
const MaxFields = 2000

// MaxDepth bounds how deep field definitions nest: a top-level field is at
// depth 1, the properties of an object or the items of an array one deeper.
// Validation, indexing and projection recurse once per level; 16 levels
// is more than any document model needs.
const MaxDepth = 16

// budget counts what a schema being parsed has used of its limits.
type budget struct {
	fields int
	strict bool // Parse, not ParseStored: refuse what only a client could send wrong
}

// field counts one more field definition, at depth.
func (b *budget) field(depth int, where string) error {
	if depth > MaxDepth {
		return invalidf("schema nests fields more than %d deep, at field '%s'", MaxDepth, where)
	}
	b.fields++
	if b.fields > MaxFields {
		return invalidf("schema has more than %d fields", MaxFields)
	}
	return nil
}

// parseProperties parses the properties object at raw[i], of the field
// parent (where names it in messages; both are empty at the top) which is
// at depth (0 at the top). isKey names the primary key fields when these
// are the top-level properties, and is nil below. insert is where a new
// property would be appended.
func parseProperties(raw []byte, i int, parent, where string, isKey map[string]bool, b *budget, depth int) (fields []*Field, byName map[string]int, insert int, err error) {
	ms, insert, err := readMembers(raw, i, "properties")
	if err != nil {
		return nil, nil, 0, err
	}
	byName = make(map[string]int, len(ms))
	for _, m := range ms {
		if !validFieldName(m.name) {
			return nil, nil, 0, invalidf("invalid field name '%s': a field name must not be empty or contain '.'", m.name)
		}
		if reservedFieldName(m.name) {
			// A filter reads a member starting with '$' as an operator,
			// so such a field could be stored but never queried.
			in := ""
			if where != "" {
				in = " in field '" + where + "'"
			}
			return nil, nil, 0, invalidf("invalid field name '%s'%s: a field name must not start with '$', which filters reserve for operators", m.name, in)
		}
		path := joinPath(parent, m.name)
		f, err := parseField(raw, m, m.name, path, path, isKey[m.name], b, depth+1)
		if err != nil {
			return nil, nil, 0, err
		}
		byName[m.name] = len(fields)
		fields = append(fields, f)
	}
	return fields, byName, insert, nil
}

// parseField parses one field definition, at depth. where names the field
// in messages (it differs from path for array items, shown as "tags[]").
func parseField(raw []byte, def member, name, path, where string, isKey bool, b *budget, depth int) (*Field, error) {
	if err := b.field(depth, where); err != nil {
		return nil, err
	}
	if def.kind(raw) != jsonscan.Object {
		return nil, invalidf("definition of field '%s' must be a JSON object", where)
	}
	ms, _, err := readMembers(raw, def.start, "field '"+where+"'")
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if !fieldKeys[m.name] {
			return nil, invalidf("unsupported property found '%s' in field '%s'%s", m.name, where, suggest.Hint(m.name, fieldKeyList))
		}
	}
	f := &Field{Name: name, Path: path}

	strMember := func(key string) (string, bool, error) {
		m, ok := ms.get(key)
		if !ok {
			return "", false, nil
		}
		v, ok := m.str(raw)
		if !ok {
			return "", false, invalidf("%s of field '%s' must be a string", key, where)
		}
		return v, true, nil
	}
	typ, hasType, err := readType(raw, ms, f, where)
	if err != nil {
		return nil, err
	}
	if !hasType {
		return nil, invalidf("missing type for field '%s'", where)
	}
	format, hasFormat, err := strMember("format")
	if err != nil {
		return nil, err
	}
	encoding, hasEncoding, err := strMember("contentEncoding")
	if err != nil {
		return nil, err
	}
	if f.Description, _, err = strMember("description"); err != nil {
		return nil, err
	}
	if typ == "array" && format == "vector" {
		f.Vector, hasFormat = true, false
	}
	if f.Type, err = fieldType(typ, format, hasFormat, encoding, hasEncoding, where); err != nil {
		return nil, err
	}

	if m, ok := ms.get("maxLength"); ok {
		if !f.Type.stringLike() {
			return nil, invalidf("maxLength is only supported on string fields, not on field '%s'", where)
		}
		n, ok := jsonscan.ParseInt(raw[m.start:m.end])
		if !ok || n < 1 || n > 1<<31-1 {
			return nil, invalidf("maxLength of field '%s' must be a positive integer", where)
		}
		f.MaxLength = int(n)
	}

	if m, ok := ms.get("autoGenerate"); ok {
		switch m.text(raw) {
		case "true":
			if !isKey {
				return nil, invalidf("autoGenerate is only supported on primary key fields, and '%s' is not one", where)
			}
			f.AutoGenerate = true
		case "false":
		default:
			return nil, invalidf("autoGenerate of field '%s' must be a boolean", where)
		}
	}

	if m, ok := ms.get("sorted"); ok {
		switch m.text(raw) {
		case "true":
			f.Sorted = true
		case "false":
		default:
			return nil, invalidf("sorted of field '%s' must be a boolean", where)
		}
	}

	if err := readMaxItems(raw, ms, f, where); err != nil {
		return nil, err
	}
	items, hasItems := ms.get("items")
	switch {
	case f.Vector && !hasItems:
		f.Items = &Field{Name: name, Path: path, Type: Number}
	case f.Type == Array && !hasItems && f.LimitItems && f.MaxItems == 0:
		// The original took an array without items when it could hold
		// nothing. The placeholder (a free-form object) gives the code
		// that walks arrays an element type, which no element will have.
		f.Items = &Field{Name: name, Path: path, Type: Object, FreeForm: true}
		f.noItems = true
	case f.Type == Array && !hasItems:
		return nil, invalidf("missing items for array field '%s'", where)
	case f.Type != Array && hasItems:
		return nil, invalidf("items is only supported on array fields, not on field '%s'", where)
	case hasItems:
		if f.Items, err = parseField(raw, items, name, path, where+"[]", false, b, depth+1); err != nil {
			return nil, err
		}
	}

	props, hasProps := ms.get("properties")
	switch {
	case f.Type != Object && hasProps:
		return nil, invalidf("properties is only supported on object fields, not on field '%s'", where)
	case f.Type == Object && !hasProps:
		f.FreeForm = true
	case hasProps:
		if props.kind(raw) != jsonscan.Object {
			return nil, invalidf("properties of field '%s' must be a JSON object", where)
		}
		if f.Properties, f.byName, _, err = parseProperties(raw, props.start, path, where, nil, b, depth); err != nil {
			return nil, err
		}
		if len(f.Properties) == 0 {
			f.Properties, f.byName, f.FreeForm = nil, nil, true
		}
	}
	if m, ok := ms.get("required"); ok && f.Type == Object && !f.FreeForm {
		if f.required, err = readRequired(raw, m, f.Properties, f.byName, "field '"+where+"'", b.strict); err != nil {
			return nil, err
		}
	}
	if err := parseAnnotations(raw, ms, f, where); err != nil {
		return nil, err
	}
	if err := readFieldUnique(raw, ms, f, where); err != nil {
		return nil, err
	}
	// A vector's dimensions size its graph: required and bounded on what
	// a client sends (a schema stored before they were, read back, keeps
	// its field, which the search indexer then leaves out of its graphs).
	if f.Vector && b.strict {
		switch {
		case f.Dimensions == 0:
			return nil, invalidf("Field '%s' type 'vector' is missing dimensions", where)
		case f.Dimensions > MaxVectorDimensions:
			return nil, invalidf("field '%s' has %d dimensions, above the limit of %d", where, f.Dimensions, MaxVectorDimensions)
		}
	}
	return f, nil
}

// MaxVectorDimensions bounds a vector field's dimensions.
const MaxVectorDimensions = 4096

// fieldType maps a JSON schema type, format and contentEncoding to a Type.
func fieldType(typ, format string, hasFormat bool, encoding string, hasEncoding bool, where string) (Type, error) {
	if hasEncoding && (typ != "string" || encoding != "base64") {
		return 0, invalidf("unsupported encoding '%s' for field '%s'", encoding, where)
	}
	badFormat := invalidf("unsupported format '%s' for field '%s'", format, where)
	switch typ {
	case "integer":
		switch {
		case !hasFormat || format == "int64":
			return Int64, nil
		case format == "int32":
			return Int32, nil
		}
		return 0, badFormat
	case "string":
		if hasEncoding {
			if hasFormat && format != "byte" {
				return 0, invalidf("format '%s' cannot be combined with contentEncoding 'base64' for field '%s'", format, where)
			}
			return Bytes, nil
		}
		switch {
		case !hasFormat:
			return String, nil
		case format == "byte":
			return Bytes, nil
		case format == "uuid":
			return UUID, nil
		case format == "date-time":
			return DateTime, nil
		}
		return 0, badFormat
	case "number", "boolean", "array", "object":
		if hasFormat {
			return 0, badFormat
		}
		return map[string]Type{"number": Number, "boolean": Bool, "array": Array, "object": Object}[typ], nil
	}
	return 0, invalidf("unsupported type detected '%s' for field '%s'", typ, where)
}

// getNull returns the member called name if its value is null.
func (ms members) getNull(name string) (member, bool) {
	for _, m := range ms {
		if m.name == name && m.null {
			return m, true
		}
	}
	return member{start: -1}, false
}

// member is one member of a JSON object in the schema text: its name and
// the span of its value.
type member struct {
	name       string
	start, end int
	null       bool
}

// members are the members of one object, in order.
type members []member

// get returns the member called name. A member whose value is null counts
// as absent: that is how JSON encoders write an unset optional member.
func (ms members) get(name string) (member, bool) {
	for _, m := range ms {
		if m.name == name && !m.null {
			return m, true
		}
	}
	return member{start: -1}, false
}

func (m member) kind(raw []byte) jsonscan.Kind {
	if m.start < 0 {
		return jsonscan.Invalid
	}
	return jsonscan.KindAt(raw, m.start)
}

// text returns the member's value as written.
func (m member) text(raw []byte) string {
	if m.start < 0 {
		return ""
	}
	return string(raw[m.start:m.end])
}

// str returns the member's value if it is a string.
func (m member) str(raw []byte) (string, bool) {
	if m.kind(raw) != jsonscan.String {
		return "", false
	}
	return unquoteSpan(raw, m.start, m.end), true
}

// readMembers lists the members of the object at raw[i] (whose syntax has
// been checked) and refuses duplicate names, which would make the schema
// ambiguous. insert is the end of the last member's value, or the offset
// just inside the opening brace when there are none.
func readMembers(raw []byte, i int, what string) (ms members, insert int, err error) {
	o, err := jsonscan.ObjectAt(raw, i)
	if err != nil {
		return nil, 0, invalidf("%s must be a JSON object", what)
	}
	insert = i + 1
	seen := names{}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return nil, 0, invalidf("%s is not valid JSON: %v", what, err)
		}
		if !ok {
			return ms, insert, nil
		}
		name := string(key)
		if escaped {
			name = jsonscan.Unquote(key)
		}
		if !seen.add(name) {
			return nil, 0, invalidf("duplicate key '%s' in %s", name, what)
		}
		e, err := jsonscan.End(raw, v)
		if err != nil {
			return nil, 0, invalidf("%s is not valid JSON: %v", what, err)
		}
		ms = append(ms, member{name: name, start: v, end: e, null: jsonscan.KindAt(raw, v) == jsonscan.Null})
		insert = e
		o.Resume(e)
	}
}

// names is a set of member names, a list while small: a schema object
// usually has a few, but a properties object may have thousands, and
// comparing each with all before it made a large schema cost seconds.
type names struct {
	list []string
	set  map[string]bool
}

// add adds name and reports whether it was new.
func (n *names) add(name string) bool {
	if n.set != nil {
		if n.set[name] {
			return false
		}
		n.set[name] = true
		return true
	}
	for _, s := range n.list {
		if s == name {
			return false
		}
	}
	n.list = append(n.list, name)
	if len(n.list) == 16 {
		n.set = make(map[string]bool, 32)
		for _, s := range n.list {
			n.set[s] = true
		}
	}
	return true
}

// unquoteSpan returns the string value of the literal raw[start:end].
func unquoteSpan(raw []byte, start, end int) string {
	return jsonscan.Unquote(raw[start+1 : end-1])
}

// quoteValue quotes a schema value for a message.
func quoteValue(text string) string {
	if len(text) > 1 && text[0] == '"' {
		return "'" + text[1:len(text)-1] + "'"
	}
	return "'" + text + "'"
}

// readType reads a field's type: a string, or an array of strings of
// which one is not "null" ("null" makes the field Nullable), as the
// original took them.
func readType(raw []byte, ms members, f *Field, where string) (string, bool, error) {
	m, ok := ms.get("type")
	if !ok {
		return "", false, nil
	}
	if v, ok := m.str(raw); ok {
		return v, true, nil
	}
	bad := invalidf("type of field '%s' must be a string or an array of strings", where)
	if m.kind(raw) != jsonscan.Array {
		return "", false, bad
	}
	a, _ := jsonscan.ArrayAt(raw, m.start)
	var types []string
	for {
		v, ok, err := a.Next()
		if err != nil {
			return "", false, bad
		}
		if !ok {
			break
		}
		e, _, err := jsonscan.StringEnd(raw, v)
		if err != nil {
			return "", false, bad
		}
		if t := unquoteSpan(raw, v, e); t == "null" {
			f.Nullable = true
		} else {
			types = append(types, t)
		}
		a.Resume(e)
	}
	switch len(types) {
	case 0:
		return "", false, nil
	case 1:
		return types[0], true, nil
	}
	return "", false, invalidf("only one non-null type allowed for the field '%s'", where)
}

// readMaxItems reads an array's maxItems, a non-negative integer.
func readMaxItems(raw []byte, ms members, f *Field, where string) error {
	m, ok := ms.get("maxItems")
	if !ok {
		return nil
	}
	n, isInt := jsonscan.ParseInt(raw[m.start:m.end])
	if !isInt || n < 0 || n > 1<<31-1 {
		return invalidf("maxItems of field '%s' must be a non-negative integer", where)
	}
	if f.Type != Array {
		return invalidf("maxItems is only supported on array fields, not on field '%s'", where)
	}
	f.MaxItems, f.LimitItems = int(n), true
	return nil
}

// readRequired reads "required", the names of the properties (fields,
// byName) of an object (what, for messages) that documents must have, and
// marks them Required. Parse refuses a name that is no property (no
// document could have it); ParseStored skips it.
func readRequired(raw []byte, m member, fields []*Field, byName map[string]int, what string, strict bool) ([]int, error) {
	if !stringArray(raw, m) {
		return nil, invalidf("required of %s must be an array of strings", what)
	}
	var out []int
	a, _ := jsonscan.ArrayAt(raw, m.start)
	for {
		v, ok, _ := a.Next()
		if !ok {
			return out, nil
		}
		e, _, _ := jsonscan.StringEnd(raw, v)
		a.Resume(e)
		name := unquoteSpan(raw, v, e)
		i, ok := byName[name]
		switch {
		case !ok && strict:
			return nil, invalidf("required field '%s' is not a property of %s", name, what)
		case !ok || fields[i].Required:
			continue
		}
		fields[i].Required = true
		out = append(out, i)
	}
}
