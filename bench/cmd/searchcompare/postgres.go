package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgEngine is PostgreSQL's full text search: a tsvector of title and body
// (the 'simple' configuration: lower-cased words, no stemming, no stop
// words, as close as PostgreSQL comes to FTS5's and Bleve's analyzers)
// with a GIN index, ranked by ts_rank_cd.
type pgEngine struct {
	pool *pgxpool.Pool
}

var pgSchema = []string{
	`CREATE TABLE docs(id bigint PRIMARY KEY, title text NOT NULL, body text NOT NULL, tag text NOT NULL,
		source text NOT NULL, rank int NOT NULL, size float8 NOT NULL,
		tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', title) || to_tsvector('simple', body)) STORED)`,
	`CREATE INDEX docs_tsv ON docs USING gin(tsv)`,
	`CREATE INDEX docs_tag_size ON docs(tag, size)`,
	`CREATE INDEX docs_size ON docs(size)`,
}

func newPostgres(ctx context.Context, dsn string, conns int) (*pgEngine, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, stmt := range pgSchema {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	return &pgEngine{pool: pool}, nil
}

func (p *pgEngine) name() string { return "PostgreSQL FTS" }
func (p *pgEngine) close()       { p.pool.Close() }

func (p *pgEngine) store(ctx context.Context, docs []doc) error {
	rows := make([][]any, len(docs))
	for i, d := range docs {
		rows[i] = []any{d.ID, d.Title, d.Body, d.Tag, d.Source, d.Rank, d.Size}
	}
	// COPY in one transaction: the batch is committed, and its tsvectors
	// in the index, when it returns.
	_, err := p.pool.CopyFrom(ctx, pgx.Identifier{"docs"}, []string{"id", "title", "body", "tag", "source", "rank", "size"}, pgx.CopyFromRows(rows))
	return err
}

func (p *pgEngine) load(ctx context.Context, docs []doc, batch, clients int) error {
	if err := inBatches(ctx, docs, batch, clients, func(part []doc) error { return p.store(ctx, part) }); err != nil {
		return err
	}
	_, err := p.pool.Exec(ctx, `VACUUM ANALYZE docs`)
	return err
}

func (p *pgEngine) insert(ctx context.Context, d doc) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO docs(id, title, body, tag, source, rank, size) VALUES($1, $2, $3, $4, $5, $6, $7)`,
		d.ID, d.Title, d.Body, d.Tag, d.Source, d.Rank, d.Size)
	return err
}

// pgQueries are q's statements (one round trip, as a batch): the page,
// the count (with rank's stats when q has facets), and with facets each
// facet's counts. Their arguments: $1 the text (if any), then the tag,
// then the size range.
func pgQueries(q query) (page, count string, facets []string, args []any) {
	var conds []string
	from := " FROM docs d"
	if len(q.words) > 0 {
		fn := "plainto_tsquery"
		if q.phrase {
			fn = "phraseto_tsquery"
		}
		args = append(args, strings.Join(q.words, " "))
		from = fmt.Sprintf(" FROM docs d, %s('simple', $1) AS query", fn)
		conds = append(conds, "d.tsv @@ query")
	}
	if q.tag != "" {
		args = append(args, q.tag)
		conds = append(conds, fmt.Sprintf("d.tag = $%d", len(args)))
	}
	if q.sizeHi > q.sizeLo {
		args = append(args, q.sizeLo, q.sizeHi)
		conds = append(conds, fmt.Sprintf("d.size >= $%d AND d.size < $%d", len(args)-1, len(args)))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	order := " ORDER BY d.id"
	switch {
	case q.bySize:
		order = " ORDER BY d.size DESC, d.id"
	case len(q.words) > 0:
		order = " ORDER BY ts_rank_cd(d.tsv, query) DESC, d.id"
	}
	page = "SELECT d.id, d.title, d.body, d.tag, d.source, d.rank, d.size" + from + where + order + fmt.Sprintf(" LIMIT %d OFFSET %d", pageSize, q.offset)
	count = "SELECT count(*), 0::bigint, 0::float8" + from + where
	if q.facets {
		count = "SELECT count(*), count(d.rank), coalesce(sum(d.rank), 0)::float8" + from + where
		for _, f := range []string{"tag", "source", "rank"} {
			facets = append(facets, fmt.Sprintf("SELECT d.%s::text AS v, count(*) AS n%s%s GROUP BY d.%s ORDER BY n DESC, d.%s::text COLLATE \"C\" LIMIT %d", f, from, where, f, f, facetSize))
		}
	}
	return page, count, facets, args
}

func (p *pgEngine) search(ctx context.Context, q query) (outcome, error) {
	page, count, facets, args := pgQueries(q)
	// One round trip, in one read-only transaction at repeatable read: the
	// statements see the same state, as Folio's one search does.
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.Queue(page, args...)
	b.Queue(count, args...)
	for _, f := range facets {
		b.Queue(f, args...)
	}
	b.Queue("COMMIT")
	res := p.pool.SendBatch(ctx, b)
	defer res.Close()
	var o outcome
	if _, err := res.Exec(); err != nil {
		return outcome{}, err
	}
	rows, err := res.Query()
	if err != nil {
		return outcome{}, fmt.Errorf("postgres %s: %w", q.kind, err)
	}
	for rows.Next() {
		var d doc
		if err := rows.Scan(&d.ID, &d.Title, &d.Body, &d.Tag, &d.Source, &d.Rank, &d.Size); err != nil {
			rows.Close()
			return outcome{}, err
		}
		if o.hits == 0 {
			o.firstID = d.ID
		}
		o.hits++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return outcome{}, fmt.Errorf("postgres %s: %w", q.kind, err)
	}
	var rankN int64
	var rankSum float64
	if err := res.QueryRow().Scan(&o.found, &rankN, &rankSum); err != nil {
		return outcome{}, fmt.Errorf("postgres %s count: %w", q.kind, err)
	}
	if q.facets {
		tops := make([]struct {
			v string
			n int64
		}, len(facets))
		for i := range facets {
			rows, err := res.Query()
			if err != nil {
				return outcome{}, err
			}
			first := true
			for rows.Next() {
				var v string
				var n int64
				if err := rows.Scan(&v, &n); err != nil {
					rows.Close()
					return outcome{}, err
				}
				if first {
					tops[i].v, tops[i].n, first = v, n, false
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return outcome{}, err
			}
		}
		o.facets = facetDigest(tops[0].v, tops[0].n, tops[1].v, tops[1].n, rankN, rankSum)
	}
	if _, err := res.Exec(); err != nil {
		return outcome{}, err
	}
	return o, res.Close()
}
