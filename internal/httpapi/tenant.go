package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// tenantRoutes are the calls on what a namespace keeps besides its
// databases: its metadata and its applications' (the final API's paths,
// and 2022's for user metadata), and its quotas.
func (s *Server) tenantRoutes(handle func(string, func(http.ResponseWriter, *http.Request) error)) {
	user := map[string]metadataCall{"get": s.ops.GetUserMetadata, "insert": s.ops.InsertUserMetadata, "update": s.ops.UpdateUserMetadata}
	namespace := map[string]metadataCall{"get": s.ops.GetNamespaceMetadata, "insert": s.ops.InsertNamespaceMetadata, "update": s.ops.UpdateNamespaceMetadata}
	for _, verb := range []string{"get", "insert", "update"} {
		handle("POST /v1/management/users/metadata/{metadataKey}/"+verb, s.metadata(user[verb], true))
		handle("POST /v1/users/metadata/{metadataKey}/"+verb, s.metadata(user[verb], true))
		handle("POST /v1/management/namespace/metadata/{metadataKey}/"+verb, s.metadata(namespace[verb], false))
	}
	handle("POST /v1/observability/quota/limits", s.quotaLimits)
	handle("POST /v1/observability/quota/usage", s.quotaUsage)
	handle("POST /v1/management/namespaces/{id}/quota", s.setNamespaceQuota)
}

type metadataCall func(context.Context, ops.Caller, ops.MetadataRequest) (*ops.Metadata, error)

// metadata serves a metadata call. The value is any JSON value, sent and
// answered as it is (the original's gateway did so too, rather than
// base64 as for other bytes fields); an answer without a value (a key
// that holds none) has no "value".
func (s *Server) metadata(call metadataCall, user bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Value json.RawMessage `json:"value"`
		}
		req := ops.MetadataRequest{Malformed: decode(r, &body, nil), Key: r.PathValue("metadataKey")}
		req.Value = body.Value
		if string(req.Value) == "null" {
			req.Value = nil
		}
		md, err := call(r.Context(), caller(r), req)
		if err != nil {
			return err
		}
		out := metadataJSON{Key: md.Key, NamespaceID: md.NamespaceID, Value: md.Value}
		if user {
			out.UserID = md.App
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

type metadataJSON struct {
	Key         string          `json:"metadataKey,omitempty"`
	NamespaceID int64           `json:"namespaceId,omitempty"`
	UserID      string          `json:"userId,omitempty"`
	Value       json.RawMessage `json:"value,omitempty"`
}

// quotaLimits answers the final API's QuotaLimitsResponse: ReadUnits and
// WriteUnits are both the namespace's requests a second (Folio bounds
// calls, not units), StorageSize its storage bytes; 0 is no bound.
// Folio's members give the server's own bounds.
func (s *Server) quotaLimits(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	l, err := s.ops.QuotaLimits(r.Context(), caller(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ReadUnits              int64 `json:"ReadUnits"`
		WriteUnits             int64 `json:"WriteUnits"`
		StorageSize            int64 `json:"StorageSize"`
		MaxRequestBytes        int64 `json:"max_request_bytes"`
		MaxDocumentsPerRequest int   `json:"max_documents_per_request"`
	}{l.Quota.RequestsPerSecond, l.Quota.RequestsPerSecond, l.Quota.StorageBytes, l.MaxRequestBytes, l.MaxDocumentsPerRequest})
	return nil
}

// quotaUsage answers the final API's QuotaUsageResponse: StorageSize is
// the bytes the namespace stores; ReadUnits and WriteUnits its calls in
// the last second, and the *Throttled members the calls its quotas
// refused, on the node that answers.
func (s *Server) quotaUsage(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	u, err := s.ops.QuotaUsage(r.Context(), caller(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ReadUnits            int64 `json:"ReadUnits"`
		WriteUnits           int64 `json:"WriteUnits"`
		StorageSize          int64 `json:"StorageSize"`
		ReadUnitsThrottled   int64 `json:"ReadUnitsThrottled"`
		WriteUnitsThrottled  int64 `json:"WriteUnitsThrottled"`
		StorageSizeThrottled int64 `json:"StorageSizeThrottled"`
	}{u.RequestsLastSecond, u.RequestsLastSecond, u.StorageBytes, u.Refused, u.Refused, u.StorageRefused})
	return nil
}

// setNamespaceQuota is Folio's POST /v1/management/namespaces/{id}/quota
// (id: the namespace's name, as in the final API's namespace paths).
func (s *Server) setNamespaceQuota(w http.ResponseWriter, r *http.Request) error {
	var body ops.Quota
	req := ops.SetNamespaceQuotaRequest{Malformed: decode(r, &body, nil), Namespace: r.PathValue("id")}
	req.Quota = body
	q, err := s.ops.SetNamespaceQuota(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Namespace         string `json:"namespace"`
		StorageBytes      int64  `json:"storage_bytes"`
		RequestsPerSecond int64  `json:"requests_per_second"`
	}{req.Namespace, q.StorageBytes, q.RequestsPerSecond})
	return nil
}
