package fileio

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/fileio/awsauth"
)

// S3 property names. The first group are Iceberg's own names (as used by the
// Java and Python implementations); s3.list-page-size is icectl's, for tests.
const (
	S3Endpoint        = "s3.endpoint"
	S3AccessKeyID     = "s3.access-key-id"
	S3SecretAccessKey = "s3.secret-access-key"
	S3SessionToken    = "s3.session-token"
	S3PathStyleAccess = "s3.path-style-access"
	ClientRegion      = "client.region"
	S3PartSize        = "s3.multipart.part-size-bytes"
	S3UploadThreads   = "s3.multipart.num-threads"
	S3DeleteBatchSize = "s3.delete.batch-size"
	S3RetryNumRetries = "s3.retry.num-retries"
	S3RetryMinWaitMS  = "s3.retry.min-wait-ms"
	S3RetryMaxWaitMS  = "s3.retry.max-wait-ms"
	S3ListPageSize    = "s3.list-page-size"
	// Profiles of the shared AWS config files, as PyIceberg names them:
	// s3.profile-name for S3 alone, client.profile-name for every AWS
	// client (S3 is icectl's only one); the first wins.
	S3ProfileName     = "s3.profile-name"
	ClientProfileName = "client.profile-name"
	// Static credentials for every AWS client, as PyIceberg names them:
	// S3 takes them when no s3.access-key-id is given, and the REST
	// catalog signs with them (SigV4).
	ClientAccessKeyID     = "client.access-key-id"
	ClientSecretAccessKey = "client.secret-access-key"
	ClientSessionToken    = "client.session-token"
)

// Limits and defaults of the S3 options.
const (
	minPartSize        = 5 << 20 // S3's minimum for every part but the last
	defaultPartSize    = 8 << 20
	maxDeleteBatch     = 1000 // S3's maximum keys per DeleteObjects
	defaultUploads     = 4
	defaultNumRetries  = 4 // 5 attempts in all
	defaultMinWait     = 100 * time.Millisecond
	defaultMaxWait     = 20 * time.Second
	defaultListPage    = 1000
	defaultS3RegionEnd = "us-east-1"
)

// S3Config is the parsed S3 configuration. Its String method redacts the
// secrets, so it is safe to print.
type S3Config struct {
	Endpoint        string
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	PathStyle       bool
	Region          string
	Profile         string // shared config profile; "" for AWS_PROFILE or default
	PartSize        int64
	UploadThreads   int
	DeleteBatchSize int
	MaxAttempts     int
	MinWait         time.Duration
	MaxWait         time.Duration
	ListPageSize    int32
}

// ParseS3Config reads the S3 configuration from Iceberg catalog/table
// properties. Unknown properties are ignored; malformed values are errors.
func ParseS3Config(props map[string]string) (S3Config, error) {
	c := S3Config{
		Endpoint:        props[S3Endpoint],
		AccessKeyID:     props[S3AccessKeyID],
		SecretAccessKey: props[S3SecretAccessKey],
		SessionToken:    props[S3SessionToken],
		Region:          props[ClientRegion],
		Profile:         props[S3ProfileName],
	}
	if c.Profile == "" {
		c.Profile = props[ClientProfileName]
	}
	keys := awsauth.Settings{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}
	if err := keys.Check(S3AccessKeyID, S3SecretAccessKey, S3SessionToken); err != nil {
		return S3Config{}, fmt.Errorf("s3 config: %w", err)
	}
	if c.AccessKeyID == "" {
		// PyIceberg's fallback: the keys of every AWS client.
		keys = awsauth.Settings{AccessKeyID: props[ClientAccessKeyID], SecretAccessKey: props[ClientSecretAccessKey], SessionToken: props[ClientSessionToken]}
		if err := keys.Check(ClientAccessKeyID, ClientSecretAccessKey, ClientSessionToken); err != nil {
			return S3Config{}, fmt.Errorf("s3 config: %w", err)
		}
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken = keys.AccessKeyID, keys.SecretAccessKey, keys.SessionToken
	}
	var err error
	if c.PathStyle, err = boolProp(props, S3PathStyleAccess, false); err != nil {
		return S3Config{}, err
	}
	partSize, err := intProp(props, S3PartSize, defaultPartSize, minPartSize, 5<<30)
	if err != nil {
		return S3Config{}, err
	}
	c.PartSize = int64(partSize)
	if c.UploadThreads, err = intProp(props, S3UploadThreads, defaultUploads, 1, 64); err != nil {
		return S3Config{}, err
	}
	if c.DeleteBatchSize, err = intProp(props, S3DeleteBatchSize, maxDeleteBatch, 1, maxDeleteBatch); err != nil {
		return S3Config{}, err
	}
	retries, err := intProp(props, S3RetryNumRetries, defaultNumRetries, 0, 100)
	if err != nil {
		return S3Config{}, err
	}
	c.MaxAttempts = retries + 1
	minWait, err := intProp(props, S3RetryMinWaitMS, int(defaultMinWait/time.Millisecond), 0, 3_600_000)
	if err != nil {
		return S3Config{}, err
	}
	maxWait, err := intProp(props, S3RetryMaxWaitMS, int(defaultMaxWait/time.Millisecond), 0, 3_600_000)
	if err != nil {
		return S3Config{}, err
	}
	if maxWait < minWait {
		return S3Config{}, fmt.Errorf("s3 config: %s (%d) is less than %s (%d)", S3RetryMaxWaitMS, maxWait, S3RetryMinWaitMS, minWait)
	}
	c.MinWait, c.MaxWait = time.Duration(minWait)*time.Millisecond, time.Duration(maxWait)*time.Millisecond
	page, err := intProp(props, S3ListPageSize, defaultListPage, 1, 1000)
	if err != nil {
		return S3Config{}, err
	}
	c.ListPageSize = int32(page)
	if c.Region == "" && c.Endpoint != "" {
		c.Region = defaultS3RegionEnd
	}
	return c, nil
}

func boolProp(props map[string]string, key string, def bool) (bool, error) {
	v, ok := props[key]
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("s3 config: %s=%q is not a boolean", key, v)
	}
	return b, nil
}

func intProp(props map[string]string, key string, def, lo, hi int) (int, error) {
	v, ok := props[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("s3 config: %s=%q is not an integer", key, v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("s3 config: %s=%d is outside [%d, %d]", key, n, lo, hi)
	}
	return n, nil
}

// String describes the configuration with secrets redacted.
func (c S3Config) String() string {
	redact := func(s string) string {
		if s == "" {
			return "unset"
		}
		return "redacted"
	}
	fields := map[string]string{
		"endpoint":          c.Endpoint,
		"region":            c.Region,
		"profile":           c.Profile,
		"access-key-id":     redact(c.AccessKeyID),
		"secret-access-key": redact(c.SecretAccessKey),
		"session-token":     redact(c.SessionToken),
		"path-style":        strconv.FormatBool(c.PathStyle),
		"part-size":         strconv.FormatInt(c.PartSize, 10),
		"upload-threads":    strconv.Itoa(c.UploadThreads),
		"delete-batch":      strconv.Itoa(c.DeleteBatchSize),
		"max-attempts":      strconv.Itoa(c.MaxAttempts),
		"retry-wait":        c.MinWait.String() + ".." + c.MaxWait.String(),
		"list-page-size":    strconv.Itoa(int(c.ListPageSize)),
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("S3Config{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", k, fields[k])
	}
	b.WriteString("}")
	return b.String()
}

// GoString keeps %#v from printing the secrets.
func (c S3Config) GoString() string { return c.String() }
