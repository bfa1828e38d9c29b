package sqlkv

import "github.com/jackc/pgx/v5"

// WithTracer sets the tracer that tests outside the package observe the
// pool's statements with.
func WithTracer(o Options, t pgx.QueryTracer) Options { o.tracer = t; return o }
