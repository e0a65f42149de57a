package core

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// representation is what a read route answers with: one body (a stored
// manifest or file, or a generated JSON document) and the header values
// of each of its content codings. [Handler.writeRepresentation] is the
// one place that turns it into a response: content negotiation, ETag,
// If-None-Match (Not Modified), Repr-Digest, Range and HEAD.
//
// The header values of a representation the handler remembers (see
// [readCache]) are computed once, when it is first read; those of a
// document built per request are computed as they are needed.
type representation struct {
	// file marks a registry file: it carries X-Content-Type-Options and
	// a sandbox Content-Security-Policy, and every identity answer (a
	// Not Modified one included) carries its Repr-Digest. A document
	// (manifest, versions list, discovery) carries its Repr-Digest on
	// 200 answers only.
	file bool
	// compressible: a content coding is negotiated (a compressible
	// media type between minCompressSize and maxCompressSize).
	compressible bool
	// seekable: the identity body answers ranges and If-Modified-Since
	// and carries Last-Modified and Accept-Ranges, as
	// [http.ServeContent] does.
	seekable bool
	modTime  time.Time

	// etag is the quoted strong ETag of the identity body, "" for none;
	// each coding has its own ([encodedETag]).
	etag string
	// cacheBase identifies the body exactly in the byte cache (with
	// the coding in front); "" compresses on every request.
	cacheBase string

	ctypeHdr     []string
	lengthHdr    []string // identity Content-Length; nil when unknown
	reprDigest   []string // identity Repr-Digest; nil for none
	lastModified []string // sent when seekable; nil for none

	// etags and keys are the ETag header values and byte-cache keys by
	// encIndex, filled by [representation.precompute]; nil and ""
	// entries are computed per request.
	etags [4][]string
	keys  [4]string
	// encLengths are the Content-Length values of the encoded bodies by
	// encIndex, remembered as they are first sent.
	encLengths [4]atomic.Pointer[bodyLength]
}

// bodyLength is a body's length and its Content-Length value.
type bodyLength struct {
	n   int
	hdr []string
}

// encodedLength is the Content-Length value of body, coding ei of r.
func (r *representation) encodedLength(ei int, body []byte) []string {
	if l := r.encLengths[ei].Load(); l != nil && l.n == len(body) {
		return l.hdr
	}
	l := &bodyLength{n: len(body), hdr: []string{strconv.Itoa(len(body))}}
	r.encLengths[ei].Store(l)
	return l.hdr
}

// newRepresentation describes a body of size bytes (-1: unknown) with
// media type ctype and identity ETag etag.
func newRepresentation(ctype, etag, cacheBase string, size int64, file bool) *representation {
	r := &representation{file: file, etag: etag, cacheBase: cacheBase, ctypeHdr: []string{ctype},
		compressible: size >= minCompressSize && size <= maxCompressSize && compressible(ctype)}
	if size >= 0 {
		r.lengthHdr = []string{strconv.FormatInt(size, 10)}
	}
	return r
}

// setModTime records the modification time a seekable body answers
// If-Modified-Since with and sends as Last-Modified.
func (r *representation) setModTime(t time.Time) {
	r.modTime = t
	if !t.IsZero() && !t.Equal(time.Unix(0, 0)) {
		r.lastModified = []string{t.UTC().Format(http.TimeFormat)}
	}
}

// setReprDigest sets the Repr-Digest value of the identity body ("" for
// none).
func (r *representation) setReprDigest(v string) {
	if v != "" {
		r.reprDigest = []string{v}
	}
}

// precompute fills the ETag values and byte-cache keys of every coding,
// for a representation answered many times.
func (r *representation) precompute() {
	r.etags[0] = r.etagHdr(0)
	r.keys[0] = r.key(0)
	for _, enc := range supportedEncodings {
		i := encIndex(enc)
		r.etags[i] = r.etagHdr(i)
		r.keys[i] = r.key(i)
	}
}

