package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// grpcEngine searches the same Folio server as an HTTP engine, with the
// same requests, over gRPC with the official Go client's stubs: the
// transport the official clients use. A page's documents come as bytes
// in a protobuf message, so the client reads them without parsing the
// page's JSON, as over HTTP it must.
type grpcEngine struct {
	from   *folioEngine // whose server and collection it searches; it loads them
	conn   *grpc.ClientConn
	client api.TigrisClient
	db     string
}

const grpcName = "Folio (Pebble, gRPC)"

func newGRPC(from *folioEngine, db string) (*grpcEngine, error) {
	u, err := url.Parse(from.base)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &grpcEngine{from: from, conn: conn, client: api.NewTigrisClient(conn), db: db}, nil
}

func (g *grpcEngine) name() string { return grpcName }
func (g *grpcEngine) close()       { g.conn.Close() }

// load stores nothing: the HTTP engine loaded the server.
func (g *grpcEngine) load(context.Context, []doc, int, int) error { return nil }

func (g *grpcEngine) insert(context.Context, doc) error {
	return errors.New("the gRPC engine searches what the HTTP engine wrote")
}

func (g *grpcEngine) search(ctx context.Context, q query) (outcome, error) {
	req, err := grpcRequest(g.db, q)
	if err != nil {
		return outcome{}, err
	}
	stream, err := g.client.Search(ctx, req)
	if err != nil {
		return outcome{}, err
	}
	var first *api.SearchResponse
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return outcome{}, fmt.Errorf("search over gRPC: %w", err)
		}
		if first == nil {
			first = resp
		}
	}
	if first == nil {
		return outcome{}, errors.New("search over gRPC: no answer")
	}
	return grpcOutcome(first)
}

// grpcRequest is q's search request: folioRequest's, field by field.
func grpcRequest(db string, q query) (*api.SearchRequest, error) {
	body, err := folioRequest(q)
	if err != nil {
		return nil, err
	}
	var fields struct {
		Q            string          `json:"q"`
		SearchFields []string        `json:"search_fields"`
		Filter       json.RawMessage `json:"filter"`
		Facet        json.RawMessage `json:"facet"`
		Sort         json.RawMessage `json:"sort"`
		Page         int32           `json:"page"`
		PageSize     int32           `json:"page_size"`
	}
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	return &api.SearchRequest{Project: db, Collection: "docs", Q: fields.Q, SearchFields: fields.SearchFields,
		Filter: fields.Filter, Facet: fields.Facet, Sort: fields.Sort, Page: fields.Page, PageSize: fields.PageSize}, nil
}

// grpcOutcome reads a page as parseFolioPage does.
func grpcOutcome(resp *api.SearchResponse) (outcome, error) {
	o := outcome{hits: len(resp.Hits)}
	if resp.Meta != nil {
		o.found = resp.Meta.Found
	}
	if len(resp.Hits) > 0 {
		id, err := idOf(resp.Hits[0].Data)
		if err != nil {
			return outcome{}, err
		}
		o.firstID = id
	}
	if len(resp.Facets) > 0 {
		top := func(name string) (string, int64) {
			if f := resp.Facets[name]; f != nil && len(f.Counts) > 0 {
				return f.Counts[0].Value, f.Counts[0].Count
			}
			return "", 0
		}
		tag, tagN := top("tag")
		src, srcN := top("source")
		var n int64
		var sum float64
		if f := resp.Facets["rank"]; f != nil && f.Stats != nil {
			n = f.Stats.Count
			if f.Stats.Sum != nil {
				sum = *f.Stats.Sum
			}
		}
		o.facets = facetDigest(tag, tagN, src, srcN, n, sum)
	}
	return o, nil
}
