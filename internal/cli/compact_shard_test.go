package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/compact"
)

// TestCompactShardFlags: the sharded run's flags parse, the index comes
// from the environment when --shard names only the count, and every
// combination that cannot work is a usage error naming what to type.
func TestCompactShardFlags(t *testing.T) {
	parse := func(env map[string]string, args ...string) (*CompactOptions, error) {
		var got *CompactOptions
		f := &Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(k string) string { return env[k] }}
		cmd := NewCmdCompact(f, func(o *CompactOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{"db.t"}, args...))
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		return got, cmd.Execute()
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want compact.Shard
	}{
		{nil, []string{"--plan", "p.json", "--shard", "1/4", "--stage", "s3://b/stage"}, compact.Shard{Index: 1, Count: 4}},
		{map[string]string{"JOB_COMPLETION_INDEX": "3"}, []string{"--plan", "p.json", "--shard", "4", "--stage", "d"}, compact.Shard{Index: 3, Count: 4}},
		{map[string]string{"AWS_BATCH_JOB_ARRAY_INDEX": "0"}, []string{"--plan", "p.json", "--shard", "2", "--stage", "d"}, compact.Shard{Index: 0, Count: 2}},
		{map[string]string{"JOB_COMPLETION_INDEX": "1", "AWS_BATCH_JOB_ARRAY_INDEX": "0"}, []string{"--plan", "p", "--shard", "2", "--stage", "d"}, compact.Shard{Index: 1, Count: 2}},
	} {
		got, err := parse(c.env, c.args...)
		if err != nil || got.Shard != c.want || got.Plan == "" || got.Stage == "" {
			t.Errorf("%v %v: %+v, %v; want shard %+v", c.env, c.args, got, err, c.want)
		}
	}
	if got, err := parse(nil, "--commit", "s3://b/stage", "--max-commits", "3"); err != nil || got.Commit != "s3://b/stage" {
		t.Errorf("--commit: %+v, %v", got, err)
	}

	for _, c := range []struct {
		env  map[string]string
		args []string
		msg  string
	}{
		{nil, []string{"--plan", "p", "--shard", "4/4", "--stage", "d"}, "out of range"},
		{nil, []string{"--plan", "p", "--shard", "-1/4", "--stage", "d"}, "out of range"},
		{map[string]string{"JOB_COMPLETION_INDEX": "4"}, []string{"--plan", "p", "--shard", "4", "--stage", "d"}, "out of range: want 0 to 3"},
		{map[string]string{"JOB_COMPLETION_INDEX": "x"}, []string{"--plan", "p", "--shard", "4", "--stage", "d"}, "$JOB_COMPLETION_INDEX"},
		{nil, []string{"--plan", "p", "--shard", "4", "--stage", "d"}, "names only the count"},
		{nil, []string{"--plan", "p", "--shard", "0", "--stage", "d"}, "invalid --shard"},
		{nil, []string{"--plan", "p", "--shard", "a/b", "--stage", "d"}, "invalid --shard"},
		{nil, []string{"--plan", "p", "--stage", "d"}, "--plan needs --shard"},
		{nil, []string{"--plan", "p", "--shard", "0/2"}, "--plan needs --shard"},
		{nil, []string{"--shard", "0/2", "--stage", "d"}, "add --plan"},
		{nil, []string{"--commit", "d", "--shard", "0/2"}, "workers' flags"},
		{nil, []string{"--plan", "p", "--shard", "0/2", "--stage", "d", "--target-file-size", "1GiB"}, "--target-file-size cannot be used"},
		{nil, []string{"--commit", "d", "--where", "id > 1"}, "--where cannot be used"},
		{nil, []string{"--commit", "d", "--dry-run"}, "--dry-run cannot be used"},
		{nil, []string{"--plan", "p", "--shard", "0/2", "--stage", "d", "--sort"}, "the plan decides it"},
	} {
		_, err := parse(c.env, c.args...)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v %v: error %v, want a usage error with %q", c.env, c.args, err, c.msg)
		}
	}
}

// TestShardStore: a plan or stage location on the table's store, whatever
// scheme of that store it is written with, is reached through the table's
// FileIO; one on another store through its own.
func TestShardStore(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"s3://b/t", "s3a://b/stage"}, {"S3N://b/t", "s3://other/stage"},
		{"abfs://c@a.dfs.core.windows.net/t", "wasbs://c@a.blob.core.windows.net/stage"},
		{"abfss://c@a.dfs.core.windows.net/t", "wasb://d@a.blob.core.windows.net/stage"},
		{"gs://b/t", "GS://b/stage"}, {"file:///w/t", "/tmp/stage"},
	} {
		if store(c.a) != store(c.b) {
			t.Errorf("%s and %s are on different stores (%s, %s)", c.a, c.b, store(c.a), store(c.b))
		}
	}
	for _, c := range []struct{ a, b string }{
		{"s3://b/t", "gs://b/stage"}, {"gs://b/t", "abfs://c@a.dfs.core.windows.net/s"}, {"abfs://c@a.dfs.core.windows.net/t", "s3://b/s"}, {"/w/t", "s3://b/s"},
	} {
		if store(c.a) == store(c.b) {
			t.Errorf("%s and %s are on one store (%s)", c.a, c.b, store(c.a))
		}
	}
}
