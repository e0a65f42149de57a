package registryserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// maxDocumentSize bounds the JSON documents (manifests, versions lists,
// presets) the handler reads into memory.
const maxDocumentSize = 8 << 20

const (
	headerVary        = "Vary"
	varyToken         = "Authorization, X-Registry-Token"
	headerIfNoneMatch = "If-None-Match"
	headerETag        = "ETag"
)

// errTooLarge is returned when a stored document exceeds maxDocumentSize.
var errTooLarge = errors.New("stored document is too large")

// readParsed reads the document at key (readDocument) and parses it. ok is
// false when there is no such document; one that does not parse is an
// error naming key.
func readParsed[T any](ctx context.Context, h *Handler, key string, parse func([]byte) (T, error)) (v T, ok bool, err error) {
	data, _, err := h.readDocument(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	v, err = parse(data)
	if err != nil {
		return v, false, fmt.Errorf("%s: %w", key, err)
	}
	return v, true, nil
}

// readDocument reads a whole, bounded object from storage.
func (h *Handler) readDocument(ctx context.Context, key string) ([]byte, storage.Info, error) {
	rc, info, err := h.store.Get(ctx, key)
	if err != nil {
		return nil, storage.Info{}, err
	}
	defer rc.Close()
	if info.Size > maxDocumentSize {
		return nil, storage.Info{}, fmt.Errorf("%s: %w (over %d bytes)", key, errTooLarge, maxDocumentSize)
	}
	var buf bytes.Buffer
	if info.Size > 0 {
		buf.Grow(int(info.Size) + bytes.MinRead)
	}
	_, err = buf.ReadFrom(io.LimitReader(rc, maxDocumentSize+1))
	data := buf.Bytes()
	if err != nil {
		return nil, storage.Info{}, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(data) > maxDocumentSize {
		return nil, storage.Info{}, fmt.Errorf("%s: %w (over %d bytes)", key, errTooLarge, maxDocumentSize)
	}
	return data, info, nil
}

// document is an in-memory response body.
type document struct {
	data  []byte
	ctype string
	// etag is the strong validator of the identity representation,
	// quoted; "" sends none.
	etag string
	// cacheKey identifies data exactly, for the compression cache; ""
	// compresses on every request.
	cacheKey string
	// reprDigest is the Repr-Digest header value of the identity
	// representation (sent only when no content coding is applied); ""
	// sends none.
	reprDigest string
}

// jsonDocument encodes v as a JSON document whose ETag is a content hash.
func jsonDocument(v any) (document, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return document{}, err
	}
	etag := contentETag(data)
	return document{data: data, ctype: echo.MIMEApplicationJSON, etag: etag, cacheKey: "h\x00" + etag}, nil
}

// storedDocument wraps bytes read from storage under key.
func storedDocument(key string, data []byte, info storage.Info, ctype string) document {
	etag := storageETag(info)
	if etag == "" {
		etag = contentETag(data)
	}
	return document{data: data, ctype: ctype, etag: etag, cacheKey: "s\x00" + key + "\x00" + etag}
}

// contentETag is a strong ETag derived from the bytes.
func contentETag(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// storageETag returns the backend's ETag, quoted, or one derived from the
// modification time and size ("<mtime-ms hex>-<size hex>", as the
// reference's disk server does), or "".
func storageETag(info storage.Info) string {
	if t := strings.TrimSpace(info.ETag); t != "" {
		if strings.HasSuffix(t, `"`) && (strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `W/"`)) && len(t) >= 2 {
			return t
		}
		return strconv.Quote(strings.Trim(t, `"`))
	}
	if !info.ModTime.IsZero() && info.Size >= 0 {
		return fmt.Sprintf(`"%x-%x"`, info.ModTime.UnixMilli(), info.Size)
	}
	return ""
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

// setCacheHeaders sets Cache-Control (private when the content needed a
// token) and Vary.
func setCacheHeaders(hdr http.Header, maxAge time.Duration, immutable, private bool) {
	// Shared values (len == cap, so an Add elsewhere copies them): the
	// hot path allocates nothing here.
	hdr[echo.HeaderCacheControl] = cacheControlValue(maxAge, immutable, private)
	if _, ok := hdr[headerVary]; ok {
		hdr.Add(headerVary, echo.HeaderAcceptEncoding)
		if private {
			hdr.Add(headerVary, varyToken)
		}
		return
	}
	if private {
		hdr[headerVary] = varyPrivate
	} else {
		hdr[headerVary] = varyPublic
	}
}

var (
	varyPublic  = []string{echo.HeaderAcceptEncoding}
	varyPrivate = []string{echo.HeaderAcceptEncoding, varyToken}
)

type cacheControlKey struct {
	maxAge             time.Duration
	immutable, private bool
}

// cacheControlValues memoises cacheHeader: a handful of tiers give a
// handful of values.
var (
	cacheControlMu     sync.RWMutex
	cacheControlValues = map[cacheControlKey][]string{}
)

func cacheControlValue(maxAge time.Duration, immutable, private bool) []string {
	k := cacheControlKey{maxAge, immutable, private}
	cacheControlMu.RLock()
	v, ok := cacheControlValues[k]
	cacheControlMu.RUnlock()
	if ok {
		return v
	}
	v = []string{cacheHeader(maxAge, immutable, private)}
	cacheControlMu.Lock()
	if len(cacheControlValues) < 64 {
		cacheControlValues[k] = v
	}
	cacheControlMu.Unlock()
	return v
}

// sendDocument writes doc, compressed when the client accepts it and the
// body is big enough, answering a matching If-None-Match with 304. The
// caller has set the cache headers.
func (h *Handler) sendDocument(c echo.Context, doc document) error {
	req, resp := c.Request(), c.Response()
	hdr := resp.Header()
	hdr.Set(echo.HeaderContentType, doc.ctype)
	enc := encIdentity
	if len(doc.data) >= minCompressSize && compressible(doc.ctype) {
		enc = negotiateEncoding(req.Header.Get(echo.HeaderAcceptEncoding))
	}
	etag := encodedETag(doc.etag, enc)
	if etag != "" {
		hdr.Set(headerETag, etag)
	}
	if etagMatches(req.Header.Get(headerIfNoneMatch), etag) {
		return notModified(c)
	}
	if enc == encIdentity && doc.reprDigest != "" {
		hdr.Set(headerReprDigest, doc.reprDigest)
	}
	body := doc.data
	if enc != encIdentity {
		var err error
		if body, err = h.encoded(doc.cacheKey, enc, doc.data); err != nil {
			return internalError(err)
		}
		hdr.Set(echo.HeaderContentEncoding, enc)
	}
	return writeBody(c, body)
}

// encoded returns data compressed with enc, from the cache when key is set
// and the result was computed before.
func (h *Handler) encoded(key, enc string, data []byte) ([]byte, error) {
	if key == "" || h.cache == nil {
		return compress(enc, data)
	}
	return h.encodedKey(enc+"\x00"+key, enc, data)
}

// encodedKey is encoded with the full byte-cache key ("<enc>\x00<key>").
func (h *Handler) encodedKey(key, enc string, data []byte) ([]byte, error) {
	if b, ok := h.cache.get(key); ok {
		return b, nil
	}
	// Concurrent first requests for the same content share one
	// compression instead of each doing it.
	v, err, _ := h.compressing.Do(key, func() (any, error) {
		if b, ok := h.cache.get(key); ok {
			return b, nil
		}
		b, err := compress(enc, data)
		if err == nil {
			h.cache.add(key, b)
		}
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func notModified(c echo.Context) error {
	hdr := c.Response().Header()
	hdr.Del(echo.HeaderContentType)
	hdr.Del(echo.HeaderContentLength)
	hdr.Del(echo.HeaderContentEncoding)
	c.Response().WriteHeader(http.StatusNotModified)
	return nil
}

// writeBody writes a 200 with body, or only the headers for HEAD.
func writeBody(c echo.Context, body []byte) error {
	return writeBodyLen(c, body, nil)
}

// writeBodyLen is writeBody with the Content-Length value given (nil:
// computed).
func writeBodyLen(c echo.Context, body []byte, length []string) error {
	resp := c.Response()
	if length == nil {
		length = []string{strconv.Itoa(len(body))}
	}
	resp.Header()[echo.HeaderContentLength] = length
	resp.WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	_, err := resp.Write(body)
	return err
}

// sendStored serves the object at key (a registry file of a committed
// version), compressing it when the client accepts it and it is a
// compressible type of moderate size. Files up to [maxCachedFile] are read
// whole once and then served from memory with their encodings (see
// [readCache]); larger ones are streamed from storage. Plain bodies from a
// seekable reader go through [http.ServeContent] (Range, conditional
// requests). The caller has set the cache headers.
//
// The Repr-Digest of the identity representation, from the digest index
// of the version (whose registry.json is manifest), is sent on responses
// without a content coding.
func (h *Handler) sendStored(c echo.Context, res resource, manifest storage.Info, notFoundMsg string) error {
	key := res.key("")
	if o := h.rcache.object(key); o != nil && !o.statOnly {
		if data, ok := h.cache.get(o.keys[0]); ok {
			return h.sendMemory(c, o, data)
		}
	}
	req, resp := c.Request(), c.Response()
	gen := h.rcache.gen.Load()
	rc, info, err := h.store.Get(req.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return newAPIError(wire.CodeNotFound, notFoundMsg)
	}
	if err != nil {
		return internalError(err)
	}
	defer rc.Close()
	reprDigest := h.reprDigest(req.Context(), res, res.version, manifest, res.file)
	base := storageETag(info)
	if h.cache != nil && base != "" && info.Size >= 0 && info.Size <= h.maxCachedFile() {
		data, err := io.ReadAll(io.LimitReader(rc, info.Size+1))
		if err != nil {
			return internalError(fmt.Errorf("reading %s: %w", key, err))
		}
		if int64(len(data)) == info.Size {
			_, seekable := rc.(io.ReadSeeker)
			ctype := typeByName(key)
			if ctype == "" {
				ctype = http.DetectContentType(data)
			}
			o := newObjectState(key, base, ctype, data, info, false)
			o.seekable = seekable
			if reprDigest != "" {
				o.reprDigest = []string{reprDigest}
			}
			h.cache.add(o.keys[0], data)
			h.rcache.rememberObject(gen, key, o)
			return h.sendMemory(c, o, data)
		}
		// The object changed size while read: serve what was read, once.
		rc = io.NopCloser(bytes.NewReader(data))
	}
	hdr := resp.Header()
	ctype := typeByName(key)
	var r io.Reader = rc
	if ctype == "" {
		if ctype, r, err = sniff(rc); err != nil {
			return internalError(err)
		}
	}
	setFileHeaders(hdr, ctype)
	enc := encIdentity
	if compressible(ctype) && info.Size >= minCompressSize && info.Size <= maxCompressSize {
		enc = negotiateEncoding(req.Header.Get(echo.HeaderAcceptEncoding))
	}
	etag := encodedETag(base, enc)
	if etag != "" {
		hdr.Set(headerETag, etag)
	}
	if enc != encIdentity {
		if etagMatches(req.Header.Get(headerIfNoneMatch), etag) {
			return notModified(c)
		}
		cacheKey := ""
		if base != "" {
			cacheKey = "s\x00" + key + "\x00" + base
			if b, ok := h.cache.get(enc + "\x00" + cacheKey); ok {
				hdr.Set(echo.HeaderContentEncoding, enc)
				return writeBody(c, b)
			}
		}
		data, err := io.ReadAll(io.LimitReader(r, maxCompressSize+1))
		if err != nil {
			return internalError(fmt.Errorf("reading %s: %w", key, err))
		}
		b, err := h.encoded(cacheKey, enc, data)
		if err != nil {
			return internalError(err)
		}
		hdr.Set(echo.HeaderContentEncoding, enc)
		return writeBody(c, b)
	}
	if reprDigest != "" {
		hdr.Set(headerReprDigest, reprDigest)
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		// ServeContent answers If-None-Match from the ETag header set
		// above, HEAD, and Range.
		http.ServeContent(resp, req, "", info.ModTime, rs)
		return nil
	}
	if etagMatches(req.Header.Get(headerIfNoneMatch), etag) {
		return notModified(c)
	}
	if info.Size >= 0 {
		hdr.Set(echo.HeaderContentLength, strconv.FormatInt(info.Size, 10))
	}
	resp.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(resp, r); err != nil {
		// The status is sent; the client most likely went away.
		h.log.Debug("streaming file", zap.Error(err))
	}
	return nil
}

// maxCachedFile is the largest file kept in memory: an eighth of the byte
// cache, at most maxCompressSize.
func (h *Handler) maxCachedFile() int64 {
	return min(h.cache.max/8-entryOverhead-1024, maxCompressSize)
}

// sendMemory answers for the object at key (a file, or a manifest when
// o.document is set) from its bytes in memory, with the same headers,
// encodings and conditional handling as a read from storage.
func (h *Handler) sendMemory(c echo.Context, o *objectState, data []byte) error {
	req, resp := c.Request(), c.Response()
	hdr := resp.Header()
	hdr[echo.HeaderContentType] = o.ctypeHdr
	if !o.document {
		hdr[headerNoSniff] = noSniff
		hdr[headerCSP] = sandboxCSP
	}
	enc, ei := encIdentity, 0
	if o.compressible {
		enc = negotiateEncoding(req.Header.Get(echo.HeaderAcceptEncoding))
		ei = encIndex(enc)
	}
	hdr["Etag"] = o.etags[ei] // canonical form of headerETag
	if enc != encIdentity {
		if etagMatches(req.Header.Get(headerIfNoneMatch), o.etags[ei][0]) {
			return notModified(c)
		}
		b, err := h.encodedKey(o.keys[ei], enc, data)
		if err != nil {
			return internalError(err)
		}
		hdr[echo.HeaderContentEncoding] = encodingValues[ei]
		return writeBody(c, b)
	}
	if o.document {
		// As sendDocument: a 304 carries no Repr-Digest.
		if etagMatches(req.Header.Get(headerIfNoneMatch), o.etags[0][0]) {
			return notModified(c)
		}
		if o.reprDigest != nil {
			hdr[headerReprDigest] = o.reprDigest
		}
		return writeBodyLen(c, data, o.lengthHdr)
	}
	// As sendStored: any identity answer carries it.
	if o.reprDigest != nil {
		hdr[headerReprDigest] = o.reprDigest
	}
	if !o.seekable {
		if etagMatches(req.Header.Get(headerIfNoneMatch), o.etags[0][0]) {
			return notModified(c)
		}
		return writeBodyLen(c, data, o.lengthHdr)
	}
	if conditionalOrRange(req.Header) {
		http.ServeContent(resp, req, "", o.modTime, bytes.NewReader(data))
		return nil
	}
	// What http.ServeContent sends for a plain GET or HEAD.
	if o.lastModified != nil {
		hdr[headerLastModified] = o.lastModified
	}
	hdr[headerAcceptRanges] = acceptRangesBytes
	return writeBodyLen(c, data, o.lengthHdr)
}

// Header names and shared values of file responses.
const (
	headerNoSniff      = "X-Content-Type-Options"
	headerCSP          = "Content-Security-Policy"
	headerLastModified = "Last-Modified"
	headerAcceptRanges = "Accept-Ranges"
)

var (
	noSniff           = []string{"nosniff"}
	sandboxCSP        = []string{"default-src 'none'; sandbox"}
	acceptRangesBytes = []string{"bytes"}
	// encodingValues are Content-Encoding values by encIndex.
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

// setFileHeaders sets the headers every file response carries.
func setFileHeaders(hdr http.Header, ctype string) {
	hdr.Set(echo.HeaderContentType, ctype)
	hdr[headerNoSniff] = noSniff
	hdr[headerCSP] = sandboxCSP
}

// sniff detects the media type of content with no known extension from
// its first 512 bytes, returning a reader that still yields everything
// (the same seekable reader, rewound, when possible).
func sniff(rc io.Reader) (string, io.Reader, error) {
	var head [512]byte
	n, err := io.ReadFull(rc, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", nil, err
	}
	ctype := http.DetectContentType(head[:n])
	if rs, ok := rc.(io.ReadSeeker); ok {
		if _, err := rs.Seek(0, io.SeekStart); err == nil {
			return ctype, rs, nil
		}
	}
	return ctype, io.MultiReader(strings.NewReader(string(head[:n])), rc), nil
}
