package spec

import (
	"strings"
	"testing"
)

// A parse error never carries the lines of a file that is not table
// metadata, and quotes at most a few escaped bytes of one that is.
func TestParseErrorsQuoteLittle(t *testing.T) {
	shadow := "root:$6$saltsalt$SECRETHASHSECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
	for _, in := range []string{shadow, "[" + `"SECRETHASH"` + "]", `"SECRETHASH"`} {
		_, err := ParseMetadata([]byte(in))
		if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "daemon") {
			t.Errorf("ParseMetadata(%.20q...): %v", in, err)
		}
	}
	long := `{"format-version": "SECRETHASH` + strings.Repeat("x", 500) + "\x1b[2J" + `"}`
	_, err := ParseMetadata([]byte(long))
	if err == nil {
		t.Fatal("a string format-version parsed")
	}
	if msg := err.Error(); len(msg) > 200 || strings.ContainsRune(msg, 0x1b) || strings.Contains(msg, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") {
		t.Errorf("error quotes too much (%d bytes): %q", len(msg), msg)
	}
}