// etagHdr is the ETag header value of coding ei, nil for none.
func (r *representation) etagHdr(ei int) []string {
	if v := r.etags[ei]; v != nil || r.etag == "" {
		return v
	}
	return []string{encodedETag(r.etag, encodingNames[ei])}
}

// key is the byte-cache key of coding ei, "" for none.
func (r *representation) key(ei int) string {
	if k := r.keys[ei]; k != "" || r.cacheBase == "" {
		return k
	}
	return encodingNames[ei] + "\x00" + r.cacheBase
}

// writeRepresentation answers req with rep, whose identity body is data
// or, when data is nil, is read from stream (a file too large to keep in
// memory; an [io.ReadSeeker] when rep is seekable). The caller has set
// the cache headers (Cache-Control, Vary).
//
// It picks a content coding the client accepts when rep is
// compressible, sends that coding's ETag, answers a matching
// If-None-Match with Not Modified, a range or a precondition on a
// seekable identity body as [http.ServeContent] does, and HEAD with the
// headers only.
func (h *Core) writeRepresentation(w http.ResponseWriter, req *http.Request, rep *representation, data []byte, stream io.Reader) error {
	hdr := w.Header()
	hdr[echo.HeaderContentType] = rep.ctypeHdr
	if rep.file {
		hdr[headerNoSniff] = noSniff
		hdr[headerCSP] = sandboxCSP
	}
	ei := 0
	if rep.compressible {
		ei = encIndex(negotiateEncoding(HeaderValue(req.Header, echo.HeaderAcceptEncoding)))
	}
	etag := rep.etagHdr(ei)
	if etag != nil {
		hdr[headerETag] = etag
	}
	if ei == 0 && rep.file && rep.reprDigest != nil {
		hdr[headerReprDigest] = rep.reprDigest
	}
	if ei == 0 && rep.seekable && (data == nil || conditionalOrRange(req.Header)) {
		rs, ok := stream.(io.ReadSeeker)
		if data != nil {
			rs, ok = bytes.NewReader(data), true
		}
		if ok {
			// ServeContent answers If-None-Match from the ETag set
			// above, HEAD, and Range.
			http.ServeContent(w, req, "", rep.modTime, rs)
			return nil
		}
	}
	if etag != nil && etagMatches(HeaderValue(req.Header, headerIfNoneMatch), etag[0]) {
		hdr.Del(echo.HeaderContentType)
		hdr.Del(echo.HeaderContentLength)
		hdr.Del(echo.HeaderContentEncoding)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if ei != 0 {
		body, err := h.encodedBody(rep.key(ei), encodingNames[ei], data, stream)
		if err != nil {
			return InternalError(err)
		}
		hdr[echo.HeaderContentEncoding] = encodingValues[ei]
		return writeBody(w, req, body, rep.encodedLength(ei, body))
	}
	if !rep.file && rep.reprDigest != nil {
		hdr[headerReprDigest] = rep.reprDigest
	}
	if rep.seekable {
		// What http.ServeContent sends for a plain GET or HEAD.
		if rep.lastModified != nil {
			hdr[headerLastModified] = rep.lastModified
		}
		hdr[headerAcceptRanges] = acceptRangesBytes
	}
	if data != nil || stream == nil {
		return writeBody(w, req, data, rep.lengthHdr)
	}
	if rep.lengthHdr != nil {
		hdr[echo.HeaderContentLength] = rep.lengthHdr
	}
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, stream); err != nil {
		// The status is sent; the client most likely went away.
		h.Log.Debug("streaming file", zap.Error(err))
	}
	return nil
}

