package cli

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/internal/shared/bytesize"
)

// TestOneSizeFormat runs the commands that show sizes in text, plans
// included, on the demo table: every size with a unit is shown one way,
// "1.2 MiB (1231486 bytes)", the exact count beside it and agreeing with
// it (a plan said "10MiB").
func TestOneSizeFormat(t *testing.T) {
	d := newDemo(t)
	dir := d.dir
	const name = "shop.orders"
	manifests, err := filepath.Glob(filepath.Join(dir, "warehouse", "shop.db", "orders", "metadata", "*-m0.avro"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no manifest: %v", err)
	}
	data, err := filepath.Glob(filepath.Join(dir, "warehouse", "shop.db", "orders", "data", "*", "*", "*.parquet"))
	if err != nil || len(data) == 0 {
		t.Fatalf("no data file: %v", err)
	}
	// A number with a binary unit, where a size starts (not a label like
	// health's "1-16MiB" buckets), and the one form it must take.
	unit := regexp.MustCompile(`(?:^|[\s(,])(\d+(?:\.\d+)?) ?([KMGTPE]i?B)\b`)
	want := regexp.MustCompile(`^(\d+\.\d) ([KMGTPE]iB) \((\d+) bytes\)`)
	sized := 0
	for _, args := range [][]string{
		{"health", name}, {"compact", name, "--dry-run"}, {"compact", name, "--dry-run", "--target-file-size", "10MiB"},
		{"files", name}, {"files", name, "--deletes"}, {"rewrite-manifests", name, "--dry-run"},
		{"expire", name, "--dry-run", "--older-than", "0s", "--retain-last", "1"}, {"orphan", name, "--dry-run"},
		{"inspect", "manifest", manifests[0]}, {"inspect", "parquet", data[0]},
	} {
		if args[0] != "inspect" {
			args = append(args, d.cat...)
		}
		out := runCLI(t, d.env, args...).mustSucceed(t).stdout
		label := strings.Join(args[:2], " ")
		for _, loc := range unit.FindAllStringSubmatchIndex(out, -1) {
			rest := out[loc[2]:]
			g := want.FindStringSubmatch(rest)
			if g == nil {
				t.Errorf("%s: size %q is not shown as 1.2 MiB (1231486 bytes)", label, rest[:min(len(rest), 40)])
				continue
			}
			n, _ := strconv.ParseInt(g[3], 10, 64)
			if got := bytesize.Format(n); !strings.HasPrefix(rest, got) {
				t.Errorf("%s: %q, but %d bytes is %s", label, g[0], n, got)
			}
			sized++
		}
	}
	if sized < 20 {
		t.Errorf("only %d sizes shown: the commands did not show what the test checks", sized)
	}
}
