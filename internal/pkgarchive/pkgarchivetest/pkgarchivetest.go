package pkgarchivetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"time"
)

// Entry is one tar entry. Type defaults to a regular file.
type Entry struct {
	Name string
	Type byte   // tar.TypeReg when 0
	Body string // content of a regular file
	Link string // target of a link
	// Zeros, when > 0, is the size of a regular file made of zero bytes
	// (Body is ignored); it compresses to almost nothing.
	Zeros int64
}

// File returns a regular file entry.
func File(name, body string) Entry { return Entry{Name: name, Body: body} }

// Dir returns a directory entry.
func Dir(name string) Entry { return Entry{Name: name, Type: tar.TypeDir} }

// Build returns the gzip-compressed tar of entries, followed by trailing
// zero bytes of the decompressed stream when trailingZeros > 0. It panics
// on errors, which cannot happen when writing to memory.
func Build(trailingZeros int64, entries ...Entry) []byte {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	mtime := time.Unix(0, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: 0o644, ModTime: mtime, Format: tar.FormatPAX}
		if h.Typeflag == tar.TypeXGlobalHeader {
			h = &tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "git"}}
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		var body io.Reader
		switch h.Typeflag {
		case tar.TypeReg:
			if e.Zeros > 0 {
				h.Size = e.Zeros
				body = io.LimitReader(zeroReader{}, e.Zeros)
			} else {
				h.Size = int64(len(e.Body))
				body = bytes.NewReader([]byte(e.Body))
			}
		case tar.TypeDir:
			h.Mode = 0o755
		case tar.TypeSymlink, tar.TypeLink:
			h.Linkname = e.Link
		}
		must(tw.WriteHeader(h))
		if body != nil {
			_, err := io.Copy(tw, body)
			must(err)
		}
	}
	must(tw.Close())
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	must(err)
	_, err = io.Copy(zw, &raw)
	must(err)
	if trailingZeros > 0 {
		_, err = io.Copy(zw, io.LimitReader(zeroReader{}, trailingZeros))
		must(err)
	}
	must(zw.Close())
	return out.Bytes()
}

// Gzip compresses data (for archives that are gzip but not tar).
func Gzip(data []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, err := zw.Write(data)
	must(err)
	must(zw.Close())
	return out.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
