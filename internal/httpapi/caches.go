package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
)

// The final API's caches, under /v1/projects/{project}/caches (the routes
// of tigris-client-go v1.0.0's cache.pb.gw.go), answered in the original's
// shapes. A value is JSON over HTTP, as the original had it: a set keeps
// the body's "value" as its JSON text, and a get answers that text as it
// is; a value set over gRPC that is not JSON is answered as a base64
// string, as gRPC's JSON mapping gives bytes.
func (s *Server) cacheRoutes(handle func(string, func(http.ResponseWriter, *http.Request) error)) {
	const caches = projectsPrefix + "/{db}/caches"
	handle("GET "+caches+"/list", s.listCaches)
	handle("POST "+caches+"/{name}/create", s.createCache)
	handle("DELETE "+caches+"/{name}/delete", s.deleteCache)
	handle("GET "+caches+"/{name}/keys", s.cacheKeys)
	handle("POST "+caches+"/{name}/{key}/set", s.cacheSet)
	handle("POST "+caches+"/{name}/{key}/getset", s.cacheGetSet)
	handle("GET "+caches+"/{name}/{key}/get", s.cacheGet)
	handle("DELETE "+caches+"/{name}/{key}/delete", s.cacheDel)
}

type createCacheBody struct {
	Options *struct {
		TTLMs    uint64 `json:"ttl_ms"`
		Volatile bool   `json:"volatile"`
	} `json:"options"`
}

func (s *Server) createCache(w http.ResponseWriter, r *http.Request) error {
	var body createCacheBody
	malformed := decode(r, &body, nil)
	req := ops.CacheRequest{Malformed: malformed, Project: r.PathValue("db"), Name: r.PathValue("name")}
	if body.Options != nil {
		req.Options = ops.CacheOptions{TTLMs: body.Options.TTLMs, Volatile: body.Options.Volatile}
	}
	if err := s.ops.CreateCache(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "created", Message: "Cache is created successfully"})
	return nil
}

func (s *Server) deleteCache(w http.ResponseWriter, r *http.Request) error {
	req := ops.CacheRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db"), Name: r.PathValue("name")}
	if err := s.ops.DeleteCache(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "deleted", Message: "Cache is deleted successfully"})
	return nil
}

type cacheInfo struct {
	Name string `json:"name"`
}

func (s *Server) listCaches(w http.ResponseWriter, r *http.Request) error {
	req := ops.CacheRequest{Malformed: decode(r, &struct{}{}, nil), Project: r.PathValue("db")}
	names, err := s.ops.ListCaches(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := struct {
		Caches []cacheInfo `json:"caches"`
	}{Caches: make([]cacheInfo, len(names))}
	for i, n := range names {
		out.Caches[i] = cacheInfo{Name: n}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type cacheSetBody struct {
	Value json.RawMessage `json:"value"`
	Ex    uint64          `json:"ex"`
	Px    uint64          `json:"px"`
	Nx    bool            `json:"nx"`
	Xx    bool            `json:"xx"`
}

func (s *Server) cacheKeyRequest(r *http.Request, body *cacheSetBody) ops.CacheKeyRequest {
	var malformed error
	if body != nil {
		malformed = decode(r, body, nil)
	} else {
		malformed = decode(r, &struct{}{}, nil)
	}
	req := ops.CacheKeyRequest{Malformed: malformed, Project: r.PathValue("db"), Cache: r.PathValue("name"), Key: r.PathValue("key")}
	if body != nil {
		req.Value = body.Value
		req.Set = ops.CacheSetOptions{EX: body.Ex, PX: body.Px, NX: body.Nx, XX: body.Xx}
	}
	return req
}

func (s *Server) cacheSet(w http.ResponseWriter, r *http.Request) error {
	var body cacheSetBody
	if err := s.ops.CacheSet(r.Context(), caller(r), s.cacheKeyRequest(r, &body)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "set", Message: "Key is set successfully"})
	return nil
}

func (s *Server) cacheGetSet(w http.ResponseWriter, r *http.Request) error {
	var body cacheSetBody
	req := s.cacheKeyRequest(r, &body)
	req.Set = ops.CacheSetOptions{} // getset takes a value only
	old, found, err := s.ops.CacheGetSet(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := struct {
		Status   string          `json:"status"`
		Message  string          `json:"message"`
		OldValue json.RawMessage `json:"old_value,omitempty"`
	}{Status: "set", Message: "Key is set successfully"}
	if found {
		out.OldValue = valueJSON(old)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) cacheGet(w http.ResponseWriter, r *http.Request) error {
	v, err := s.ops.CacheGet(r.Context(), caller(r), s.cacheKeyRequest(r, nil))
	if err != nil {
		return err
	}
	out := struct {
		Value       json.RawMessage `json:"value"`
		ExpiresInMs *uint64         `json:"expires_in_ms,omitempty"`
	}{Value: valueJSON(v.Value)}
	if v.Left > 0 {
		ms := uint64(v.Left.Milliseconds())
		out.ExpiresInMs = &ms
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) cacheDel(w http.ResponseWriter, r *http.Request) error {
	n, err := s.ops.CacheDel(r.Context(), caller(r), s.cacheKeyRequest(r, nil))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusMessage{Status: "deleted", Message: fmt.Sprintf("Entries deleted count# %d", n)})
	return nil
}

// valueJSON is a value as an answer gives it: its text if it is JSON, a
// base64 string if not.
func valueJSON(v []byte) json.RawMessage {
	if len(v) > 0 && json.Valid(v) {
		return v
	}
	b, _ := json.Marshal(base64.StdEncoding.EncodeToString(v))
	return b
}

// cacheKeys streams the keys a page at a time, each line
// {"result": {"keys": [...], "cursor": n}}, as the original's gateway did.
// The query's cursor, count and pattern are the request's fields, as the
// gateway put a GET's.
func (s *Server) cacheKeys(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	malformed := decode(r, &struct{}{}, nil)
	var keys ops.CacheKeys
	keys.Pattern = q.Get("pattern")
	if v := q.Get("cursor"); v != "" && malformed == nil {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			malformed = apierror.Errorf(apierror.InvalidArgument, "cursor '%s' is not a number", apierror.Clip(v, 32))
		}
		keys.Cursor = n
	}
	if v := q.Get("count"); v != "" && malformed == nil {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			malformed = apierror.Errorf(apierror.InvalidArgument, "count '%s' is not a number", apierror.Clip(v, 32))
		}
		keys.Count = n
	}
	req := ops.CacheKeysRequest{Malformed: malformed, Project: r.PathValue("db"), Cache: r.PathValue("name"), Keys: keys}
	stream := newStream(w, s.publicFor(r))
	err := s.ops.CacheKeys(r.Context(), caller(r), req, func(p ops.CacheKeysPage) error {
		line, err := json.Marshal(struct {
			Keys   []string `json:"keys"`
			Cursor uint64   `json:"cursor"`
		}{p.Keys, p.Cursor})
		if err != nil {
			return err
		}
		return stream.send(line)
	})
	return stream.finish(err)
}
