package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/fileio"
)

// S3Options locate an S3 endpoint. Credentials are never flags: they come
// from the standard AWS environment variables or the SDK's default chain
// (a profile of the shared config files selects them), so they stay out of
// shell history and process listings, and icectl never prints them.
type S3Options struct {
	Endpoint  string
	PathStyle bool
	Region    string
	Profile   string
}

func addS3Flags(cmd *cobra.Command, o *S3Options) {
	fs := cmd.Flags()
	fs.StringVar(&o.Endpoint, "s3-endpoint", "", "S3 endpoint URL (default $AWS_ENDPOINT_URL_S3 or $AWS_ENDPOINT_URL)")
	fs.BoolVar(&o.PathStyle, "s3-path-style", false, "address buckets by path instead of virtual host")
	fs.StringVar(&o.Region, "s3-region", "", "S3 region (default $AWS_REGION or $AWS_DEFAULT_REGION)")
	fs.StringVar(&o.Profile, "s3-profile", "", "profile of ~/.aws/config and ~/.aws/credentials for S3 credentials (default $AWS_PROFILE)")
}

// fileIOProps are the FileIO properties for o, with the standard AWS
// environment variables filling what the flags leave unset.
func fileIOProps(o S3Options, getenv func(string) string) map[string]string {
	props := map[string]string{}
	setFirst := func(key string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				props[key] = v
				return
			}
		}
	}
	setFirst(fileio.S3Endpoint, o.Endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"))
	setFirst(fileio.ClientRegion, o.Region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	if o.PathStyle {
		props[fileio.S3PathStyleAccess] = strconv.FormatBool(true)
	}
	if o.Profile != "" {
		// A profile chosen explicitly wins over the AWS_* keys, as it
		// does in the SDK's default chain.
		props[fileio.S3ProfileName] = o.Profile
		return props
	}
	setFirst(fileio.S3AccessKeyID, getenv("AWS_ACCESS_KEY_ID"))
	setFirst(fileio.S3SecretAccessKey, getenv("AWS_SECRET_ACCESS_KEY"))
	setFirst(fileio.S3SessionToken, getenv("AWS_SESSION_TOKEN"))
	return props
}

// openFile opens path, a local path or a URI such as s3://bucket/key.
func openFile(ctx context.Context, f *Factory, o S3Options, path string) (fileio.File, error) {
	fio, err := fileio.Load(ctx, path, fileIOProps(o, f.Getenv))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	file, err := fio.Open(ctx, path)
	if err != nil {
		return nil, err // it names the path
	}
	return file, nil
}

// readAll reads the whole of file.
func readAll(file fileio.File, path string) ([]byte, error) {
	buf := make([]byte, file.Size())
	// A ReaderAt may return io.EOF along with a full read.
	if n, err := file.ReadAt(buf, 0); n != len(buf) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf, nil
}
