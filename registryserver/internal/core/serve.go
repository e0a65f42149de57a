package core

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

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// MaxDocumentSize bounds the JSON documents (manifests, versions lists,
// presets) the handler reads into memory.
const MaxDocumentSize = 8 << 20

const (
	headerVary = "Vary"
	varyToken  = "Authorization, X-Registry-Token"
)

// ErrTooLarge is returned when a stored document exceeds maxDocumentSize.
var ErrTooLarge = errors.New("stored document is too large")

// TooLargeError is a stored document over the size the handler reads or
// sends; it is [errTooLarge], and the wire's 413 PAYLOAD_TOO_LARGE.
type TooLargeError struct {
	Key   string
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %v (over %d bytes)", e.Key, ErrTooLarge, e.Limit)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ReadParsed reads the document at key (readDocument) and parses it. ok is
// false when there is no such document; one that does not parse is an
// error naming key.
func ReadParsed[T any](ctx context.Context, h *Core, key string, parse func([]byte) (T, error)) (v T, ok bool, err error) {
	data, _, err := h.ReadDocument(ctx, key)
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

// ReadDocument reads a whole, bounded object from storage.
func (h *Core) ReadDocument(ctx context.Context, key string) ([]byte, storage.Info, error) {
	return ReadAll(ctx, h.Store, key)
}

// ReadAll is [Handler.readDocument] from st.
func ReadAll(ctx context.Context, st storage.Storage, key string) ([]byte, storage.Info, error) {
	rc, info, err := st.Get(ctx, key)
	if err != nil {
		return nil, storage.Info{}, err
	}
	defer rc.Close()
	if info.Size > MaxDocumentSize {
		return nil, storage.Info{}, &TooLargeError{Key: key, Limit: MaxDocumentSize}
	}
	var buf bytes.Buffer
	if info.Size > 0 {
		buf.Grow(int(info.Size) + bytes.MinRead)
	}
	_, err = buf.ReadFrom(io.LimitReader(rc, MaxDocumentSize+1))
	data := buf.Bytes()
	if err != nil {
		return nil, storage.Info{}, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(data) > MaxDocumentSize {
		return nil, storage.Info{}, &TooLargeError{Key: key, Limit: MaxDocumentSize}
	}
	return data, info, nil
}

// Document is an in-memory response body.
type Document struct {
	Data  []byte
	CType string
	// ETag is the strong validator of the identity representation,
	// quoted; "" sends none.
	ETag string
	// CacheKey identifies data exactly, for the compression cache; ""
	// compresses on every request.
	CacheKey string
	// reprDigest is the Repr-Digest header value of the identity
	// representation (sent only when no content coding is applied); ""
	// sends none.
	reprDigest string
}

// JSONDocument encodes v as a JSON document whose ETag is a content hash.
func JSONDocument(v any) (Document, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Document{}, err
	}
	etag := ContentETag(data)
	return Document{Data: data, CType: echo.MIMEApplicationJSON, ETag: etag, CacheKey: "h\x00" + etag}, nil
}

// StoredDocument wraps bytes read from storage under key.
func StoredDocument(key string, data []byte, info storage.Info, ctype string) Document {
	etag := storageETag(info)
	if etag == "" {
		etag = ContentETag(data)
	}
	return Document{Data: data, CType: ctype, ETag: etag, CacheKey: "s\x00" + key + "\x00" + etag}
}

// ContentETag is a strong ETag derived from the bytes.
func ContentETag(data []byte) string {
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

// SetCacheHeaders sets Cache-Control (private when the content needed a
// token) and Vary.
func SetCacheHeaders(hdr http.Header, maxAge time.Duration, immutable, private bool) {
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

// SendDocument answers with doc (see [Handler.writeRepresentation]).
// The caller has set the cache headers.
func (h *Core) SendDocument(c echo.Context, doc Document) error {
	rep := newRepresentation(doc.CType, doc.ETag, doc.CacheKey, int64(len(doc.Data)), false)
	rep.setReprDigest(doc.reprDigest)
	return h.writeRepresentation(c.Response(), c.Request(), rep, doc.Data, nil)
}

// SendStored serves the object at key (a registry file of a committed
// version). Files up to [maxCachedFile] are read whole once and then
// served from memory with their encodings (see [readCache]); larger ones
// are streamed from storage. The caller has set the cache headers.
//
// The Repr-Digest of the identity representation, from the digest index
// of the version (whose registry.json is manifest), is sent on responses
// without a content coding.
func (h *Core) SendStored(c echo.Context, res Resource, manifest storage.Info, notFoundMsg string) error {
	key := res.key("")
	if o := h.RCache.object(key); o != nil && !o.statOnly {
		if data, ok := h.Cache.get(o.rep.keys[0]); ok {
			return h.writeRepresentation(c.Response(), c.Request(), o.rep, data, nil)
		}
	}
	req := c.Request()
	gen := h.RCache.gen.Load()
	rc, info, err := h.Store.Get(req.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return NewAPIError(wire.CodeNotFound, notFoundMsg)
	}
	if err != nil {
		return InternalError(err)
	}
	defer rc.Close()
	reprDigest := h.reprDigest(req.Context(), res, res.Version, manifest, res.File)
	base := storageETag(info)
	if h.Cache != nil && base != "" && info.Size >= 0 && info.Size <= h.maxCachedFile() {
		data, err := io.ReadAll(io.LimitReader(rc, info.Size+1))
		if err != nil {
			return InternalError(fmt.Errorf("reading %s: %w", key, err))
		}
		if int64(len(data)) == info.Size {
			_, seekable := rc.(io.ReadSeeker)
			ctype := typeByName(key)
			if ctype == "" {
				ctype = http.DetectContentType(data)
			}
			o := newObjectState(key, base, ctype, data, info, true)
			o.rep.seekable = seekable
			o.rep.setReprDigest(reprDigest)
			h.Cache.add(o.rep.keys[0], data)
			h.RCache.rememberObject(gen, key, o)
			return h.writeRepresentation(c.Response(), req, o.rep, data, nil)
		}
		// The object changed size while read: serve what was read, once.
		rc = io.NopCloser(bytes.NewReader(data))
		info.Size = int64(len(data))
	}
	ctype := typeByName(key)
	var r io.Reader = rc
	if ctype == "" {
		if ctype, r, err = sniff(rc); err != nil {
			return InternalError(err)
		}
	}
	cacheBase := ""
	if base != "" {
		cacheBase = "s\x00" + key + "\x00" + base
	}
	rep := newRepresentation(ctype, base, cacheBase, info.Size, true)
	_, rep.seekable = r.(io.ReadSeeker)
	rep.setModTime(info.ModTime)
	rep.setReprDigest(reprDigest)
	return h.writeRepresentation(c.Response(), req, rep, nil, r)
}

// maxCachedFile is the largest file kept in memory: an eighth of the byte
// cache, at most maxCompressSize.
func (h *Core) maxCachedFile() int64 {
	return min(h.Cache.max/8-entryOverhead-1024, maxCompressSize)
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

// header renders a Cache-Control value for max-age d. immutable adds the
// "immutable" directive; private replaces "public".
func cacheHeader(d time.Duration, immutable, private bool) string {
	if d == 0 {
		if private {
			return "private, no-cache"
		}
		return "no-cache"
	}
	var b strings.Builder
	if private {
		b.WriteString("private, max-age=")
	} else {
		b.WriteString("public, max-age=")
	}
	b.WriteString(strconv.FormatInt(int64(d/time.Second), 10))
	if immutable {
		b.WriteString(", immutable")
	}
	return b.String()
}
