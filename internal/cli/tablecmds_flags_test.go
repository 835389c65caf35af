package cli

import "testing"

func TestReadCommandFlags(t *testing.T) {
	f := &Factory{Getenv: func(string) string { return "" }, Output: outputText}

	var files *FilesOptions
	cmd := NewCmdFiles(f, func(o *FilesOptions) error { files = o; return nil })
	if err := parse(t, cmd, "db.t", "--deletes", "--snapshot", "9007199254740993", "--catalog", "prod", "--catalog-name", "cn", "--warehouse", "file:///wh"); err != nil {
		t.Fatal(err)
	}
	if files.Table != "db.t" || !files.Deletes || !files.hasSnap || files.SnapshotID != 9007199254740993 ||
		files.Catalog.Catalog != "prod" || files.Catalog.CatalogName != "cn" || files.Catalog.Warehouse != "file:///wh" {
		t.Errorf("files options %+v", files)
	}
	files = nil
	if err := parse(t, NewCmdFiles(f, func(o *FilesOptions) error { files = o; return nil }), "db.t"); err != nil || files.hasSnap || files.Deletes {
		t.Errorf("defaults: %v %+v", err, files)
	}

	var list *TableListOptions
	if err := parse(t, NewCmdTableList(f, func(o *TableListOptions) error { list = o; return nil }), "a.b", "--catalog-uri", "sqlite:x.db"); err != nil {
		t.Fatal(err)
	}
	if list.Namespace != "a.b" || list.Catalog.URI != "sqlite:x.db" {
		t.Errorf("list options %+v", list)
	}

	var demoOpts *DemoOptions
	if err := parse(t, NewCmdDemo(f, func(o *DemoOptions) error { demoOpts = o; return nil })); err != nil {
		t.Fatal(err)
	}
	if demoOpts.Dir != "icectl-demo" || demoOpts.Force || demoOpts.Seed != 1 {
		t.Errorf("demo defaults %+v", demoOpts)
	}
}
