package client

// route is one call of the API on either transport: its HTTP method and
// path ({db}, {collection} and {name} stand for the request's
// parameters), and its gRPC method with the shapes of its request and
// answer, named by their messages in api/proto/tigrisdata/v1 (the one
// definition of the wire format, with Folio's own fields numbered from
// 1001). The shapes are generated from those definitions (shapes_gen.go,
// by internal/shapegen), so that the client imports the standard library
// alone and yet states no field of its own; TestRoutesCallTheirMethods
// checks that each route names its method's messages.
// A call's body is built once, as the HTTP API's JSON, and its answer is
// read as the HTTP API's JSON; the gRPC transport translates both.
type route struct {
	method, path string
	rpc          string // "" where the gRPC API has no such call
	req, res     *shape
	stream       bool // the answer is a stream of items
}

// grpcMethod is what the definitions say of a gRPC method the client
// calls (shapes_gen.go lists them).
type grpcMethod struct {
	req, res *shape
	stream   bool
}

const (
	tigris     = "/tigrisdata.v1.Tigris/"
	user       = "/tigrisdata.user.v1.User/"
	admin      = "/tigrisdata.admin.v1.Admin/"
	management = "/tigrisdata.management.v1.Management/"
)

var (
	routeInfo = &route{method: "GET", path: "/v1/info", rpc: tigris + "GetInfo",
		req: shapeGetInfoRequest, res: shapeGetInfoResponse}
	routeHealth = &route{method: "GET", path: "/v1/health", rpc: "/HealthAPI/Health",
		req: shapeHealthCheckInput, res: shapeHealthCheckResponse}

	routeCreateDatabase = &route{method: "POST", path: "/v1/databases/{db}/create", rpc: tigris + "CreateDatabase",
		req: shapeCreateDatabaseRequest, res: shapeCreateDatabaseResponse}
	routeDropDatabase = &route{method: "DELETE", path: "/v1/databases/{db}/drop", rpc: tigris + "DropDatabase",
		req: shapeDropDatabaseRequest, res: shapeDropDatabaseResponse}
	routeListDatabases = &route{method: "POST", path: "/v1/databases/list", rpc: tigris + "ListDatabases",
		req: shapeListDatabasesRequest, res: shapeListDatabasesResponse}
	routeDescribeDatabase = &route{method: "POST", path: "/v1/databases/{db}/describe", rpc: tigris + "DescribeDatabase",
		req: shapeDescribeDatabaseRequest, res: shapeDescribeDatabaseResponse2022}

	routeCreateCollection = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/createOrUpdate", rpc: tigris + "CreateOrUpdateCollection",
		req: shapeCreateOrUpdateCollectionRequest, res: shapeCreateOrUpdateCollectionResponse}
	routeDropCollection = &route{method: "DELETE", path: "/v1/databases/{db}/collections/{collection}/drop", rpc: tigris + "DropCollection",
		req: shapeDropCollectionRequest, res: shapeDropCollectionResponse}
	routeListCollections = &route{method: "POST", path: "/v1/databases/{db}/collections/list", rpc: tigris + "ListCollections",
		req: shapeListCollectionsRequest, res: shapeListCollectionsResponse}
	routeDescribeCollection = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/describe", rpc: tigris + "DescribeCollection",
		req: shapeDescribeCollectionRequest, res: shapeDescribeCollectionResponse}

	routeInsert = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/insert", rpc: tigris + "Insert",
		req: shapeInsertRequest, res: shapeInsertResponse}
	routeReplace = &route{method: "PUT", path: "/v1/databases/{db}/collections/{collection}/documents/replace", rpc: tigris + "Replace",
		req: shapeReplaceRequest, res: shapeReplaceResponse}
	routeUpdate = &route{method: "PUT", path: "/v1/databases/{db}/collections/{collection}/documents/update", rpc: tigris + "Update",
		req: shapeUpdateRequest, res: shapeUpdateResponse}
	routeDelete = &route{method: "DELETE", path: "/v1/databases/{db}/collections/{collection}/documents/delete", rpc: tigris + "Delete",
		req: shapeDeleteRequest, res: shapeDeleteResponse}
	routeRead = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/read", rpc: tigris + "Read", stream: true,
		req: shapeReadRequest, res: shapeReadResponse}
	// Folio's own call, in its own service (api/proto's folio.proto).
	routeAggregate = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/aggregate", rpc: "/tigrisdata.v1.Folio/Aggregate", stream: true,
		req: shapeAggregateRequest, res: shapeAggregateResponse}
	routeSearch = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/documents/search", rpc: tigris + "Search", stream: true,
		req: shapeSearchRequest, res: shapeSearchResponse}

	routeEvents = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/events", rpc: tigris + "Events", stream: true,
		req: shapeEventsRequest, res: shapeEventsResponse}
	routePublish = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/messages/publish", rpc: tigris + "Publish",
		req: shapePublishRequest, res: shapePublishResponse}
	routeSubscribe = &route{method: "POST", path: "/v1/databases/{db}/collections/{collection}/messages/subscribe", rpc: tigris + "Subscribe", stream: true,
		req: shapeSubscribeRequest, res: shapeSubscribeResponse}

	routeBegin = &route{method: "POST", path: "/v1/databases/{db}/transactions/begin", rpc: tigris + "BeginTransaction",
		req: shapeBeginTransactionRequest, res: shapeBeginTransactionResponse}
	routeCommit = &route{method: "POST", path: "/v1/databases/{db}/transactions/commit", rpc: tigris + "CommitTransaction",
		req: shapeCommitTransactionRequest, res: shapeCommitTransactionResponse}
	routeRollback = &route{method: "POST", path: "/v1/databases/{db}/transactions/rollback", rpc: tigris + "RollbackTransaction",
		req: shapeRollbackTransactionRequest, res: shapeRollbackTransactionResponse}

	routeCreateNamespace = &route{method: "POST", path: "/v1/admin/namespaces/{name}/create", rpc: admin + "createNamespace",
		req: shapeCreateNamespaceRequest2022, res: shapeCreateNamespaceResponse2022}
	routeListNamespaces = &route{method: "POST", path: "/v1/admin/namespaces/list", rpc: admin + "listNamespaces",
		req: shapeListNamespacesRequest2022, res: shapeListNamespacesResponse2022}
	routeDeleteNamespace = &route{method: "DELETE", path: "/v1/management/namespaces/{namespace_id}", rpc: management + "DeleteNamespace",
		req: shapeDeleteNamespaceRequest, res: shapeDeleteNamespaceResponse}
	routeCreateApplication = &route{method: "POST", path: "/v1/management/applications/create", rpc: user + "createApplication",
		req: shapeCreateApplicationRequest, res: shapeCreateApplicationResponse}
	routeListApplications = &route{method: "POST", path: "/v1/management/applications/list", rpc: user + "listApplications",
		req: shapeListApplicationsRequest, res: shapeListApplicationsResponse}
	routeRotateApplicationSecret = &route{method: "POST", path: "/v1/management/applications/rotate", rpc: user + "rotateApplicationSecret",
		req: shapeRotateApplicationSecretRequest, res: shapeRotateApplicationSecretResponse}
	routeDeleteApplication = &route{method: "DELETE", path: "/v1/management/applications/delete", rpc: user + "deleteApplication",
		req: shapeDeleteApplicationsRequest, res: shapeDeleteApplicationResponse}
	// The published definitions have no call for the signing key, nor for
	// Folio's backup.
	routeRotateSigningKey = &route{method: "POST", path: "/v1/management/keys/rotate"}
	routeBackup           = &route{method: "POST", path: "/v1/management/backup"}

	// The token endpoint: HTTP takes a form, not JSON (http.go).
	routeAccessToken = &route{method: "POST", path: "/v1/auth/token", rpc: "/tigrisdata.auth.v1.Auth/getAccessToken",
		req: shapeGetAccessTokenRequest, res: shapeGetAccessTokenResponse}
)
