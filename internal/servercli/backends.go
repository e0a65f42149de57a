package servercli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// storageBackend is one value of --storage-backend/STORAGE_BACKEND: the
// backend it opens, how the flags that backend uses are checked, and the
// phrase --help shows for it. The flag's enum and help text are made from
// [storageBackends], so a backend is added in one place.
type storageBackend struct {
	name string // the flag's value
	kind string // the backend opened: "disk" or "s3"; an alias shares its backend's kind
	help string // what the value selects, shown by --help after the name
	// validate checks the settings the backend needs, before anything is
	// opened; its error names the flags and variables to set.
	validate func(c *StorageSettings) error
	// open opens the backend; the close function releases it.
	open func(ctx context.Context, c *StorageSettings, sc storageCache, reg prometheus.Registerer) (storage.Storage, func() error, error)
}

// storageBackends are the values of --storage-backend, the default first.
var storageBackends = []storageBackend{
	{name: "disk", kind: "disk", help: "files under --storage-root", validate: validateDisk, open: openDisk},
	{name: "local", kind: "disk", help: "the reference's name for disk", validate: validateDisk, open: openDisk},
	{name: "s3", kind: "s3", help: "an S3-compatible bucket, with a read cache of --storage-cache-mb", validate: validateS3, open: openS3},
	{name: "r2", kind: "s3", help: "s3 on Cloudflare R2: the endpoint from --r2-account-id, region auto", validate: validateS3, open: openS3},
}

// backendVars are the kong variables made from [storageBackends]: the
// enum of --storage-backend and the list its help shows.
func backendVars() map[string]string {
	names := make([]string, len(storageBackends))
	helps := make([]string, len(storageBackends))
	for i, b := range storageBackends {
		names[i] = b.name
		helps[i] = b.name + " (" + b.help + ")"
	}
	return map[string]string{
		"storage_backends":      strings.Join(names, ","),
		"storage_backends_help": strings.Join(helps, ", "),
		"storage_backend":       storageBackends[0].name,
	}
}

// storageBackend returns the table entry of c.StorageBackend; an empty
// value is the default. Kong's enum has refused any other value, but a CLI
// built in Go may hold one: it gets the default's entry.
func (c *StorageSettings) storageBackend() storageBackend {
	for _, b := range storageBackends {
		if b.name == c.StorageBackend {
			return b
		}
	}
	return storageBackends[0]
}

// backend returns the normalised storage backend: "disk" or "s3".
func (c *StorageSettings) backend() string { return c.storageBackend().kind }

// openStorage opens the configured backend (see [storageBackends]).
func openStorage(ctx context.Context, c *StorageSettings, sc storageCache, reg prometheus.Registerer) (storage.Storage, func() error, error) {
	return c.storageBackend().open(ctx, c, sc, reg)
}

// storageCache is the read cache in front of S3 (--storage-cache-mb and
// --storage-cache-ttl); mb 0 opens none.
type storageCache struct {
	mb  int
	ttl time.Duration
}

func validateDisk(c *StorageSettings) error {
	if strings.TrimSpace(c.StorageRoot) == "" {
		return errors.New("--storage-root/STORAGE_ROOT is empty; set it to a directory such as ./data")
	}
	return nil
}

func openDisk(_ context.Context, c *StorageSettings, _ storageCache, _ prometheus.Registerer) (storage.Storage, func() error, error) {
	st, err := disk.New(c.StorageRoot)
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}

func validateS3(c *StorageSettings) error {
	_, err := c.s3Config()
	return err
}

// openS3 opens the bucket, with the read cache sc in front of it (its
// metrics on reg) unless sc.mb is 0.
func openS3(ctx context.Context, c *StorageSettings, sc storageCache, reg prometheus.Registerer) (storage.Storage, func() error, error) {
	cfg, err := c.s3Config()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s3StartupTimeout)
	defer cancel()
	st, err := s3.New(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("STORAGE_BACKEND=%s: %w", c.StorageBackend, err)
	}
	noClose := func() error { return nil }
	if sc.mb == 0 {
		return st, noClose, nil
	}
	cached, err := cache.New(st, cache.WithMaxBytes(int64(sc.mb)<<20), cache.WithMutableTTL(sc.ttl),
		cache.WithRegisterer(reg))
	if err != nil {
		return nil, nil, err
	}
	return cached, noClose, nil
}

// s3StartupTimeout bounds the bucket check at startup.
const s3StartupTimeout = 30 * time.Second

// s3Settings returns the S3 endpoint and region with the reference's R2
// conventions applied: R2_ACCOUNT_ID gives the endpoint
// https://<account>.r2.cloudflarestorage.com and the region "auto" unless
// they are set explicitly; STORAGE_BACKEND=r2 also defaults the region to
// "auto".
func (c *StorageSettings) s3Settings() (endpoint, region string) {
	endpoint, region = c.S3Endpoint, c.S3Region
	if endpoint == "" && c.R2AccountID != "" {
		endpoint = "https://" + c.R2AccountID + ".r2.cloudflarestorage.com"
	}
	if region == "" && (c.R2AccountID != "" || c.StorageBackend == "r2") {
		region = "auto"
	}
	return endpoint, region
}

// s3Config turns the S3_* (and R2_*) settings into an [s3.Config], with an
// error naming every missing setting.
func (c *StorageSettings) s3Config() (s3.Config, error) {
	endpoint, region := c.s3Settings()
	var missing []string
	if c.S3Bucket == "" {
		missing = append(missing, "S3_BUCKET (or R2_BUCKET_NAME)")
	}
	if c.StorageBackend == "r2" && endpoint == "" {
		missing = append(missing, "R2_ACCOUNT_ID (or S3_ENDPOINT)")
	}
	switch {
	case c.S3AccessKeyID == "" && c.S3SecretAccessKey == "" && c.StorageBackend == "r2":
		missing = append(missing, "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY")
	case c.S3AccessKeyID == "" && c.S3SecretAccessKey != "":
		missing = append(missing, "S3_ACCESS_KEY_ID (or R2_ACCESS_KEY_ID)")
	case c.S3AccessKeyID != "" && c.S3SecretAccessKey == "":
		missing = append(missing, "S3_SECRET_ACCESS_KEY (or R2_SECRET_ACCESS_KEY)")
	}
	if len(missing) > 0 {
		return s3.Config{}, fmt.Errorf("STORAGE_BACKEND=%s needs %s; set them in the environment, .env or as flags (jig-server --help)",
			c.StorageBackend, strings.Join(missing, ", "))
	}
	return s3.Config{
		Endpoint:        endpoint,
		Bucket:          c.S3Bucket,
		Region:          region,
		AccessKeyID:     c.S3AccessKeyID,
		SecretAccessKey: c.S3SecretAccessKey,
		Prefix:          c.S3Prefix,
	}, nil
}
