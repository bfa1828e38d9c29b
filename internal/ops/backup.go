package ops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/backup"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
)

// BackupRequest backs the store up into Dir, a directory on the server's
// machine that must not exist or be empty.
type BackupRequest struct {
	Malformed error // see Malformed
	Dir       string
}

// BackupResult says what a backup holds.
type BackupResult struct {
	Dir string
	// Position is the change-log position the copy holds: every commit up
	// to it and none after.
	Position  kv.Position
	Bytes     int64
	Files     int
	CreatedAt time.Time
	Duration  time.Duration
}

// noBackupAdvice is the answer of a store that cannot copy itself.
const noBackupAdvice = "this server keeps its data in PostgreSQL, which Folio does not copy: back it up with PostgreSQL's tools (pg_basebackup, with WAL archiving for point-in-time recovery; pg_dump restores only into the same cluster), see docs/operations.md, or take a logical copy with `folio export`"

// Backup writes a consistent copy of the whole store (every namespace) while
// writes go on. It is the owner's: it reads every tenant's data and writes
// files on the server's machine. It runs past the request timeout: the copy
// takes the time the disk takes, and ends early only if the caller goes.
func (o *Ops) Backup(ctx context.Context, c Caller, req BackupRequest) (_ *BackupResult, err error) {
	defer o.observe(c, "Backup", time.Now(), &err)
	if err := o.authorize(c, auth.RoleOwner); err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	if req.Dir == "" || !filepath.IsAbs(req.Dir) {
		return nil, status.Errorf(status.InvalidArgument, "a backup needs 'dir': an absolute path of a new or empty directory on the server's machine")
	}
	cp, ok := o.store.(kv.Checkpointer)
	if !ok {
		return nil, status.Errorf(status.FailedPrecondition, "%s", noBackupAdvice)
	}
	start := time.Now()
	m, err := backup.Write(ctx, cp, filepath.Clean(req.Dir), nil)
	if err != nil {
		return nil, backupError(ctx, req.Dir, err)
	}
	res := &BackupResult{Dir: req.Dir, Position: m.Position, Bytes: m.Bytes(), Files: len(m.Files), CreatedAt: m.CreatedAt, Duration: time.Since(start)}
	o.log.Info("backup written", "dir", res.Dir, "position", res.Position, "bytes", res.Bytes, "duration", res.Duration, "by", c.App)
	return res, nil
}

// backupError gives a failed backup its code: what the caller can mend (the
// directory, its permissions, another backup running) says so.
func backupError(ctx context.Context, dir string, err error) error {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.Is(err, backup.ErrNotEmpty):
		return status.Errorf(status.AlreadyExists, "backup into %s", err)
	case errors.Is(err, backup.ErrRunning):
		return status.Errorf(status.FailedPrecondition, "%s on this server: wait for it to end", backup.ErrRunning)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kv.ErrClosed):
		return apiError(ctx, err)
	case errors.As(err, &pathErr), errors.As(err, &linkErr):
		return status.Errorf(status.FailedPrecondition, "backup into %s: %v", dir, err)
	}
	return apiError(ctx, err)
}
