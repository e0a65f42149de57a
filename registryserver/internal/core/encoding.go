package core

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// Content codings the handler can produce, in order of preference when a
// client rates several equally.
const (
	encBrotli   = "br"
	encGzip     = "gzip"
	encDeflate  = "deflate"
	encIdentity = ""
)

var supportedEncodings = [...]string{encBrotli, encGzip, encDeflate}

// minCompressSize is the body size under which responses are sent plain:
// below it the headers and the framing cost more than compression saves.
const minCompressSize = 1024

// maxCompressSize is the largest body the handler buffers to compress;
// larger files are streamed plain.
const maxCompressSize = 8 << 20

// acceptedCoding is one element of an Accept-Encoding header.
type acceptedCoding struct {
	coding string  // lowercased; "*" for the wildcard
	q      float64 // 0 to 1
}

// parseAcceptEncoding parses an Accept-Encoding header value (RFC 9110
// section 12.5.3): a comma-separated list of codings, each with an optional
// ";q=<weight>". Codings are lowercased. Elements that do not parse
// (an empty coding, a bad or out-of-range weight) are dropped, as RFC 9110
// lets a server ignore what it does not understand. Parameters other than q
// are ignored.
func parseAcceptEncoding(h string) []acceptedCoding {
	var out []acceptedCoding
	for h != "" {
		var a acceptedCoding
		var ok bool
		if a, ok, h = nextAcceptedCoding(h); ok {
			out = append(out, a)
		}
	}
	return out
}

// nextAcceptedCoding parses the first element of an Accept-Encoding value
// h as [parseAcceptEncoding] does (ok is false when it is dropped) and
// returns the rest of h. It does not allocate.
func nextAcceptedCoding(h string) (a acceptedCoding, ok bool, rest string) {
	elem, rest, _ := strings.Cut(h, ",")
	name, params, _ := strings.Cut(elem, ";")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || !isToken(name) {
		return a, false, rest
	}
	q, ok := 1.0, true
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, ok = parseQValue(strings.TrimSpace(v))
		}
	}
	return acceptedCoding{coding: name, q: q}, ok, rest
}

// parseQValue parses a weight: "0", "1", or up to three decimals, between 0
// and 1 (RFC 9110 section 12.4.2).
func parseQValue(v string) (float64, bool) {
	if v == "" || len(v) > 5 || (v[0] != '0' && v[0] != '1') {
		return 0, false
	}
	if len(v) > 1 {
		if v[1] != '.' {
			return 0, false
		}
		for _, c := range v[2:] {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
	}
	q, err := strconv.ParseFloat(v, 64)
	if err != nil || q < 0 || q > 1 {
		return 0, false
	}
	return q, true
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// negotiateEncoding picks the coding to send for an Accept-Encoding value:
// the supported coding with the highest weight above zero, ties broken by
// br, gzip, deflate. "*" rates every coding not named. It returns
// encIdentity when no supported coding is acceptable (identity is always
// acceptable in practice; a client refusing it still gets it rather than a
// 406).
func negotiateEncoding(header string) string {
	if header == "" {
		return encIdentity
	}
	var q [len(supportedEncodings)]float64
	var named [len(supportedEncodings)]bool
	star := -1.0
	for h := header; h != ""; {
		a, ok := acceptedCoding{}, false
		if a, ok, h = nextAcceptedCoding(h); !ok {
			continue
		}
		if a.coding == "*" {
			star = max(star, a.q)
			continue
		}
		for i, enc := range supportedEncodings {
			if a.coding == enc || (enc == encGzip && a.coding == "x-gzip") {
				if !named[i] || a.q > q[i] {
					q[i] = a.q
				}
				named[i] = true
			}
		}
	}
	best, bestQ := encIdentity, 0.0
	for i, enc := range supportedEncodings {
		if !named[i] && star >= 0 {
			q[i] = star
		}
		if q[i] > bestQ {
			best, bestQ = enc, q[i]
		}
	}
	return best
}

// compress encodes data with the content coding enc. Writers are pooled;
// brotli's window and quality are sized to the body (see brotliParams), so
// compressing a small file costs little memory.
func compress(enc string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	var err error
	switch enc {
	case encBrotli:
		lgwin, quality := brotliParams(len(data))
		err = compressPooled(&brotliPools[lgwin-minBrotliWindow], &buf, data, func(w io.Writer) pooledWriter {
			return brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
		})
	case encGzip:
		err = compressPooled(&gzipPool, &buf, data, func(w io.Writer) pooledWriter {
			z, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
			return z
		})
	case encDeflate:
		// HTTP "deflate" is the zlib format (RFC 9110 section 8.4.1.2).
		err = compressPooled(&zlibPool, &buf, data, func(w io.Writer) pooledWriter {
			z, _ := zlib.NewWriterLevel(w, zlib.BestCompression)
			return z
		})
	default:
		return nil, fmt.Errorf("unsupported content coding %q", enc)
	}
	if err != nil {
		return nil, fmt.Errorf("compressing with %s: %w", enc, err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// pooledWriter is a compressor kept in a sync.Pool between bodies.
type pooledWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressPooled writes data through a writer from pool (newWriter makes
// one when the pool is empty) into buf, and returns the writer to the pool
// detached from buf.
func compressPooled(pool *sync.Pool, buf *bytes.Buffer, data []byte, newWriter func(io.Writer) pooledWriter) error {
	w, _ := pool.Get().(pooledWriter)
	if w == nil {
		w = newWriter(buf)
	} else {
		w.Reset(buf)
	}
	_, err := w.Write(data)
	if err == nil {
		err = w.Close()
	}
	w.Reset(nil)
	pool.Put(w)
	return err
}

// Brotli window sizes (base 2 logarithms) the encoder accepts.
const (
	minBrotliWindow = 10
	maxBrotliWindow = 24
)

// brotliPools holds brotli writers by window size (the quality follows
// from it).
var brotliPools [maxBrotliWindow - minBrotliWindow + 1]sync.Pool

var gzipPool, zlibPool sync.Pool

// brotliParams sizes brotli to a body of n bytes: the smallest window that
// holds the whole body, quality 8 up to 64 KiB and quality 5 beyond. Both
// keep the match finder small (about 0.6 MB for 4 KiB, 4 MB for 400 KiB,
// measured by BenchmarkCompress) where the quality-9 default with a 4 MiB
// window allocates about 64 MB per writer.
func brotliParams(n int) (lgwin, quality int) {
	lgwin = max(minBrotliWindow, min(maxBrotliWindow, bits.Len(uint(max(n, 1)-1))))
	if lgwin <= 16 {
		return lgwin, 8
	}
	return lgwin, 5
}

// compressible reports whether a body of this media type is worth
// compressing (text and structured text, not images or archives).
func compressible(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "image/svg+xml",
		"application/yaml", "application/toml", "application/x-sh", "application/wasm":
		return true
	}
	return false
}
