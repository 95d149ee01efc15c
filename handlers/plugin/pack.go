package plugin

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"time"
)

// packTime is every entry's modification time in a pack: the same files
// give the same bytes, whenever they were touched.
var packTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Pack writes the files of a checked plugin (Report.Files) as a gzipped
// tar to w, reproducibly: entries in sorted order, each a regular file of
// mode 0644 owned by 0:0 with no owner names and the fixed packTime, and
// a gzip header with no name and no time. The same contents give the
// same bytes.
func Pack(root *os.Root, files []string, w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	var total int64
	for _, name := range files {
		data, err := readFile(root, name, PackMax-total)
		if err != nil {
			return fmt.Errorf("%s %w", name, err)
		}
		total += int64(len(data))
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644,
			ModTime: packTime,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("packing %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
