package client

// route is one call of the API on either transport: its HTTP method and
// path ({db}, {collection} and {name} stand for the request's
// parameters), and its gRPC method with the shapes of its request and
// answer (the messages of api/proto/tigrisdata/v1, the one definition of
// the wire format, with Folio's own fields numbered from 1001). The client
// restates only what it sends and reads, so that it imports the standard
// library alone; TestShapesMatchPublishedMessages checks every shape here
// against the generated descriptors, so the two cannot drift apart.
// A call's body is built once, as the HTTP API's JSON, and its answer is
// read as the HTTP API's JSON; the gRPC transport translates both.
type route struct {
	method, path string
	rpc          string // "" where the gRPC API has no such call
	req, res     *shape
	stream       bool // the answer is a stream of items
}

const (
	tigris = "/tigrisdata.v1.Tigris/"
	user   = "/tigrisdata.user.v1.User/"
	admin  = "/tigrisdata.admin.v1.Admin/"
)

// The shapes the routes share.
var (
	pbEmpty     = msg()
	pbDB        = msg(str(1, "db"))
	pbColl      = msg(str(1, "db"), str(2, "collection"))
	pbMessage   = msg(str(1, "message"), str(2, "status"))
	pbCollation = msg(str(1, "case"))
	pbResMeta   = msg(stamp(1, "created_at"), stamp(2, "updated_at"), stamp(3, "deleted_at"))
	pbWriteRes  = msg(sub(1, "metadata", pbResMeta), str(2, "status"), rep(raw(3, "keys")))
	pbDocuments = msg(str(1, "db"), str(2, "collection"), rep(raw(3, "documents")))
	pbSizes     = msg(integer(1, "documents"), integer(2, "indexes"), integer(3, "log"))
	pbCollDesc  = msg(str(1, "collection"), sub(2, "metadata", pbEmpty), raw(3, "schema"), integer(4, "size"), sub(1001, "sizes", pbSizes))
	pbWriteOpts = msg(sub(2, "collation", pbCollation), integer(3, "limit"))
	pbApp       = msg(str(1, "id"), str(2, "name"), str(3, "description"), str(4, "secret"), integer(5, "created_at"),
		str(6, "created_by"), integer(7, "updated_at"), str(8, "updated_by"), str(1001, "role"), str(1002, "namespace"))
	pbAppID = msg(str(1, "id"))
)

