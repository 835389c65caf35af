package fileio

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Google Cloud Storage property names, as Iceberg's Java GCSFileIO and
// PyIceberg name them.
const (
	GCSProjectID = "gcs.project-id"
	// GCSServiceHost is the endpoint (scheme://host[:port]), for emulators
	// and private endpoints; GCSEndpoint is PyIceberg's older name for it.
	GCSServiceHost = "gcs.service.host"
	GCSEndpoint    = "gcs.endpoint"
	// GCSOAuth2Token is a static access token; "anon" (PyIceberg's gcsfs
	// spelling) means no authentication, as GCSNoAuth=true does.
	GCSOAuth2Token          = "gcs.oauth2.token"
	GCSOAuth2TokenExpiresAt = "gcs.oauth2.token-expires-at" // milliseconds since the epoch
	GCSNoAuth               = "gcs.no-auth"
	GCSUserProject          = "gcs.user-project"
	GCSRequesterPays        = "gcs.requester-pays" // PyIceberg: bill gcs.project-id
	GCSWriteChunkSize       = "gcs.channel.write.chunk-size-bytes"
	// icectl's own: deletions in flight, and objects a listing page (for tests).
	GCSDeleteConcurrency = "gcs.delete.concurrency"
	GCSListPageSize      = "gcs.list-page-size"
)

const (
	defaultGCSChunk   = 16 << 20
	defaultGCSDeletes = 16
)

// GCSConfig is the parsed GCS configuration. Its String method redacts the
// token, so it is safe to print.
type GCSConfig struct {
	ProjectID      string
	Endpoint       string // "" for Google's, else scheme://host[:port]
	Token          string
	TokenExpiresAt time.Time // zero when unknown
	NoAuth         bool
	UserProject    string // billed for requester-pays buckets
	ChunkSize      int
	Deleters       int
	MaxAttempts    int
	MinWait        time.Duration
	MaxWait        time.Duration
	ListPageSize   int
}

// ParseGCSConfig reads the GCS configuration from Iceberg properties and
// getenv (STORAGE_EMULATOR_HOST, as Google's clients read it, when no
// endpoint property is given). Malformed values are errors.
func ParseGCSConfig(props map[string]string, getenv func(string) string) (GCSConfig, error) {
	c := GCSConfig{
		ProjectID:   props[GCSProjectID],
		Endpoint:    firstNonEmpty(props[GCSServiceHost], props[GCSEndpoint]),
		Token:       props[GCSOAuth2Token],
		UserProject: props[GCSUserProject],
		MinWait:     defaultMinWait,
		MaxWait:     defaultMaxWait,
	}
	if c.Endpoint == "" {
		if h := getenv("STORAGE_EMULATOR_HOST"); h != "" {
			c.Endpoint, c.NoAuth = h, true
		}
	}
	if c.Endpoint != "" {
		if !strings.Contains(c.Endpoint, "://") {
			c.Endpoint = "http://" + c.Endpoint // STORAGE_EMULATOR_HOST is host:port
		}
		// iceberg-go's form names the JSON API's path too.
		c.Endpoint = strings.TrimSuffix(strings.TrimRight(c.Endpoint, "/"), "/storage/v1")
	}
	noAuth, err := boolProp(props, GCSNoAuth, c.NoAuth)
	if err != nil {
		return GCSConfig{}, gcsConfigErr(err)
	}
	c.NoAuth = noAuth
	if c.Token == "anon" {
		c.Token, c.NoAuth = "", true
	}
	if v := props[GCSOAuth2TokenExpiresAt]; v != "" {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return GCSConfig{}, fmt.Errorf("gcs config: %s=%q is not milliseconds since the epoch", GCSOAuth2TokenExpiresAt, v)
		}
		c.TokenExpiresAt = time.UnixMilli(ms)
	}
	pays, err := boolProp(props, GCSRequesterPays, false)
	if err != nil {
		return GCSConfig{}, gcsConfigErr(err)
	}
	if pays && c.UserProject == "" {
		if c.ProjectID == "" {
			return GCSConfig{}, fmt.Errorf("gcs config: %s=true needs %s (the project billed)", GCSRequesterPays, GCSProjectID)
		}
		c.UserProject = c.ProjectID
	}
	if c.ChunkSize, err = intProp(props, GCSWriteChunkSize, defaultGCSChunk, 256<<10, 1<<30); err != nil {
		return GCSConfig{}, gcsConfigErr(err)
	}
	if c.ChunkSize%(256<<10) != 0 {
		return GCSConfig{}, fmt.Errorf("gcs config: %s=%d is not a multiple of 262144", GCSWriteChunkSize, c.ChunkSize)
	}
	if c.Deleters, err = intProp(props, GCSDeleteConcurrency, defaultGCSDeletes, 1, 256); err != nil {
		return GCSConfig{}, gcsConfigErr(err)
	}
	c.MaxAttempts = defaultNumRetries + 1
	if c.ListPageSize, err = intProp(props, GCSListPageSize, defaultListPage, 1, 1000); err != nil {
		return GCSConfig{}, gcsConfigErr(err)
	}
	return c, nil
}

// gcsConfigErr relabels an error of the shared property parsers.
func gcsConfigErr(err error) error {
	return fmt.Errorf("gcs config: %s", strings.TrimPrefix(err.Error(), "s3 config: "))
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// String describes the configuration with the token redacted.
func (c GCSConfig) String() string {
	token := "unset"
	if c.Token != "" {
		token = "redacted"
	}
	return fmt.Sprintf("GCSConfig{chunk-size=%d deleters=%d endpoint=%s max-attempts=%d no-auth=%t project-id=%s token=%s user-project=%s}",
		c.ChunkSize, c.Deleters, c.Endpoint, c.MaxAttempts, c.NoAuth, c.ProjectID, token, c.UserProject)
}

// GoString keeps %#v from printing the token.
func (c GCSConfig) GoString() string { return c.String() }
