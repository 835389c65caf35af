package bytesize

import "testing"

func TestParse(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "512MiB": 512 << 20, "512mib": 512 << 20, "1GiB": 1 << 30,
		"2 TiB": 2 << 40, "1.5GiB": 3 << 29, "10KB": 10000, "3MB": 3000000, "1GB": 1e9, "100B": 100,
		"64k": 64 << 10, "8M": 8 << 20, " 7 KiB ": 7 << 10,
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-5MiB", "1.2.3GB", "abc", "1e3", "0x10", "9999999TiB", "1 PiB", "NaN", "Inf"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := map[int64]string{
		0: "0 bytes", 1: "1 byte", 100: "100 bytes", 1023: "1023 bytes",
		1024: "1.0 KiB (1024 bytes)", 1231486: "1.2 MiB (1231486 bytes)", 512 << 20: "512.0 MiB (536870912 bytes)",
		3 << 29: "1.5 GiB (1610612736 bytes)", 100 << 30: "100.0 GiB (107374182400 bytes)", -2048: "-2.0 KiB (-2048 bytes)",
	}
	for in, want := range cases {
		if got := Format(in); got != want {
			t.Errorf("Format(%d) = %q, want %q", in, got, want)
		}
	}
}
