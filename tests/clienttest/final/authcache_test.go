package finalclient

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	httpapi "github.com/tigrisdata/tigris-client-go/api/client/v1/api"
	api "github.com/tigrisdata/tigris-client-go/api/server/v1"
)

// The final Go client has no cache package, so its driver cannot lend
// an app key's tokens to cache calls: an application with a key gets a
// token from /v1/auth/token itself, with the generated Auth API, and sends
// it with the generated Cache API, over TLS, as below.

// keyCaches is the Cache service as an application holding one app key
// reaches it, on the transport FOLIO_URL names (one of the two is set).
type keyCaches struct {
	grpc api.CacheClient
	http *httpapi.ClientWithResponses
}

// cachesAs gets a token for the key (id, secret) and returns the Cache
// service with that token on every call.
func (e authEnv) cachesAs(ctx context.Context, t *testing.T, id, secret string) keyCaches {
	t.Helper()
	u, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	if e.http {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: e.tls}}
		base := "https://" + u.Host
		anon, err := httpapi.NewClientWithResponses(base, httpapi.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
		r, err := anon.AuthGetAccessTokenWithBodyWithResponse(ctx, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil || r.JSON200 == nil || r.JSON200.AccessToken == nil {
			t.Fatalf("a token for %s over HTTP: %v %s", id, err, body(r))
		}
		token := *r.JSON200.AccessToken
		c, err := httpapi.NewClientWithResponses(base, httpapi.WithHTTPClient(hc),
			httpapi.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+token)
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return keyCaches{http: c}
	}
	tlsCreds := grpc.WithTransportCredentials(credentials.NewTLS(e.tls))
	anon, err := grpc.Dial(u.Host, tlsCreds)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	tok, err := api.NewAuthClient(anon).GetAccessToken(ctx, &api.GetAccessTokenRequest{
		GrantType: api.GrantType_CLIENT_CREDENTIALS, ClientId: id, ClientSecret: secret})
	if err != nil {
		t.Fatalf("a token for %s over gRPC: %v", id, err)
	}
	conn, err := grpc.Dial(u.Host, tlsCreds, grpc.WithPerRPCCredentials(bearer(tok.AccessToken)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return keyCaches{grpc: api.NewCacheClient(conn)}
}

func body(r *httpapi.AuthGetAccessTokenResponse) string {
	if r == nil {
		return ""
	}
	return r.Status() + " " + string(r.Body)
}

// bearer sends a token as the client's driver does, over TLS only.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// flow runs the whole cache flow of cache_test.go on project p.
func (k keyCaches) flow(ctx context.Context, t *testing.T, p string) {
	if k.http != nil {
		httpCacheFlow(ctx, t, k.http, p)
	} else {
		grpcCacheFlow(ctx, t, k.grpc, p)
	}
}

// create makes cache name in project p and sets key to value in it.
func (k keyCaches) create(ctx context.Context, t *testing.T, p, name, key string, value []byte) {
	t.Helper()
	if k.http != nil {
		if r, err := k.http.CacheCreateCacheWithResponse(ctx, p, name, httpapi.CreateCacheRequest{}); err != nil || r.StatusCode() != 200 {
			t.Fatalf("CacheCreateCache %s in %s: %v %s", name, p, err, r.Body)
		}
		if r, err := k.http.CacheSetWithResponse(ctx, p, name, key, httpapi.SetRequest{Value: &value}); err != nil || r.StatusCode() != 200 {
			t.Fatalf("CacheSet in %s: %v %s", p, err, r.Body)
		}
		return
	}
	if _, err := k.grpc.CreateCache(ctx, &api.CreateCacheRequest{Project: p, Name: name}); err != nil {
		t.Fatalf("CreateCache %s in %s: %v", name, p, err)
	}
	if _, err := k.grpc.Set(ctx, &api.SetRequest{Project: p, Name: name, Key: key, Value: value}); err != nil {
		t.Fatalf("Set in %s: %v", p, err)
	}
}

// get reads key of cache name in project p.
func (k keyCaches) get(ctx context.Context, t *testing.T, p, name, key string) []byte {
	t.Helper()
	if k.http != nil {
		r, err := k.http.CacheGetWithResponse(ctx, p, name, key)
		if err != nil || r.JSON200 == nil || r.JSON200.Value == nil {
			t.Fatalf("CacheGet %s in %s: %v %s", key, p, err, r.Body)
		}
		return *r.JSON200.Value
	}
	r, err := k.grpc.Get(ctx, &api.GetRequest{Project: p, Name: name, Key: key})
	if err != nil {
		t.Fatalf("Get %s in %s: %v", key, p, err)
	}
	return r.Value
}

// wantDenied checks that every cache call on project p, whose cache name
// holds key, is refused with the original's PERMISSION_DENIED (403 over
// HTTP): the key belongs to another project.
func (k keyCaches) wantDenied(ctx context.Context, t *testing.T, p, name, key string) {
	t.Helper()
	value := []byte(`"intruder"`)
	if k.http != nil {
		c := k.http
		calls := map[string]func() (int, *httpapi.Status, error){
			"CacheCreateCache": func() (int, *httpapi.Status, error) {
				r, err := c.CacheCreateCacheWithResponse(ctx, p, "intruder", httpapi.CreateCacheRequest{})
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheListCaches": func() (int, *httpapi.Status, error) {
				r, err := c.CacheListCachesWithResponse(ctx, p)
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheSet": func() (int, *httpapi.Status, error) {
				r, err := c.CacheSetWithResponse(ctx, p, name, key, httpapi.SetRequest{Value: &value})
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheGet": func() (int, *httpapi.Status, error) {
				r, err := c.CacheGetWithResponse(ctx, p, name, key)
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheDel": func() (int, *httpapi.Status, error) {
				r, err := c.CacheDelWithResponse(ctx, p, name, key, httpapi.DelRequest{})
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheKeys": func() (int, *httpapi.Status, error) {
				r, err := c.CacheKeysWithResponse(ctx, p, name, &httpapi.CacheKeysParams{})
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
			"CacheDeleteCache": func() (int, *httpapi.Status, error) {
				r, err := c.CacheDeleteCacheWithResponse(ctx, p, name, httpapi.DeleteCacheRequest{})
				return answer(r, err, func() *httpapi.Status { return r.JSONDefault })
			},
		}
		for what, call := range calls {
			st, s, err := call()
			switch {
			case err != nil:
				t.Errorf("%s with another project's key: %v", what, err)
			case st != http.StatusForbidden || s == nil || s.Error == nil || s.Error.Code == nil || *s.Error.Code != httpapi.PERMISSIONDENIED:
				t.Errorf("%s with another project's key: %d %+v, want 403 PERMISSION_DENIED", what, st, s)
			}
		}
		return
	}
	c := k.grpc
	calls := map[string]func() error{
		"CreateCache": func() error {
			_, err := c.CreateCache(ctx, &api.CreateCacheRequest{Project: p, Name: "intruder"})
			return err
		},
		"ListCaches": func() error { _, err := c.ListCaches(ctx, &api.ListCachesRequest{Project: p}); return err },
		"Set": func() error {
			_, err := c.Set(ctx, &api.SetRequest{Project: p, Name: name, Key: key, Value: value})
			return err
		},
		"Get": func() error { _, err := c.Get(ctx, &api.GetRequest{Project: p, Name: name, Key: key}); return err },
		"GetSet": func() error {
			_, err := c.GetSet(ctx, &api.GetSetRequest{Project: p, Name: name, Key: key, Value: value})
			return err
		},
		"Del": func() error { _, err := c.Del(ctx, &api.DelRequest{Project: p, Name: name, Key: key}); return err },
		// A stream's error comes with its first receive.
		"Keys": func() error {
			st, err := c.Keys(ctx, &api.KeysRequest{Project: p, Name: name})
			if err == nil {
				_, err = st.Recv()
			}
			return err
		},
		"DeleteCache": func() error {
			_, err := c.DeleteCache(ctx, &api.DeleteCacheRequest{Project: p, Name: name})
			return err
		},
	}
	for what, call := range calls {
		if err := call(); status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s with another project's key: %v, want PERMISSION_DENIED", what, err)
		}
	}
}

// answer is an HTTP answer's status and error body.
func answer(r interface{ StatusCode() int }, err error, status func() *httpapi.Status) (int, *httpapi.Status, error) {
	if err != nil {
		return 0, nil, err
	}
	return r.StatusCode(), status(), nil
}
