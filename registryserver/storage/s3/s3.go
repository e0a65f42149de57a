package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registryserver/storage"
)

// Config says which bucket to use and how to reach it.
type Config struct {
	// Endpoint is the S3 API address: "host[:port]" or a URL such as
	// "https://<account>.r2.cloudflarestorage.com" or "http://127.0.0.1:7070".
	// A URL's scheme decides TLS (and must agree with Insecure). Empty means
	// AWS S3 ("s3.amazonaws.com").
	Endpoint string
	// Bucket is the bucket's name; it must exist. Required.
	Bucket string
	// Region is the bucket's region, e.g. "us-east-1", or "auto" for R2.
	// Empty lets the client discover it, which costs a request.
	Region string
	// AccessKeyID and SecretAccessKey are static credentials. When both are
	// empty, credentials come from the environment (AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY, then MINIO_ROOT_USER and MINIO_ROOT_PASSWORD),
	// ~/.aws/credentials, or the instance's IAM role, in that order.
	AccessKeyID     string
	SecretAccessKey string
	// SessionToken goes with temporary static credentials. Optional.
	SessionToken string
	// Insecure talks plain HTTP instead of HTTPS, for a local test server.
	// The default (false) is HTTPS.
	Insecure bool
	// PathStyle always addresses the bucket as a path ("host/bucket/key")
	// instead of a host name ("bucket.host/key"). The default (false) lets
	// minio-go choose by endpoint: virtual-host style for AWS, Google and
	// Aliyun, path style for everything else (R2, MinIO, versitygw).
	PathStyle bool
	// Prefix is prepended to every key, so several stores (or a store and
	// other data) can share a bucket: "jig/" keeps keys under "jig/". Empty
	// means the bucket's top level. A missing trailing "/" is added.
	Prefix string
	// Transport is the HTTP transport. Nil means a transport with minio-go's
	// timeouts (30 s dial, 1 min response headers) and up to 64 idle
	// connections to the endpoint.
	Transport http.RoundTripper
	// ConditionalWrites says how [Storage.PutIf] makes its check atomic. The
	// default, [ConditionalAuto], sends If-None-Match / If-Match with the PUT
	// and, on the first PutIf, probes once that the server honours them;
	// see [ConditionalMode].
	ConditionalWrites ConditionalMode
	// Lock is required with [ConditionalLock]: it must give mutual exclusion
	// for key across every process that writes the bucket (a Redis lock, for
	// example) and return a function that releases it.
	Lock func(ctx context.Context, key string) (unlock func(), err error)
}

// ConditionalMode selects how [Storage.PutIf] is made atomic.
type ConditionalMode int

const (
	// ConditionalAuto uses the server's conditional writes (If-None-Match: *
	// to create, If-Match: <etag> to update) after checking once, with a
	// probe object under the prefix's ".jig/" folder, that the server
	// really refuses a conflicting write. A server that ignores the headers
	// would silently overwrite; then PutIf fails with an error wrapping
	// [errors.ErrUnsupported] instead, and Config.Lock (if set) is used.
	ConditionalAuto ConditionalMode = iota
	// ConditionalHeaders trusts the server's conditional writes without the
	// probe (AWS S3, Cloudflare R2, MinIO and versitygw 1.8+ honour them).
	ConditionalHeaders
	// ConditionalLock checks the ETag and writes while holding Config.Lock,
	// for servers without conditional writes. Every writer must use the
	// same lock.
	ConditionalLock
)

// maxSinglePut is the largest object sent in one PUT (the S3 limit).
const maxSinglePut = 5 << 30

// spoolMemory is how much of an object of unknown size is kept in memory
// before the rest goes to a temporary file.
const spoolMemory = 8 << 20

// Storage is a [storage.Storage] on an S3 bucket. Create it with [New]; it
// is safe for concurrent use.
type Storage struct {
	client *minio.Client
	core   minio.Core
	bucket string
	prefix string
	mode   ConditionalMode
	lock   func(ctx context.Context, key string) (func(), error)

	probeMu  sync.Mutex
	probed   bool
	probeErr error
	endpoint string
}

var (
	_ storage.Storage           = (*Storage)(nil)
	_ storage.ConditionalPutter = (*Storage)(nil)
	_ storage.DirLister         = (*Storage)(nil)
	_ storage.Pinger            = (*Storage)(nil)
)

