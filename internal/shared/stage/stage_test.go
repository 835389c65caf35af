package stage

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// lowerHost lists as Azure's FileIO does: the account host lower-cased,
// the keys as stored.
type lowerHost struct{ *fileio.Mem }

func (l lowerHost) List(ctx context.Context, prefix string, fn func(fileio.FileInfo) error) error {
	return l.Mem.List(ctx, prefix, func(fi fileio.FileInfo) error {
		host, key, _ := strings.Cut(strings.TrimPrefix(fi.Path, "abfss://"), "/")
		fi.Path = "abfss://" + strings.ToLower(host) + "/" + key
		return fn(fi)
	})
}

// TestListStoreCase: results are found whatever case the store lists the
// stage's scheme and host in; what is not a result is left out.
func TestListStoreCase(t *testing.T) {
	ctx := context.Background()
	mem := fileio.NewMem()
	const dir = "abfss://ctr@MyAccount.dfs.core.windows.net/runs/1/groups/"
	for _, name := range []string{"a.json", "b.json", ".tmp.json", "c.txt", "sub/d.json"} {
		if err := fileio.WriteFile(ctx, mem, dir+name, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(ctx, lowerHost{mem}, dir)
	if err != nil {
		t.Fatal(err)
	}
	lower := "abfss://ctr@myaccount.dfs.core.windows.net/runs/1/groups/"
	want := map[string]string{"a": lower + "a.json", "b": lower + "b.json"}
	if !maps.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
}
