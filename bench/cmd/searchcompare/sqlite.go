package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// sqliteEngine is SQLite with an FTS5 index over title and body, in this
// process (as an application embeds it), durable: WAL with synchronous
// FULL, so a commit is on disk when it returns.
type sqliteEngine struct {
	db *sql.DB
}

var sqliteSchema = []string{
	`CREATE TABLE docs(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, tag TEXT NOT NULL,
		source TEXT NOT NULL, rank INTEGER NOT NULL, size REAL NOT NULL)`,
	`CREATE INDEX docs_tag_size ON docs(tag, size)`,
	`CREATE INDEX docs_size ON docs(size)`,
	// External content: the text is kept once, in docs; the index is
	// written with each row, in the same transaction.
	`CREATE VIRTUAL TABLE fts USING fts5(title, body, content='docs', content_rowid='id')`,
}

func newSQLite(ctx context.Context, dir string, conns int) (*sqliteEngine, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(60000)", "cache_size(-32768)", "mmap_size(268435456)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate") // writers queue for the lock at BEGIN, not fail at their first write
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "fts.db")+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	for _, stmt := range sqliteSchema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	return &sqliteEngine{db: db}, nil
}

func (s *sqliteEngine) name() string { return "SQLite FTS5" }
func (s *sqliteEngine) close()       { s.db.Close() }

func (s *sqliteEngine) store(ctx context.Context, docs []doc) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	row, err := tx.PrepareContext(ctx, `INSERT INTO docs(id, title, body, tag, source, rank, size) VALUES(?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	text, err := tx.PrepareContext(ctx, `INSERT INTO fts(rowid, title, body) VALUES(?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if _, err := row.ExecContext(ctx, d.ID, d.Title, d.Body, d.Tag, d.Source, d.Rank, d.Size); err != nil {
			return err
		}
		if _, err := text.ExecContext(ctx, d.ID, d.Title, d.Body); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteEngine) load(ctx context.Context, docs []doc, batch, clients int) error {
	if err := inBatches(ctx, docs, batch, clients, func(part []doc) error { return s.store(ctx, part) }); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `ANALYZE`)
	return err
}

func (s *sqliteEngine) insert(ctx context.Context, d doc) error { return s.store(ctx, []doc{d}) }

// ftsMatch is q's FTS5 query: each word quoted (all must match), or the
// phrase quoted whole.
func ftsMatch(q query) string {
	if q.phrase {
		return `"` + strings.Join(q.words, " ") + `"`
	}
	parts := make([]string, len(q.words))
	for i, w := range q.words {
		parts[i] = `"` + w + `"`
	}
	return strings.Join(parts, " ")
}

// sqliteWhere is the filter part of q over docs d (and fts when q has
// words), with its arguments.
func sqliteWhere(q query) (string, []any) {
	var conds []string
	var args []any
	if len(q.words) > 0 {
		conds = append(conds, "fts MATCH ?")
		args = append(args, ftsMatch(q))
	}
	if q.tag != "" {
		conds = append(conds, "d.tag = ?")
		args = append(args, q.tag)
	}
	if q.sizeHi > q.sizeLo {
		conds = append(conds, "d.size >= ? AND d.size < ?")
		args = append(args, q.sizeLo, q.sizeHi)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// sqliteQueries are q's statements: the page, the count (with rank's
// stats when q has facets), and with facets each facet's counts. A text
// search without a filter ranks in FTS5 alone and joins the page's rows
// after, as FTS5's documentation advises.
func sqliteQueries(q query) (page, count string, facets []string) {
	const cols = "SELECT d.id, d.title, d.body, d.tag, d.source, d.rank, d.size"
	where, _ := sqliteWhere(q)
	limit := fmt.Sprintf(" LIMIT %d OFFSET %d", pageSize, q.offset)
	if len(q.words) > 0 && q.tag == "" && q.sizeHi <= q.sizeLo && !q.bySize && !q.facets {
		page = cols + " FROM (SELECT rowid, rank FROM fts" + where + " ORDER BY rank" + limit + ") r JOIN docs d ON d.id = r.rowid ORDER BY r.rank"
		return page, "SELECT count(*), 0, 0 FROM fts" + where, nil
	}
	from := " FROM docs d"
	if len(q.words) > 0 {
		from = " FROM fts JOIN docs d ON d.id = fts.rowid"
	}
	order := " ORDER BY d.id"
	switch {
	case q.bySize:
		order = " ORDER BY d.size DESC, d.id"
	case len(q.words) > 0:
		order = " ORDER BY fts.rank"
	}
	page = cols + from + where + order + limit
	count = "SELECT count(*), 0, 0" + from + where
	if q.facets {
		count = "SELECT count(*), count(d.rank), coalesce(sum(d.rank), 0)" + from + where
		for _, f := range []string{"tag", "source", "rank"} {
			facets = append(facets, fmt.Sprintf("SELECT CAST(d.%s AS TEXT), count(*) AS n%s%s GROUP BY d.%s ORDER BY n DESC, CAST(d.%s AS TEXT) LIMIT %d", f, from, where, f, f, facetSize))
		}
	}
	return page, count, facets
}

func (s *sqliteEngine) search(ctx context.Context, q query) (outcome, error) {
	page, count, facets := sqliteQueries(q)
	_, args := sqliteWhere(q)
	// One read transaction: the page, the count and the facets see the
	// same state, as Folio's one search does.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return outcome{}, err
	}
	defer tx.Rollback()
	var o outcome
	rows, err := tx.QueryContext(ctx, page, args...)
	if err != nil {
		return outcome{}, fmt.Errorf("sqlite %s: %w", q.kind, err)
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
	if err := rows.Close(); err != nil {
		return outcome{}, err
	}
	var rankN int64
	var rankSum float64
	if err := tx.QueryRowContext(ctx, count, args...).Scan(&o.found, &rankN, &rankSum); err != nil {
		return outcome{}, fmt.Errorf("sqlite %s count: %w", q.kind, err)
	}
	if q.facets {
		tops := make([]struct {
			v string
			n int64
		}, len(facets))
		for i, f := range facets {
			rows, err := tx.QueryContext(ctx, f, args...)
			if err != nil {
				return outcome{}, fmt.Errorf("sqlite facet: %w", err)
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
			if err := rows.Close(); err != nil {
				return outcome{}, err
			}
		}
		o.facets = facetDigest(tops[0].v, tops[0].n, tops[1].v, tops[1].n, rankN, rankSum)
	}
	return o, nil
}