// encodedBody returns the body in coding enc: from the byte cache under
// key when it was computed before, else compressed from data (or what
// stream yields, up to maxCompressSize) and remembered under key ("":
// not remembered).
func (h *Core) encodedBody(key, enc string, data []byte, stream io.Reader) ([]byte, error) {
	if key != "" {
		if b, ok := h.Cache.get(key); ok {
			return b, nil
		}
	}
	if data == nil && stream != nil {
		var err error
		if data, err = io.ReadAll(io.LimitReader(stream, maxCompressSize+1)); err != nil {
			return nil, fmt.Errorf("reading the body to compress: %w", err)
		}
	}
	if key == "" || h.Cache == nil {
		return compress(enc, data)
	}
	// Concurrent first requests for the same content share one
	// compression instead of each doing it.
	v, err, _ := h.compressing.Do(key, func() (any, error) {
		if b, ok := h.Cache.get(key); ok {
			return b, nil
		}
		b, err := compress(enc, data)
		if err == nil {
			h.Cache.add(key, b)
		}
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// autoLengthMax is the largest body net/http's HTTP/1 server buffers
// before sending headers (its bufferBeforeChunkingSize; HTTP/2 buffers
// 4 KiB): up to it, the server computes Content-Length itself.
const autoLengthMax = 2048

// writeBody writes a 200 with body, or only the headers for HEAD, with
// the Content-Length value given (nil: computed).
func writeBody(w http.ResponseWriter, req *http.Request, body []byte, length []string) error {
	switch {
	case req.Method == http.MethodGet && len(body) <= autoLengthMax:
		// net/http (HTTP/1 and HTTP/2) sends the Content-Length of a
		// body the handler wrote whole and that fits its buffer: one
		// header fewer in the map it clones, sorts and writes.
	case length == nil:
		w.Header()[echo.HeaderContentLength] = []string{strconv.Itoa(len(body))}
	default:
		w.Header()[echo.HeaderContentLength] = length
	}
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(body)
	return err
}

// encodedETag gives each content coding of a representation its own ETag:
// "abc" becomes "abc-br".
func encodedETag(etag, enc string) string {
	if etag == "" || enc == encIdentity {
		return etag
	}
	if strings.HasSuffix(etag, `"`) {
		return etag[:len(etag)-1] + "-" + enc + `"`
	}
	return etag + "-" + enc
}

// etagMatches implements the weak comparison If-None-Match uses (RFC 9110
// section 13.1.2): "*" matches anything; otherwise any listed tag equal to
// etag once "W/" prefixes are ignored.
func etagMatches(header, etag string) bool {
	if header == "" || etag == "" {
		return false
	}
	etag = strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// HeaderValue is h.Get(key) for a key in canonical form, without
// canonicalising it again.
func HeaderValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// conditionalOrRange reports whether a request carries a header that
// [http.ServeContent] must answer (a range, or a precondition).
func conditionalOrRange(h http.Header) bool {
	for _, k := range [...]string{"Range", "If-Range", "If-Match", "If-Unmodified-Since", "If-None-Match", "If-Modified-Since"} {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

// Header names (in canonical form) and shared values of representations.
const (
	headerETag         = "Etag"
	headerIfNoneMatch  = "If-None-Match"
	headerNoSniff      = "X-Content-Type-Options"
	headerCSP          = "Content-Security-Policy"
	headerLastModified = "Last-Modified"
	headerAcceptRanges = "Accept-Ranges"
)

var (
	noSniff           = []string{"nosniff"}
	sandboxCSP        = []string{"default-src 'none'; sandbox"}
	acceptRangesBytes = []string{"bytes"}
	// encodingNames and encodingValues are the codings and their
	// Content-Encoding values by encIndex.
	encodingNames  = [...]string{encIdentity, encBrotli, encGzip, encDeflate}
	encodingValues = [...][]string{nil, {encBrotli}, {encGzip}, {encDeflate}}
)

// encIndex numbers the codings: identity 0, then supportedEncodings.
func encIndex(enc string) int {
	switch enc {
	case encBrotli:
		return 1
	case encGzip:
		return 2
	case encDeflate:
		return 3
	}
	return 0
}
