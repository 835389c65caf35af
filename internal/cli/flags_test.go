package cli

import (
	"io"
	"reflect"
	"testing"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/fileio"
)

// parse runs cmd's flag parsing and argument checks on args; runF captured
// what the command would have run with.
func parse(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

func TestInspectDVFlags(t *testing.T) {
	var got *InspectDVOptions
	capture := func(o *InspectDVOptions) error { got = o; return nil }
	err := parse(t, NewCmdInspectDV(&Factory{}, capture),
		"s3://b/k.puffin", "--offset", "4", "--length", "50", "--all", "--s3-endpoint", "http://h:1", "--s3-path-style", "--s3-region", "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	want := InspectDVOptions{f: got.f, File: "s3://b/k.puffin", Offset: 4, hasOffset: true, Length: 50, All: true,
		S3: S3Options{Endpoint: "http://h:1", PathStyle: true, Region: "eu-west-1"}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options = %+v, want %+v", *got, want)
	}

	got = nil
	if err := parse(t, NewCmdInspectDV(&Factory{}, capture), "x.bin"); err != nil {
		t.Fatal(err)
	}
	if got.Offset != 0 || got.hasOffset || got.Length != 0 || got.All {
		t.Errorf("defaults = %+v", *got)
	}
}

func TestInspectFileArgument(t *testing.T) {
	var file string
	var all bool
	cmds := map[string]*cobra.Command{
		"metadata": NewCmdInspectMetadata(&Factory{}, func(o *InspectMetadataOptions) error { file = o.File; return nil }),
		"manifest": NewCmdInspectManifest(&Factory{}, func(o *InspectManifestOptions) error { file = o.File; return nil }),
		"puffin":   NewCmdInspectPuffin(&Factory{}, func(o *InspectPuffinOptions) error { file, all = o.File, o.All; return nil }),
		"parquet":  NewCmdInspectParquet(&Factory{}, func(o *InspectParquetOptions) error { file = o.File; return nil }),
	}
	for name, cmd := range cmds {
		file = ""
		if err := parse(t, cmd, "s3://bucket/"+name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if file != "s3://bucket/"+name {
			t.Errorf("%s: File = %q", name, file)
		}
		if err := parse(t, cmd); err == nil {
			t.Errorf("%s without FILE: no error", name)
		}
	}
	if err := parse(t, NewCmdInspectPuffin(&Factory{}, func(o *InspectPuffinOptions) error { all = o.All; return nil }), "f", "--all"); err != nil || !all {
		t.Errorf("puffin --all: err %v, All %v", err, all)
	}
}

func TestFileIOProps(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://env-endpoint",
		"AWS_REGION":            "us-west-2",
		"AWS_ACCESS_KEY_ID":     "AKID",
		"AWS_SECRET_ACCESS_KEY": "SECRET",
	}
	getenv := func(k string) string { return env[k] }

	got := fileIOProps(S3Options{}, getenv)
	want := map[string]string{
		fileio.S3Endpoint:        "http://env-endpoint",
		fileio.ClientRegion:      "us-west-2",
		fileio.S3AccessKeyID:     "AKID",
		fileio.S3SecretAccessKey: "SECRET",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from env: %v, want %v", got, want)
	}

	got = fileIOProps(S3Options{Endpoint: "http://flag", Region: "eu-central-1", PathStyle: true}, getenv)
	if got[fileio.S3Endpoint] != "http://flag" || got[fileio.ClientRegion] != "eu-central-1" || got[fileio.S3PathStyleAccess] != "true" {
		t.Errorf("flags do not override env: %v", got)
	}

	env["AWS_ENDPOINT_URL_S3"] = "http://s3-specific"
	if got := fileIOProps(S3Options{}, getenv)[fileio.S3Endpoint]; got != "http://s3-specific" {
		t.Errorf("AWS_ENDPOINT_URL_S3 does not take precedence: %q", got)
	}

	if got := fileIOProps(S3Options{}, func(string) string { return "" }); len(got) != 0 {
		t.Errorf("empty environment gives %v", got)
	}
}

// --s3-profile selects a profile of the shared AWS files, which then wins
// over the AWS_* keys of the environment, as in the SDK's own chain.
func TestFileIOPropsProfile(t *testing.T) {
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET", "AWS_REGION": "us-west-2"}
	got := fileIOProps(S3Options{Profile: "ops"}, func(k string) string { return env[k] })
	want := map[string]string{fileio.S3ProfileName: "ops", fileio.ClientRegion: "us-west-2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with a profile: %v, want %v", got, want)
	}
	var profile string
	cmd := NewCmdInspectMetadata(&Factory{}, func(o *InspectMetadataOptions) error { profile = o.S3.Profile; return nil })
	if err := parse(t, cmd, "s3://b/m.json", "--s3-profile", "ops"); err != nil || profile != "ops" {
		t.Errorf("--s3-profile: err %v, profile %q", err, profile)
	}
}
