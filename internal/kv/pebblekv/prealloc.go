package pebblekv

import "github.com/cockroachdb/pebble/v2/vfs"

// maxPreallocate bounds how much disk one preallocation of a file takes.
// Pebble reserves each WAL file 110% of the memtable size ahead of its
// writes, so a fresh store's size would follow MemTableSize; bounded, a
// store can have larger memtables (fewer flushes and compactions under
// writes) and still take about 4 MiB while nearly empty. A file written
// past what it reserved simply grows, as any file does.
const maxPreallocate = 4 << 20

// boundedPreallocFS is an FS whose writable files preallocate at most
// maxPreallocate bytes at a time.
type boundedPreallocFS struct{ vfs.FS }

func (fs boundedPreallocFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return boundedFile(fs.FS.Create(name, category))
}

func (fs boundedPreallocFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return boundedFile(fs.FS.OpenReadWrite(name, category, opts...))
}

func (fs boundedPreallocFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	return boundedFile(fs.FS.ReuseForWrite(oldname, newname, category))
}

func (fs boundedPreallocFS) Unwrap() vfs.FS { return fs.FS }

func boundedFile(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return boundedPreallocFile{f}, nil
}

type boundedPreallocFile struct{ vfs.File }

func (f boundedPreallocFile) Preallocate(offset, length int64) error {
	return f.File.Preallocate(offset, min(length, maxPreallocate))
}
