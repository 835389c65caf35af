package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestBarsDrawGroupsAndFinish(t *testing.T) {
	var buf bytes.Buffer
	b := NewBars(&buf)
	b.Start(2, 2048)
	b.GroupDone(1024)
	b.GroupDone(1024)
	b.Finish()
	if !strings.Contains(buf.String(), "groups 2/2") {
		t.Fatalf("bar output %q lacks the group count", buf.String())
	}
	if IsTerminal(&buf) {
		t.Fatal("a buffer is not a terminal")
	}
}