// New checks cfg, connects and checks that the bucket exists (one HEAD
// request, bounded by ctx).
func New(ctx context.Context, cfg Config) (*Storage, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket configured; set S3_BUCKET")
	}
	host, secure, err := parseEndpoint(cfg.Endpoint, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	prefix := cfg.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if prefix != "" && !storage.ValidPrefix(prefix) {
		return nil, fmt.Errorf("s3: key prefix %q: want slash-separated names without empty, \".\" or \"..\" parts", cfg.Prefix)
	}
	switch cfg.ConditionalWrites {
	case ConditionalAuto, ConditionalHeaders:
	case ConditionalLock:
		if cfg.Lock == nil {
			return nil, errors.New("s3: ConditionalLock needs Config.Lock")
		}
	default:
		return nil, fmt.Errorf("s3: unknown ConditionalWrites mode %d", cfg.ConditionalWrites)
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("s3: set both the access key ID and the secret access key, or neither (to use the environment or an IAM role)")
	}
	var creds *credentials.Credentials
	if cfg.AccessKeyID != "" {
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.EnvMinio{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		})
	}
	transport := cfg.Transport
	if transport == nil {
		tr, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, fmt.Errorf("s3: %w", err)
		}
		tr.MaxIdleConnsPerHost = 64
		transport = tr
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: endpoint %q: %w", host, err)
	}
	s := &Storage{
		client:   client,
		core:     minio.Core{Client: client},
		bucket:   cfg.Bucket,
		prefix:   prefix,
		mode:     cfg.ConditionalWrites,
		lock:     cfg.Lock,
		endpoint: client.EndpointURL().String(),
	}
	if err := s.Ping(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// parseEndpoint turns Config.Endpoint into minio's host and TLS flag.
func parseEndpoint(endpoint string, insecure bool) (host string, secure bool, err error) {
	if endpoint == "" {
		return "s3.amazonaws.com", !insecure, nil
	}
	if !strings.Contains(endpoint, "://") {
		if strings.ContainsAny(endpoint, "/?#") {
			return "", false, fmt.Errorf("s3: endpoint %q: want host[:port] or a URL without a path", endpoint)
		}
		return endpoint, !insecure, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, errors.New("s3: endpoint is not a valid URL; want host[:port] or a URL such as https://s3.example.com")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Host == "" {
		return "", false, fmt.Errorf("s3: endpoint %q: want a URL with only a scheme and a host, such as https://s3.example.com", redact.URL(endpoint))
	}
	switch u.Scheme {
	case "https":
		if insecure {
			return "", false, fmt.Errorf("s3: endpoint %q is https but plain HTTP was asked for; drop one of them", redact.URL(endpoint))
		}
		return u.Host, true, nil
	case "http":
		return u.Host, false, nil
	}
	return "", false, fmt.Errorf("s3: endpoint %q: scheme must be http or https", redact.URL(endpoint))
}

// Bucket returns the bucket's name.
func (s *Storage) Bucket() string { return s.bucket }

// Prefix returns the key prefix, "" or ending in "/".
func (s *Storage) Prefix() string { return s.prefix }

func (s *Storage) object(key string) string { return s.prefix + key }

// quote makes an HTTP entity tag of an S3 ETag, which minio-go returns
// without quotes.
func quote(etag string) string {
	if strings.HasPrefix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}

func (s *Storage) info(key string, oi minio.ObjectInfo) storage.Info {
	return storage.Info{Key: key, Size: oi.Size, ModTime: oi.LastModified, ETag: quote(oi.ETag)}
}

// Get fetches key with one GET request; the Info comes from that
// response's headers, so it always describes the content being read.
func (s *Storage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	if err := s.checkKey(ctx, "get", key); err != nil {
		return nil, storage.Info{}, err
	}
	body, oi, _, err := s.core.GetObject(ctx, s.bucket, s.object(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, storage.Info{}, s.mapErr(ctx, "get", key, err)
	}
	return body, s.info(key, oi), nil
}

// Stat returns key's size, modification time and ETag with one HEAD
// request.
func (s *Storage) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := s.checkKey(ctx, "stat", key); err != nil {
		return storage.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, s.object(key), minio.StatObjectOptions{})
	if err != nil {
		return storage.Info{}, s.mapErr(ctx, "stat", key, err)
	}
	return s.info(key, oi), nil
}

// Put uploads r as key in a single PUT; the object appears whole or not at
// all. Content of unknown size (-1) is spooled first, in memory up to 8 MiB
// and in a temporary file beyond.
func (s *Storage) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.checkKey(ctx, "put", key); err != nil {
		return err
	}
	_, err := s.put(ctx, "put", key, r, size, minio.PutObjectOptions{})
	return err
}

func (s *Storage) put(ctx context.Context, op, key string, r io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error) {
	body, n, cleanup, err := spool(ctx, r, size)
	if err != nil {
		return minio.UploadInfo{}, s.mapErr(ctx, op, key, err)
	}
	defer cleanup()
	if n > maxSinglePut {
		return minio.UploadInfo{}, fmt.Errorf("s3: %s %q: %d bytes is more than one PUT takes (5 GiB)", op, key, n)
	}
	opts.DisableMultipart = true
	opts.ContentType = "application/octet-stream"
	ui, err := s.putObject(ctx, s.object(key), body, n, opts, rewinder(r, body, size))
	if err != nil {
		return minio.UploadInfo{}, s.mapErr(ctx, op, key, err)
	}
	return ui, nil
}

// folderRaceAttempts bounds how often a PUT that lost a posix gateway's
// folder race is sent.
const folderRaceAttempts = 5

// putObject is one PutObject, sent again (after rewind) while the server
// answers that it lost a folder race; rewind nil means body cannot be read
// again, so it is sent once.
func (s *Storage) putObject(ctx context.Context, name string, body io.Reader, n int64, opts minio.PutObjectOptions, rewind func() error) (minio.UploadInfo, error) {
	for attempt := 1; ; attempt++ {
		ui, err := s.client.PutObject(ctx, s.bucket, name, body, n, opts)
		if err == nil || attempt == folderRaceAttempts || !lostFolderRace(err) || rewind == nil || rewind() != nil {
			return ui, err
		}
		// Give the racing delete a moment to finish removing folders.
		select {
		case <-ctx.Done():
			return ui, err
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

// lostFolderRace reports whether err is a posix-backed gateway's answer to
// a PUT that lost a race with the removal of a folder. Such a gateway
// (versitygw) keeps an object as a file and removes a folder when its last
// object is deleted; a PUT into that folder at the same moment fails with
// 409 ExistingObjectIsDirectory though nothing of the PUT was stored and
// no object of that name exists. Publishing deletes claims next to the
// claims of other versions, so replicas hit it.
func lostFolderRace(err error) bool {
	var er minio.ErrorResponse
	return errors.As(err, &er) && er.StatusCode == http.StatusConflict && er.Code == "ExistingObjectIsDirectory"
}

// rewinder returns a function that makes body, which spool made of r and
// size, yield the same bytes again, or nil when r cannot be read twice.
func rewinder(r io.Reader, body io.Reader, size int64) func() error {
	if size < 0 {
		// spool buffered r into a bytes.Reader or a temporary file.
		if sk, ok := body.(io.Seeker); ok {
			return func() error { _, err := sk.Seek(0, io.SeekStart); return err }
		}
		return nil
	}
	sk, ok := r.(io.Seeker)
	ex, isExact := body.(*exactReader)
	if !ok || !isExact {
		return nil
	}
	start, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	return func() error {
		if _, err := sk.Seek(start, io.SeekStart); err != nil {
			return err
		}
		ex.left = size
		return nil
	}
}

// spool returns a reader of known length for r. With size >= 0 it checks
// the length while the upload reads; with -1 it buffers r first.
func spool(ctx context.Context, r io.Reader, size int64) (io.Reader, int64, func(), error) {
	src := storage.ContextReader(ctx, r)
	if size >= 0 {
		return &exactReader{r: src, left: size}, size, func() {}, nil
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(src, spoolMemory+1))
	if err != nil {
		return nil, 0, nil, err
	}
	if n <= spoolMemory {
		return bytes.NewReader(buf.Bytes()), n, func() {}, nil
	}
	f, err := os.CreateTemp("", "jig-s3-upload-*")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("spool upload of unknown size: %w", err)
	}
	cleanup := func() { f.Close(); os.Remove(f.Name()) }
	if _, err := f.Write(buf.Bytes()); err != nil {
		cleanup()
		return nil, 0, nil, fmt.Errorf("spool upload of unknown size: %w", err)
	}
	rest, err := io.Copy(f, io.LimitReader(src, maxSinglePut))
	if err != nil {
		cleanup()
		return nil, 0, nil, fmt.Errorf("spool upload of unknown size: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, 0, nil, err
	}
	return f, n + rest, cleanup, nil
}

// exactReader yields exactly left bytes of r and fails the upload when r
// is shorter or longer than declared.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, e.checkEnd()
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, fmt.Errorf("content ended %d bytes before the declared size: %w", e.left, io.ErrUnexpectedEOF)
	}
	if err != nil && err != io.EOF {
		return n, err
	}
	if e.left == 0 {
		// Check for excess now: the HTTP client stops reading once it has
		// the declared length.
		if err := e.checkEnd(); err != io.EOF {
			return n, err
		}
		return n, io.EOF
	}
	return n, nil
}

func (e *exactReader) checkEnd() error {
	var one [1]byte
	for {
		n, err := e.r.Read(one[:])
		if n > 0 {
			return errors.New("content is longer than the declared size")
		}
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return err
		}
	}
}

// PutIf uploads r as key only when key's current ETag equals ifMatch, or,
// with ifMatch "", when key does not exist; otherwise it returns
// [storage.ErrPrecondition]. How the check is made atomic is set by
// Config.ConditionalWrites.
func (s *Storage) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	const op = "conditional put"
	if err := s.checkKey(ctx, op, key); err != nil {
		return "", err
	}
	useLock := s.mode == ConditionalLock
	if s.mode == ConditionalAuto {
		if err := s.probe(ctx); err != nil {
			if s.lock == nil || !errors.Is(err, errors.ErrUnsupported) {
				return "", err
			}
			useLock = true
		}
	}
	if useLock {
		return s.putIfLocked(ctx, op, key, r, size, ifMatch)
	}
	var opts minio.PutObjectOptions
	if ifMatch == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(strings.Trim(ifMatch, `"`))
	}
	ui, err := s.put(ctx, op, key, r, size, opts)
	if err != nil {
		if ifMatch != "" && errors.Is(err, storage.ErrNotFound) {
			// Some servers answer If-Match on a missing key with 404.
			return "", fmt.Errorf("s3: %s %q: %w", op, key, storage.ErrPrecondition)
		}
		return "", err
	}
	return quote(ui.ETag), nil
}

