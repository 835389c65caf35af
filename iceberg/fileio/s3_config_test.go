package fileio_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
)

func TestParseS3ConfigDefaults(t *testing.T) {
	c, err := fileio.ParseS3Config(map[string]string{fileio.S3Endpoint: "http://127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "us-east-1" {
		t.Errorf("Region = %q, want us-east-1 when an endpoint is given", c.Region)
	}
	if c.PathStyle {
		t.Error("path-style access is on by default")
	}
	if c.PartSize != 8<<20 || c.DeleteBatchSize != 1000 || c.MaxAttempts != 5 || c.ListPageSize != 1000 {
		t.Errorf("defaults: part %d, delete batch %d, attempts %d, page %d", c.PartSize, c.DeleteBatchSize, c.MaxAttempts, c.ListPageSize)
	}
	c, err = fileio.ParseS3Config(map[string]string{fileio.ClientRegion: "eu-west-3", fileio.S3PathStyleAccess: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "eu-west-3" || !c.PathStyle {
		t.Errorf("Region %q, path style %v", c.Region, c.PathStyle)
	}
	if c, _ := fileio.ParseS3Config(nil); c.Region != "" {
		t.Errorf("Region = %q without endpoint or client.region, want it left to the SDK chain", c.Region)
	}
	c, err = fileio.ParseS3Config(map[string]string{fileio.S3RetryMinWaitMS: "10", fileio.S3RetryMaxWaitMS: "40", fileio.S3RetryNumRetries: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MinWait != 10*time.Millisecond || c.MaxWait != 40*time.Millisecond || c.MaxAttempts != 1 {
		t.Errorf("retry settings: %v..%v, %d attempts", c.MinWait, c.MaxWait, c.MaxAttempts)
	}
}

// PyIceberg's client.* keys are S3's when no s3.* keys are given; s3.*
// keys (a catalog's own, or vended ones) win, never mixed with client.*.
func TestParseS3ConfigClientKeys(t *testing.T) {
	client := map[string]string{fileio.ClientAccessKeyID: "CLIENTKEY", fileio.ClientSecretAccessKey: "clientsecret", fileio.ClientSessionToken: "clienttok"}
	c, err := fileio.ParseS3Config(client)
	if err != nil {
		t.Fatal(err)
	}
	if c.AccessKeyID != "CLIENTKEY" || c.SecretAccessKey != "clientsecret" || c.SessionToken != "clienttok" {
		t.Errorf("client.* keys not used: %+v", c)
	}
	client[fileio.S3AccessKeyID], client[fileio.S3SecretAccessKey] = "S3KEY", "s3secret"
	if c, err = fileio.ParseS3Config(client); err != nil {
		t.Fatal(err)
	}
	if c.AccessKeyID != "S3KEY" || c.SecretAccessKey != "s3secret" || c.SessionToken != "" {
		t.Errorf("s3.* keys must win whole over client.*: key %q, token set %v", c.AccessKeyID, c.SessionToken != "")
	}
}

func TestParseS3ConfigRejects(t *testing.T) {
	for _, props := range []map[string]string{
		{fileio.S3AccessKeyID: "AKID"},
		{fileio.S3SecretAccessKey: "secret"},
		{fileio.S3SessionToken: "tok"},
		{fileio.S3PathStyleAccess: "maybe"},
		{fileio.S3PartSize: "1024"},
		{fileio.S3PartSize: "lots"},
		{fileio.S3DeleteBatchSize: "1001"},
		{fileio.S3ListPageSize: "0"},
		{fileio.S3RetryMinWaitMS: "50", fileio.S3RetryMaxWaitMS: "10"},
		{fileio.S3UploadThreads: "-1"},
		{fileio.ClientAccessKeyID: "AKID"},
		{fileio.ClientSessionToken: "tok"},
	} {
		if _, err := fileio.ParseS3Config(props); err == nil {
			t.Errorf("ParseS3Config(%v) accepted bad input", props)
		}
	}
}

func TestS3ConfigNeverPrintsSecrets(t *testing.T) {
	c, err := fileio.ParseS3Config(map[string]string{
		fileio.S3AccessKeyID:     "AKIDVISIBLE",
		fileio.S3SecretAccessKey: "SECRETVALUE",
		fileio.S3SessionToken:    "TOKENVALUE",
		fileio.S3Endpoint:        "http://host:1",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		for _, secret := range []string{"AKIDVISIBLE", "SECRETVALUE", "TOKENVALUE"} {
			if strings.Contains(s, secret) {
				t.Errorf("printed config contains %s: %s", secret, s)
			}
		}
		if !strings.Contains(s, "http://host:1") {
			t.Errorf("printed config lacks the endpoint: %s", s)
		}
	}
}

func TestS3RemoveManyReportsPerKeyErrors(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3DeleteBatchSize, "2")
	ctx := t.Context()
	paths := []string{"s3://bucket/a", "s3://bucket/locked1", "s3://bucket/b", "s3://bucket/c", "s3://bucket/locked2", "not-s3"}
	for _, p := range paths[:5] {
		if err := fileio.WriteFile(ctx, fio, p, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	err := fio.RemoveMany(ctx, paths)
	var rme *fileio.RemoveManyError
	if !errors.As(err, &rme) {
		t.Fatalf("RemoveMany = %v, want *RemoveManyError", err)
	}
	var failed []string
	for _, f := range rme.Failed {
		failed = append(failed, f.Path)
	}
	if got, want := fmt.Sprint(failed), "[s3://bucket/locked1 s3://bucket/locked2 not-s3]"; got != want {
		t.Errorf("failed paths %s, want %s (in the order given)", got, want)
	}
	if !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("error %q does not carry S3's code", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("RemoveManyError does not unwrap to *fs.PathError")
	}
	if n := fake.count("DeleteObjects"); n != 3 {
		t.Errorf("%d DeleteObjects requests for 5 keys in batches of 2, want 3", n)
	}
	for _, p := range []string{"s3://bucket/a", "s3://bucket/b", "s3://bucket/c"} {
		if _, err := fio.Open(ctx, p); !errors.Is(err, fileio.ErrNotFound) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
}
