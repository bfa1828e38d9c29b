package main

// The generator's input: what the client calls, and where the HTTP API's
// JSON differs from the messages' own names. Everything else (numbers,
// names, kinds, sub-messages) is read from the descriptors.

// call is a gRPC method the client calls.
type call struct {
	// method is the full method name the client calls (/package.Service/Method).
	method string
	// declaredAs is the method's name in the definitions, where the client
	// calls it by another that the server serves beside it.
	declaredAs string
	// answer is the message the server answers this client with, where it
	// is not the declared output (the generations' messages differ).
	answer string
}

// calls are the gRPC methods the client calls (client/routes.go names
// each with its messages' shapes).
var calls = []call{
	{method: "/tigrisdata.v1.Tigris/GetInfo"},
	{method: "/HealthAPI/Health"},

	{method: "/tigrisdata.v1.Tigris/CreateDatabase"},
	{method: "/tigrisdata.v1.Tigris/DropDatabase"},
	{method: "/tigrisdata.v1.Tigris/ListDatabases"},
	// Declared with 2023's answer; 2022's request is answered with 2022's
	// message, of another numbering.
	{method: "/tigrisdata.v1.Tigris/DescribeDatabase", answer: "tigrisdata.v1.DescribeDatabaseResponse2022"},

	{method: "/tigrisdata.v1.Tigris/CreateOrUpdateCollection"},
	{method: "/tigrisdata.v1.Tigris/DropCollection"},
	{method: "/tigrisdata.v1.Tigris/ListCollections"},
	{method: "/tigrisdata.v1.Tigris/DescribeCollection"},

	{method: "/tigrisdata.v1.Tigris/Insert"},
	{method: "/tigrisdata.v1.Tigris/Replace"},
	{method: "/tigrisdata.v1.Tigris/Update"},
	{method: "/tigrisdata.v1.Tigris/Delete"},
	{method: "/tigrisdata.v1.Tigris/Read"},
	{method: "/tigrisdata.v1.Tigris/Search"},
	{method: "/tigrisdata.v1.Folio/Aggregate"},

	{method: "/tigrisdata.v1.Tigris/Events"},
	{method: "/tigrisdata.v1.Tigris/Publish"},
	{method: "/tigrisdata.v1.Tigris/Subscribe"},

	{method: "/tigrisdata.v1.Tigris/BeginTransaction"},
	{method: "/tigrisdata.v1.Tigris/CommitTransaction"},
	{method: "/tigrisdata.v1.Tigris/RollbackTransaction"},

	{method: "/tigrisdata.admin.v1.Admin/createNamespace"},
	{method: "/tigrisdata.admin.v1.Admin/listNamespaces"},
	{method: "/tigrisdata.management.v1.Management/DeleteNamespace"},
	{method: "/tigrisdata.user.v1.User/createApplication"},
	{method: "/tigrisdata.user.v1.User/listApplications"},
	{method: "/tigrisdata.user.v1.User/rotateApplicationSecret"},
	{method: "/tigrisdata.user.v1.User/deleteApplication"},
	// The client calls it by its 2022 name, in lower camel case.
	{method: "/tigrisdata.auth.v1.Auth/getAccessToken", declaredAs: "GetAccessToken"},
}

// statusMessages are the messages of a gRPC status the client reads
// (client/grpc.go): the status and the details the server sends.
var statusMessages = []string{"google.rpc.Status", "google.rpc.ErrorInfo", "google.rpc.RetryInfo"}

// jsonNames are the fields whose member in the HTTP API's JSON is not
// the field's name, by the field's full name; "" leaves the field out of
// the shape, where its name is another field's in the JSON.
var jsonNames = map[string]string{
	// HTTP's keys are the messages' resume tokens (Folio's field); the
	// published keys (3), JSON the official clients parse, are gRPC's only.
	"tigrisdata.v1.PublishResponse.resume_tokens": "keys",
	"tigrisdata.v1.PublishResponse.keys":          "",
}

// renamedIn2022 is the field 2023 renamed: a message of package
// tigrisdata.v1 has it at number 1 with 2023's name, and the client,
// which speaks 2022's generation, names it as 2022 did.
var renamedIn2022 = struct {
	number       int32
	name, as2022 string
}{1, "project", "db"}

// bytesHoldJSON says, by field name, what a bytes field of the API's own
// messages (packages tigrisdata.*) holds: JSON text (documents, filters,
// schemas; true), which the HTTP API carries as JSON as it is, or opaque
// bytes (keys of the log, tokens; false), which it carries as a base64
// string, as protobuf's JSON mapping does. The definitions cannot say it
// (protobuf has one bytes type), and it is a property of the API's
// names: a filter is JSON in every message. A bytes field whose name is
// not here stops the generator, so that a new one is decided, not
// guessed. Bytes fields of other packages (google.protobuf.Any's value)
// are protobuf's: base64.
var bytesHoldJSON = map[string]bool{
	"data":      true,
	"documents": true,
	"facet":     true,
	"fields":    true,
	"filter":    true,
	"group_by":  true,
	"keys":      true,
	"message":   true,
	"messages":  true,
	"result":    true,
	"schema":    true,
	"sort":      true,
	"vector":    true,

	"key":           false,
	"lkey":          false,
	"offset":        false,
	"resume_token":  false,
	"resume_tokens": false,
	"rkey":          false,
	"tx_id":         false,
}