// putIfLocked is PutIf for servers without conditional writes: compare and
// write under Config.Lock.
func (s *Storage) putIfLocked(ctx context.Context, op, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	unlock, err := s.lock(ctx, s.bucket+"/"+s.object(key))
	if err != nil {
		return "", fmt.Errorf("s3: %s %q: take lock: %w", op, key, err)
	}
	defer unlock()
	cur, err := s.Stat(ctx, key)
	exists := err == nil
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	if (ifMatch == "" && exists) || (ifMatch != "" && (!exists || cur.ETag != ifMatch)) {
		return "", fmt.Errorf("s3: %s %q: %w", op, key, storage.ErrPrecondition)
	}
	ui, err := s.put(ctx, op, key, r, size, minio.PutObjectOptions{})
	if err != nil {
		return "", err
	}
	return quote(ui.ETag), nil
}

// probe checks once per Storage that the server refuses conflicting
// conditional writes, using a throw-away object under ".jig/".
func (s *Storage) probe(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probed {
		return s.probeErr
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	name := s.prefix + ".jig/conditional-probe-" + hex.EncodeToString(rnd[:])
	defer s.client.RemoveObject(context.WithoutCancel(ctx), s.bucket, name, minio.RemoveObjectOptions{})
	put := func(opts minio.PutObjectOptions, body string) error {
		opts.DisableMultipart = true
		r := strings.NewReader(body)
		_, err := s.putObject(ctx, name, r, r.Size(), opts, func() error { _, err := r.Seek(0, io.SeekStart); return err })
		return err
	}
	refused := func(err error) bool {
		var er minio.ErrorResponse
		return errors.As(err, &er) && !lostFolderRace(err) &&
			(er.StatusCode == http.StatusPreconditionFailed || er.StatusCode == http.StatusConflict)
	}
	create := minio.PutObjectOptions{}
	create.SetMatchETagExcept("*")
	if err := put(create, "1"); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("s3: probe conditional writes: %w", ctx.Err())
		}
		return fmt.Errorf("s3: probe conditional writes on %s/%s: %w", s.endpoint, s.bucket, err)
	}
	err := put(create, "2")
	unsupported := err == nil
	if err != nil && !refused(err) {
		if ctx.Err() != nil {
			return fmt.Errorf("s3: probe conditional writes: %w", ctx.Err())
		}
		return fmt.Errorf("s3: probe conditional writes on %s/%s: %w", s.endpoint, s.bucket, err)
	}
	if !unsupported {
		update := minio.PutObjectOptions{}
		update.SetMatchETag("0123456789abcdef0123456789abcdef")
		err = put(update, "3")
		unsupported = err == nil
		if err != nil && !refused(err) {
			if ctx.Err() != nil {
				return fmt.Errorf("s3: probe conditional writes: %w", ctx.Err())
			}
			return fmt.Errorf("s3: probe conditional writes on %s/%s: %w", s.endpoint, s.bucket, err)
		}
	}
	s.probed = true
	if unsupported {
		s.probeErr = fmt.Errorf("s3: the server at %s ignores If-None-Match/If-Match on PUT, so publishing cannot be made atomic with it; "+
			"use a server with conditional writes or configure a lock (ConditionalLock): %w", s.endpoint, errors.ErrUnsupported)
	}
	return s.probeErr
}

