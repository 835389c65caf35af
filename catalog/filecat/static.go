package filecat

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// OpenMetadataFile opens the table version stored in one metadata file, at
// any location FileIO reaches, for inspection. The table's IO is read-only;
// commit it through Static to get a clear refusal.
func OpenMetadataFile(ctx context.Context, path string, props map[string]string) (*catalog.Table, error) {
	fio, err := fileio.Load(ctx, path, props)
	if err != nil {
		return nil, fmt.Errorf("open metadata file %s: %w", path, err)
	}
	md, err := catalog.ReadMetadata(ctx, fio, path)
	if err != nil {
		return nil, err
	}
	return &catalog.Table{MetadataLocation: path, Metadata: md, IO: fileio.ReadOnly(fio)}, nil
}

// Static is a read-only catalog holding one table opened by
// OpenMetadataFile: LoadTable returns it whatever the identifier, and
// every change returns an error wrapping catalog.ErrReadOnly.
type Static struct {
	Table *catalog.Table
}

var _ catalog.Catalog = Static{}

func (s Static) Name() string { return "metadata-file" }

func (s Static) ListNamespaces(context.Context, []string) ([][]string, error) { return nil, nil }

func (s Static) CreateNamespace(context.Context, []string, map[string]string) error {
	return fmt.Errorf("create namespace: %w", catalog.ErrReadOnly)
}

func (s Static) DropNamespace(context.Context, []string) error {
	return fmt.Errorf("drop namespace: %w", catalog.ErrReadOnly)
}

func (s Static) ListTables(context.Context, []string) ([]catalog.Ident, error) { return nil, nil }

func (s Static) CreateTable(_ context.Context, id catalog.Ident, _ *spec.TableMetadata) (*catalog.Table, error) {
	return nil, fmt.Errorf("create table %s: %w", id, catalog.ErrReadOnly)
}

func (s Static) LoadTable(context.Context, catalog.Ident) (*catalog.Table, error) {
	return s.Table, nil
}

func (s Static) CommitTable(_ context.Context, t *catalog.Table, _ []spec.Requirement, _ []spec.Update) (*catalog.Table, error) {
	return nil, fmt.Errorf("commit %s: opened from metadata file %s for inspection: %w", t.Ident, s.Table.MetadataLocation, catalog.ErrReadOnly)
}

func (s Static) DropTable(_ context.Context, id catalog.Ident) error {
	return fmt.Errorf("drop table %s: %w", id, catalog.ErrReadOnly)
}

func (s Static) Close() error { return nil }
