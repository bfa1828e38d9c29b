package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/backup"
	"github.com/foliodb/folio/internal/kv"
)

// BackupRequest backs the store up into Dir: a new or empty directory
// under the server's backup directory (Config.BackupDir), named relative
// to it or by an absolute path inside it.
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
	ctx, op, err := o.open(ctx, c, "Backup")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	if req.Dir == "" {
		return nil, apierror.Errorf(apierror.InvalidArgument, "a backup needs 'dir': the name of a new or empty directory under the server's backup directory (--backup-dir), or an absolute path inside it")
	}
	cp, ok := o.store.(kv.Checkpointer)
	if !ok {
		return nil, apierror.Errorf(apierror.FailedPrecondition, "%s", noBackupAdvice)
	}
	if o.cfg.BackupDir == "" {
		return nil, apierror.Errorf(apierror.FailedPrecondition, "backups over the API are off on this server: start it with --backup-dir, the directory they go under")
	}
	dir, err := backupTarget(o.cfg.BackupDir, req.Dir)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := backup.Write(ctx, cp, dir, nil)
	if err != nil {
		return nil, backupError(ctx, req.Dir, err)
	}
	res := &BackupResult{Dir: dir, Position: m.Position, Bytes: m.Bytes(), Files: len(m.Files), CreatedAt: m.CreatedAt, Duration: time.Since(start)}
	o.log.Info("backup written", "dir", res.Dir, "position", res.Position, "bytes", res.Bytes, "duration", res.Duration, "by", c.App)
	return res, nil
}

// errOutsideBackupDir refuses a target the backup directory does not
// hold. It says the same whatever is there, so that the call tells the
// caller nothing of the server's other files.
var errOutsideBackupDir = apierror.Errorf(apierror.InvalidArgument, "a backup's 'dir' must be under the server's backup directory (--backup-dir): a name relative to it, or an absolute path inside it, not through a symbolic link")

// backupTarget returns the directory a backup into dir writes: dir under
// root, which must hold it (not be it). A symbolic link below root could
// lead anywhere, so the path must not pass through one.
func backupTarget(root, dir string) (string, error) {
	root = filepath.Clean(root)
	target := filepath.Clean(dir)
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errOutsideBackupDir
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break // backup.Write makes the rest
		}
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return "", errOutsideBackupDir
		}
	}
	return target, nil
}

// backupError gives a failed backup its code: what the caller can mend (the
// directory, another backup running) says so. Messages name the directory
// as the caller gave it, and neither the files it holds nor the server's
// own errors, which go to the log (as a cause).
func backupError(ctx context.Context, dir string, err error) error {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.Is(err, backup.ErrNotEmpty):
		return apierror.Errorf(apierror.AlreadyExists, "backup into '%s': the directory is not empty: give a new or empty one", dir)
	case errors.Is(err, backup.ErrRunning):
		return apierror.Errorf(apierror.FailedPrecondition, "%s on this server: wait for it to end", backup.ErrRunning)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kv.ErrClosed):
		return apiError(ctx, err)
	case errors.As(err, &pathErr), errors.As(err, &linkErr):
		return &apierror.Error{Code: apierror.FailedPrecondition, Message: fmt.Sprintf("backup into '%s': the server cannot create or write that directory", dir), Cause: err}
	}
	return apiError(ctx, err)
}
