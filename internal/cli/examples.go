package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example sections of the commands' help, by command path
// below icectl. A command that sets its own Example keeps it. Every example
// line is a command line of this build (TestEveryCommandHasRunnableExamples).
var examples = map[string][]string{
	"demo": {
		"icectl demo",
		"icectl demo --dir /tmp/icectl-demo --force",
	},
	"table": {
		"icectl table list --catalog prod",
		"icectl table show shop.orders --catalog prod",
	},
	"inspect": {
		"icectl inspect metadata wh/shop/orders/metadata/00042-1b2c.metadata.json",
		"icectl inspect parquet wh/shop/orders/data/00000-0-1b2c.parquet",
	},
	"table list": {
		"icectl table list --catalog-uri sqlite:////var/lake/catalog.db",
		"icectl table list shop --catalog prod",
	},
	"table show": {
		"icectl table show shop.orders --catalog-uri sqlite:////var/lake/catalog.db",
		"icectl table show s3://bucket/wh/shop/orders/metadata/00042-1b2c.metadata.json",
	},
	"table set-properties": {
		"icectl table set-properties shop.orders write.target-file-size-bytes=268435456 --catalog prod",
		"icectl table set-properties shop.orders history.expire.max-snapshot-age-ms=604800000 --dry-run --catalog prod",
	},
	"table remove-properties": {
		"icectl table remove-properties shop.orders write.target-file-size-bytes --catalog prod",
	},
	"snapshots": {
		"icectl snapshots shop.orders --catalog prod",
		"icectl snapshots shop.orders --catalog prod -o json",
	},
	"files": {
		"icectl files shop.orders --catalog prod",
		"icectl files shop.orders --deletes --snapshot 4358109269869137293 --catalog prod",
	},
	"health": {
		"icectl health shop.orders --catalog-uri sqlite:////var/lake/catalog.db --catalog-name demo",
		"icectl health shop.orders --catalog prod -o json",
	},
	"compact": {
		"icectl compact shop.orders --dry-run --catalog prod",
		"icectl compact shop.orders --where \"region = 'eu'\" --partial-progress --catalog prod",
		"icectl compact shop.orders --target-file-size 256MiB --max-duration 2h --catalog prod",
		"icectl compact shop.orders --wait 10m --catalog prod",
	},
	"claim show":    {"icectl claim show shop.orders --catalog prod"},
	"claim release": {"icectl claim release shop.orders --force --catalog prod"},
	"expire": {
		"icectl expire shop.orders --dry-run --catalog prod",
		"icectl expire shop.orders --older-than 7d --retain-last 10 --catalog prod",
	},
	"tag create":    {"icectl tag create shop.orders eod-2024-06-30 --max-ref-age 90d --catalog prod"},
	"tag drop":      {"icectl tag drop shop.orders eod-2024-06-30 --catalog prod"},
	"tag list":      {"icectl tag list shop.orders --catalog prod"},
	"branch create": {"icectl branch create shop.orders audit --retain 7d --catalog prod"},
	"branch drop":   {"icectl branch drop shop.orders audit --catalog prod"},
	"branch list":   {"icectl branch list shop.orders --catalog prod"},
	"rollback": {
		"icectl rollback shop.orders --to-snapshot 4358109269869137293 --catalog prod",
		"icectl rollback shop.orders --to-timestamp 2024-06-30T12:00:00Z --catalog prod",
		"icectl rollback shop.orders --branch audit --to-snapshot 4358109269869137293 --dry-run --catalog prod",
	},
	"fast-forward": {
		"icectl fast-forward shop.orders --branch main --to audit --dry-run --catalog prod",
		"icectl fast-forward shop.orders --branch main --to audit --catalog prod",
	},
	"cherrypick": {
		"icectl cherrypick shop.orders --snapshot 4358109269869137293 --dry-run --catalog prod",
		"icectl cherrypick shop.orders --snapshot 4358109269869137293 --catalog prod -o json",
	},
	"rewrite-table-path": {
		"icectl rewrite-table-path shop.orders --from s3://old/wh/shop/orders --to s3://new/wh/shop/orders --stage /tmp/move --dry-run --catalog prod",
		"icectl rewrite-table-path shop.orders --from s3://old/wh --to s3://new/wh --stage /tmp/move --catalog prod -o json",
	},
	"table register": {
		"icectl table register shop.orders s3://new/wh/shop/orders/metadata/00042-1b2c.metadata.json --dry-run --catalog dr",
		"icectl table register shop.orders s3://new/wh/shop/orders/metadata/00042-1b2c.metadata.json --catalog dr",
	},
	"inspect metadata": {"icectl inspect metadata wh/shop/orders/metadata/00042-1b2c.metadata.json"},
	"inspect manifest": {"icectl inspect manifest s3://bucket/wh/shop/orders/metadata/snap-1-1-1b2c.avro -o json"},
	"inspect puffin":   {"icectl inspect puffin wh/shop/orders/data/00001-deletes.puffin"},
	"inspect dv": {
		"icectl inspect dv wh/shop/orders/data/00001-deletes.puffin --all",
		"icectl inspect dv wh/shop/orders/data/00001-deletes.puffin@4",
	},
	"inspect parquet": {"icectl inspect parquet wh/shop/orders/data/00000-0-1b2c.parquet"},
	"version":         {"icectl version", "icectl --version"},
	"catalog":         {"icectl catalog init --catalog-uri sqlite:////var/lake/catalog.db --warehouse file:///var/lake/wh"},
	"namespace": {
		"icectl namespace create shop owner=ann --catalog prod",
		"icectl namespace list --catalog prod",
		"icectl namespace drop staging --catalog prod",
	},
	"namespace create": {
		"icectl namespace create shop owner=ann 'comment=Orders and returns' --catalog prod",
		"icectl namespace create shop.archive --catalog prod",
	},
	"namespace list": {"icectl namespace list --catalog prod", "icectl namespace list shop --catalog prod"},
	"namespace drop": {"icectl namespace drop shop.archive --catalog prod"},
	"dv":             {"icectl dv merge shop.orders --dry-run --catalog prod"},
	"dv merge": {
		"icectl dv merge shop.orders --dry-run --catalog prod",
		"icectl dv merge shop.orders --catalog prod",
	},
	"orphan": {
		"icectl orphan shop.orders --dry-run --catalog prod",
		"icectl orphan shop.orders --older-than 7d --trash .icectl-trash --catalog prod",
	},
	"orphan restore": {"icectl orphan restore shop.orders --trash .icectl-trash --dry-run --catalog prod"},
	"orphan trash":   {"icectl orphan trash purge shop.orders --trash .icectl-trash --older-than 30d --catalog prod"},
	"orphan trash purge": {
		"icectl orphan trash purge shop.orders --trash .icectl-trash --older-than 30d --dry-run --catalog prod",
		"icectl orphan trash purge shop.orders --trash .icectl-trash --older-than 30d --catalog prod",
	},
	"rewrite-manifests": {
		"icectl rewrite-manifests shop.orders --dry-run --catalog prod",
		"icectl rewrite-manifests shop.orders --spec-id 0 --catalog prod",
	},
	"rewrite-position-deletes": {
		"icectl rewrite-position-deletes shop.orders --dry-run --catalog prod",
		"icectl rewrite-position-deletes shop.orders --min-input-files 2 --target-size 64MiB --catalog prod",
	},
	"upgrade": {
		"icectl upgrade shop.orders --check --catalog prod",
		"icectl upgrade shop.orders --to 3 --merge-deletes --catalog prod",
	},
	"verify":            {"icectl verify deletes shop.orders --catalog prod"},
	"verify deletes":    {"icectl verify deletes shop.orders --check-files --catalog prod"},
	"verify partitions": {"icectl verify partitions shop.orders --catalog prod", "icectl verify partitions shop.orders --metrics-only -o json --catalog prod"},
	"verify lineage":    {"icectl verify lineage shop.orders --from 4358109269869137293 --key id --catalog prod"},
}

// addExamples sets the Example of every command below root that has one
// in examples and none of its own.
func addExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			path := strings.TrimPrefix(sub.CommandPath(), root.Name()+" ")
			if ex, ok := examples[path]; ok && sub.Example == "" {
				sub.Example = "  " + strings.Join(ex, "\n  ")
			}
			walk(sub)
		}
	}
	walk(root)
}
