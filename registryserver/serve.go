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
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

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
	hdr.Set(echo.HeaderCacheControl, cacheHeader(maxAge, immutable, private))
	hdr.Add(headerVary, echo.HeaderAcceptEncoding)
	if private {
		hdr.Add(headerVary, varyToken)
	}
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
	key = enc + "\x00" + key
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
	resp := c.Response()
	resp.Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	resp.WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	_, err := resp.Write(body)
	return err
}

// sendStored streams the object at key (a registry file), compressing it
// when the client accepts it and it is a compressible type of moderate
// size. Compressed bodies are cached by key and ETag. Plain bodies from a
// seekable reader go through [http.ServeContent] (Range, conditional
// requests). The caller has set the cache headers.
//
// reprDigest, when not "", is the Repr-Digest of the identity
// representation; it is sent only on responses without a content coding.
func (h *Handler) sendStored(c echo.Context, key string, notFoundMsg string, reprDigest string) error {
	req, resp := c.Request(), c.Response()
	if done, err := h.sendCachedEncoding(c, key); done || err != nil {
		return err
	}
	rc, info, err := h.store.Get(req.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return newAPIError(http.StatusNotFound, codeNotFound, notFoundMsg)
	}
	if err != nil {
		return internalError(err)
	}
	defer rc.Close()
	hdr := resp.Header()
	ctype := typeByName(key)
	var r io.Reader = rc
	if ctype == "" {
		if ctype, r, err = sniff(rc); err != nil {
			return internalError(err)
		}
	}
	setFileHeaders(hdr, ctype)
	base := storageETag(info)
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

// setFileHeaders sets the headers every file response carries.
func setFileHeaders(hdr http.Header, ctype string) {
	hdr.Set(echo.HeaderContentType, ctype)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
}

// sendCachedEncoding answers a request for a compressible file from the
// compression cache (or with a 304) using only the object's metadata, so
// the hot path does not open the file. It reports done = false when the
// request needs the content.
func (h *Handler) sendCachedEncoding(c echo.Context, key string) (done bool, err error) {
	req := c.Request()
	ctype := typeByName(key)
	if h.cache == nil || ctype == "" || !compressible(ctype) {
		return false, nil
	}
	enc := negotiateEncoding(req.Header.Get(echo.HeaderAcceptEncoding))
	if enc == encIdentity {
		return false, nil
	}
	info, err := h.store.Stat(req.Context(), key)
	if err != nil || info.Size < minCompressSize || info.Size > maxCompressSize {
		return false, nil // Get reports errors and serves the body plain
	}
	base := storageETag(info)
	if base == "" {
		return false, nil
	}
	etag := encodedETag(base, enc)
	inm := etagMatches(req.Header.Get(headerIfNoneMatch), etag)
	b, ok := h.cache.get(enc + "\x00s\x00" + key + "\x00" + base)
	if !ok && !inm {
		return false, nil
	}
	hdr := c.Response().Header()
	setFileHeaders(hdr, ctype)
	hdr.Set(headerETag, etag)
	if inm {
		return true, notModified(c)
	}
	hdr.Set(echo.HeaderContentEncoding, enc)
	return true, writeBody(c, b)
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