// Delete removes key; a missing key is not an error.
func (s *Storage) Delete(ctx context.Context, key string) error {
	if err := s.checkKey(ctx, "delete", key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.object(key), minio.RemoveObjectOptions{}); err != nil {
		if err := s.mapErr(ctx, "delete", key, err); errors.Is(err, storage.ErrNotFound) {
			return nil
		} else {
			return err
		}
	}
	return nil
}

// List returns every key starting with prefix, sorted bytewise, paging
// through ListObjectsV2. Objects whose names are not valid keys (folder
// markers ending in "/", for example) are left out.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	if err := storage.CheckPrefix(ctx, "s3", prefix); err != nil {
		return nil, err
	}
	keys := []string{}
	for oi := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if oi.Err != nil {
			return nil, s.mapErr(ctx, "list", prefix, oi.Err)
		}
		key, ok := strings.CutPrefix(oi.Key, s.prefix)
		if !ok || !storage.ValidKey(key) || reserved(key) {
			continue
		}
		keys = append(keys, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3: list %q: %w", prefix, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// ListDir returns the immediate children of the folder prefix ("" or
// ending in "/") with one delimited listing: objects as keys, common
// prefixes ending in "/".
func (s *Storage) ListDir(ctx context.Context, prefix string) ([]string, error) {
	if err := storage.CheckFolder(ctx, "s3", prefix); err != nil {
		return nil, err
	}
	out := []string{}
	for oi := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix}) {
		if oi.Err != nil {
			return nil, s.mapErr(ctx, "list folder", prefix, oi.Err)
		}
		key, ok := strings.CutPrefix(oi.Key, s.prefix)
		if !ok || key == prefix || key == ".jig/" || !storage.ValidPrefix(key) {
			continue
		}
		out = append(out, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3: list folder %q: %w", prefix, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Ping checks with one HEAD request that the bucket exists and the
// credentials may use it.
func (s *Storage) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("s3: ping: %w", ctx.Err())
		}
		return fmt.Errorf("s3: bucket %q at %s: %w", s.bucket, s.endpoint, describe(err))
	}
	if !ok {
		return fmt.Errorf("s3: bucket %q does not exist at %s; create it or fix S3_BUCKET", s.bucket, s.endpoint)
	}
	return nil
}