var (
	routeInfo = &route{method: "GET", path: "/v1/info", rpc: tigris + "GetInfo",
		req: pbEmpty, res: msg(str(1, "server_version"), str(1001, "engine"), boolean(1002, "auth"))}
	routeHealth = &route{method: "GET", path: "/v1/health", rpc: "/HealthAPI/Health",
		req: pbEmpty, res: msg(str(1, "response"))}

	routeCreateDatabase = &route{method: "POST", path: "/v1/databases/{db}/create", rpc: tigris + "CreateDatabase",
		req: pbDB, res: pbMessage}
	routeDropDatabase = &route{method: "DELETE", path: "/v1/databases/{db}/drop", rpc: tigris + "DropDatabase",
		req: pbDB, res: pbMessage}
	routeListDatabases = &route{method: "POST", path: "/v1/databases/list", rpc: tigris + "ListDatabases",
		req: pbEmpty, res: msg(rep(sub(1, "databases", msg(str(1, "db"), sub(2, "metadata", pbEmpty)))))}
	routeDescribeDatabase = &route{method: "POST", path: "/v1/databases/{db}/describe", rpc: tigris + "DescribeDatabase",
		req: pbDB, res: msg(str(1, "db"), sub(2, "metadata", pbEmpty), rep(sub(3, "collections", pbCollDesc)), integer(4, "size"),
			sub(1001, "sizes", pbSizes))}

	routeCreateCollection = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/createOrUpdate",
		rpc: tigris + "CreateOrUpdateCollection", req: msg(str(1, "db"), str(2, "collection"), raw(3, "schema")), res: pbMessage}
	routeDropCollection = &route{method: "DELETE", path: "/v1/databases/{db}/collections/{collection}/drop",
		rpc: tigris + "DropCollection", req: pbColl, res: pbMessage}
	routeListCollections = &route{method: "POST", path: "/v1/databases/{db}/collections/list", rpc: tigris + "ListCollections",
		req: pbDB, res: msg(str(1, "db"), rep(sub(2, "collections", msg(str(1, "collection"), sub(2, "metadata", pbEmpty)))))}
	routeDescribeCollection = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/describe",
		rpc: tigris + "DescribeCollection", req: pbColl, res: pbCollDesc}

	routeInsert = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/insert",
		rpc: tigris + "Insert", req: pbDocuments, res: pbWriteRes}
	routeReplace = &route{method: "PUT", path: "/v1/databases/{db}/collections/{collection}/documents/replace",
		rpc: tigris + "Replace", req: pbDocuments, res: pbWriteRes}
	routeUpdate = &route{method: "PUT", path: "/v1/databases/{db}/collections/{collection}/documents/update",
		rpc: tigris + "Update", req: msg(str(1, "db"), str(2, "collection"), raw(3, "fields"), raw(4, "filter"), sub(5, "options", pbWriteOpts)),
		res: msg(sub(1, "metadata", pbResMeta), integer(2, "modified_count"), str(3, "status"))}
	routeDelete = &route{method: "DELETE", path: "/v1/databases/{db}/collections/{collection}/documents/delete",
		rpc: tigris + "Delete", req: msg(str(1, "db"), str(2, "collection"), raw(3, "filter"), sub(4, "options", pbWriteOpts)),
		res: msg(sub(1, "metadata", pbResMeta), str(2, "status"), integer(1001, "modified_count"))}
	routeRead = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/read",
		rpc: tigris + "Read", stream: true,
		req: msg(str(1, "db"), str(2, "collection"), raw(3, "filter"), raw(4, "fields"),
			sub(5, "options", msg(integer(2, "limit"), integer(3, "skip"), bin(4, "offset"), sub(5, "collation", pbCollation))),
			raw(6, "sort")),
		res: msg(raw(1, "data"), bin(2, "resume_token"), sub(3, "metadata", pbResMeta))}
	routeSearch = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/search",
		rpc: tigris + "Search", stream: true,
		req: msg(str(1, "db"), str(2, "collection"), str(3, "q"), rep(str(4, "search_fields")), raw(5, "filter"), raw(6, "facet"),
			raw(7, "sort"), rep(str(8, "include_fields")), rep(str(9, "exclude_fields")), integer(10, "page_size"), integer(11, "page"),
			sub(12, "collation", pbCollation)),
		res: msg(rep(sub(1, "hits", msg(raw(1, "data"), sub(2, "metadata", msg(stamp(1, "created_at"), stamp(2, "updated_at")))))),
			mapOf(2, "facets", msg(
				rep(sub(1, "counts", msg(integer(1, "count"), str(2, "value")))),
				sub(2, "stats", msg(double(1, "avg"), double(2, "max"), double(3, "min"), double(4, "sum"), integer(5, "count"))))),
			sub(3, "meta", msg(integer(1, "found"), integer(2, "total_pages"), sub(3, "page", msg(integer(1, "current"), integer(3, "size"))))))}

	routeEvents = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/events",
		rpc: tigris + "Events", stream: true,
		req: msg(str(1, "db"), str(2, "collection"), sub(3, "options", msg(str(1001, "start_after")))),
		res: msg(sub(1, "event", msg(bin(1, "tx_id"), str(2, "collection"), str(3, "op"), bin(4, "key"), raw(7, "data"),
			boolean(8, "last"), str(1001, "position"))))}
	routePublish = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/messages/publish",
		rpc: tigris + "Publish", req: msg(str(1, "db"), str(2, "collection"), rep(raw(3, "messages"))),
		res: msg(sub(1, "metadata", pbResMeta), str(2, "status"), rep(bin(1001, "keys")))}
	routeSubscribe = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/messages/subscribe",
		rpc: tigris + "Subscribe", stream: true,
		req: msg(str(1, "db"), str(2, "collection"), sub(3, "options", msg(str(1001, "start_after"), sub(1002, "collation", pbCollation))),
			raw(4, "filter")),
		res: msg(raw(1, "message"), str(1001, "position"))}

	routeBegin = &route{method: "POST", path: "/v1/databases/{db}/transactions/begin", rpc: tigris + "BeginTransaction",
		req: pbDB, res: msg(sub(1, "tx_ctx", msg(str(1, "id"), str(2, "origin"))))}
	routeCommit = &route{method: "POST", path: "/v1/databases/{db}/transactions/commit", rpc: tigris + "CommitTransaction",
		req: pbDB, res: msg(str(1, "status"))}
	routeRollback = &route{method: "POST", path: "/v1/databases/{db}/transactions/rollback", rpc: tigris + "RollbackTransaction",
		req: pbDB, res: msg(str(1, "status"))}

	routeCreateNamespace = &route{method: "POST", path: "/v1/admin/namespaces/{name}/create", rpc: admin + "createNamespace",
		req: msg(integer(1, "id"), str(2, "name")), res: pbMessage}
	routeListNamespaces = &route{method: "POST", path: "/v1/admin/namespaces/list", rpc: admin + "listNamespaces",
		req: pbEmpty, res: msg(rep(sub(1, "namespaces", msg(integer(1, "id"), str(2, "name")))))}
	routeCreateApplication = &route{method: "POST", path: "/v1/management/applications/create", rpc: user + "createApplication",
		req: msg(str(1, "name"), str(2, "description"), str(1001, "role"), str(1002, "namespace")),
		res: msg(sub(1, "created_application", pbApp))}
	routeListApplications = &route{method: "POST", path: "/v1/management/applications/list", rpc: user + "listApplications",
		req: pbEmpty, res: msg(rep(sub(1, "applications", pbApp)))}
	routeRotateApplicationSecret = &route{method: "POST", path: "/v1/management/applications/rotate", rpc: user + "rotateApplicationSecret",
		req: pbAppID, res: msg(sub(1, "application", pbApp))}
	routeDeleteApplication = &route{method: "DELETE", path: "/v1/management/applications/delete", rpc: user + "deleteApplication",
		req: pbAppID, res: msg(boolean(1, "deleted"))}
	// The published definitions have no call for the signing key, nor for
	// Folio's backup.
	routeRotateSigningKey = &route{method: "POST", path: "/v1/management/keys/rotate"}
	routeBackup           = &route{method: "POST", path: "/v1/management/backup"}

	// The token endpoint: HTTP takes a form, not JSON (http.go).
	routeAccessToken = &route{method: "POST", path: "/v1/auth/token", rpc: "/tigrisdata.auth.v1.Auth/getAccessToken",
		req: msg(integer(1, "grant_type"), str(3, "client_id"), str(4, "client_secret")),
		res: msg(str(1, "access_token"), str(2, "refresh_token"), integer(3, "expires_in"))}
)
