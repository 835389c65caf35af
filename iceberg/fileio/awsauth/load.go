package awsauth

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go/logging"
)

// Settings choose the credentials and region of one AWS client.
type Settings struct {
	// AccessKeyID and SecretAccessKey (and SessionToken), when set, are
	// the credentials; otherwise the SDK's default chain finds them.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Profile is the shared-config profile; "" for AWS_PROFILE or default.
	Profile string
	// Region, when set, wins over AWS_REGION and the profile's region.
	Region string
}

// Check refuses half-given static credentials.
func (s Settings) Check(keyID, secret, token string) error {
	if (s.AccessKeyID == "") != (s.SecretAccessKey == "") {
		return fmt.Errorf("%s and %s must be given together", keyID, secret)
	}
	if s.SessionToken != "" && s.AccessKeyID == "" {
		return fmt.Errorf("%s needs %s and %s", token, keyID, secret)
	}
	return nil
}

// IMDSTimeout bounds each request to the EC2 instance metadata service:
// on EC2 it answers in milliseconds, and off EC2 the chain then fails in
// about a second instead of retrying.
const IMDSTimeout = time.Second

// Load resolves s into an AWS configuration: the SDK's default chain in
// its order (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN;
// the profile of ~/.aws/config and ~/.aws/credentials, with its role, web
// identity, SSO and credential_process settings; a web identity token
// file; the ECS container endpoint; the EC2 instance metadata service
// unless AWS_EC2_METADATA_DISABLED=true), preceded by s's static keys when
// given. Credentials are cached and fetched again as they expire. The SDK
// never writes to the terminal. extra adds options (a retryer).
func Load(ctx context.Context, s Settings, extra ...func(*config.LoadOptions) error) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithLogger(logging.Nop{}),
		config.WithClientLogMode(0),
		config.WithEC2RoleCredentialOptions(func(o *ec2rolecreds.Options) {
			// imds.New still honours AWS_EC2_METADATA_DISABLED.
			o.Client = imds.New(imds.Options{
				HTTPClient: &http.Client{Timeout: IMDSTimeout},
				Retryer:    aws.NopRetryer{},
				Logger:     logging.Nop{},
			})
		}),
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	if s.Region != "" {
		opts = append(opts, config.WithRegion(s.Region))
	}
	if s.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, s.SessionToken)))
	}
	return config.LoadDefaultConfig(ctx, append(opts, extra...)...)
}