// reserved reports whether key is under the ".jig/" folder the store
// keeps for itself (conditional-write probes).
func reserved(key string) bool { return strings.HasPrefix(key, ".jig/") }

// checkKey validates key for this store and checks ctx. The object name
// (the store's prefix and key) must fit S3's limit too.
func (s *Storage) checkKey(ctx context.Context, op, key string) error {
	switch {
	case !storage.ValidKey(key):
	case len(s.prefix)+len(key) > storage.MaxKeyLength:
		return fmt.Errorf("s3: %s %q: with the prefix %q the object name is longer than %d bytes: %w",
			op, key, s.prefix, storage.MaxKeyLength, storage.ErrInvalidKey)
	case reserved(key):
		return fmt.Errorf("s3: %s %q: the .jig folder is reserved: %w", op, key, storage.ErrInvalidKey)
	}
	return storage.CheckKey(ctx, "s3", op, key)
}

// mapErr turns minio errors into storage's sentinels. A cancelled context
// wins over whatever the client reported.
func (s *Storage) mapErr(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("s3: %s %q: %w", op, key, cerr)
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		switch {
		case er.StatusCode == http.StatusNotFound && er.Code != "NoSuchBucket":
			return fmt.Errorf("s3: %s %q: %w", op, key, storage.ErrNotFound)
		case er.StatusCode == http.StatusPreconditionFailed, er.StatusCode == http.StatusConflict && er.Code == "ConditionalRequestConflict":
			return fmt.Errorf("s3: %s %q: %w", op, key, storage.ErrPrecondition)
		}
	}
	return fmt.Errorf("s3: %s %q: %w", op, key, describe(err))
}

// describe adds advice to common S3 errors.
func describe(err error) error {
	var er minio.ErrorResponse
	if !errors.As(err, &er) {
		return err
	}
	switch er.StatusCode {
	case http.StatusForbidden:
		return fmt.Errorf("access denied; check S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY and the bucket policy: %w", err)
	case http.StatusMovedPermanently, http.StatusBadRequest:
		if er.Code == "AuthorizationHeaderMalformed" || er.Region != "" {
			return fmt.Errorf("wrong region? set S3_REGION to the bucket's region: %w", err)
		}
	}
	return err
}
