package pebblekv

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble finds its current manifest, and the format its files are in,
// through two marker files whose names carry the answer and whose content
// is empty. A copy made by a tool that skips empty files drops them, and
// Pebble then takes the directory for a new store: it writes an empty
// manifest and deletes every table and log file it finds as obsolete.
// checkMarkers refuses such a directory before Pebble sees it.
const (
	manifestMarkerPrefix = "marker.manifest."
	formatMarkerPrefix   = "marker.format-version."
)

// ErrMissingMarkers is wrapped by Open's error for a directory that holds a
// store's data files but not the markers that make them readable.
var ErrMissingMarkers = errors.New("pebblekv: data files without their markers")

// checkMarkers returns nil for a directory Pebble can open without losing
// anything: one that does not exist yet, holds no data files, or holds
// both markers beside them. Otherwise it returns an error naming what is
// missing and how to get it back.
func checkMarkers(fs vfs.FS, dir string) error {
	names, err := fs.List(dir)
	if err != nil {
		if _, statErr := fs.Stat(dir); statErr != nil {
			return nil // a new directory: Pebble creates it
		}
		return fmt.Errorf("pebblekv: list %s: %w", dir, err)
	}
	var data, manifests []string
	var manifestMarker, formatMarker bool
	formatVersion := ""
	for _, name := range names {
		switch {
		case strings.HasPrefix(name, manifestMarkerPrefix):
			manifestMarker = true
		case strings.HasPrefix(name, formatMarkerPrefix):
			formatMarker = true
		case strings.HasPrefix(name, "MANIFEST-"):
			manifests = append(manifests, name)
			data = append(data, name)
		case strings.HasSuffix(name, ".sst"), strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".blob"):
			data = append(data, name)
		case strings.HasPrefix(name, "OPTIONS-"):
			if v := optionsFormatVersion(fs, fs.PathJoin(dir, name)); v != "" {
				formatVersion = v
			}
		}
	}
	if len(data) == 0 || (manifestMarker && formatMarker) {
		return nil
	}
	sort.Strings(manifests)
	var missing, restore []string
	if !manifestMarker {
		missing = append(missing, "the manifest marker ("+manifestMarkerPrefix+"NNNNNN.MANIFEST-NNNNNN)")
		if len(manifests) > 0 {
			restore = append(restore, "touch "+fs.PathJoin(dir, manifestMarkerPrefix+"000001."+manifests[len(manifests)-1]))
		}
	}
	if !formatMarker {
		missing = append(missing, "the format marker ("+formatMarkerPrefix+"NNNNNN.VVV)")
		if formatVersion != "" {
			restore = append(restore, "touch "+fs.PathJoin(dir, formatMarkerPrefix+"000001."+formatVersion))
		}
	}
	msg := fmt.Sprintf("%s holds %d of the store's data files but not %s, empty files that copy tools which skip empty files leave out; "+
		"opening it would start an empty store and delete those files, so Folio will not. "+
		"Copy the directory again with a tool that keeps empty files (cp -a, rsync -a), or restore from a backup",
		dir, len(data), strings.Join(missing, " nor "))
	if len(restore) > 0 && len(restore) == len(missing) {
		msg += "; if the files are otherwise whole, this recreates what is missing: " + strings.Join(restore, " && ")
	}
	return fmt.Errorf("%w: %s", ErrMissingMarkers, msg)
}

// optionsFormatVersion reads the format_major_version an OPTIONS file
// records, zero-padded as the format marker's name has it, or "".
func optionsFormatVersion(fs vfs.FS, path string) string {
	f, err := fs.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 16<<10)
	n, _ := f.Read(buf)
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "format_major_version=")
		if !ok {
			continue
		}
		var num int
		if _, err := fmt.Sscanf(v, "%d", &num); err != nil {
			return ""
		}
		return fmt.Sprintf("%03d", num)
	}
	return ""
}
