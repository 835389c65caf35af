package plan

import "testing"

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "512MiB": 512 << 20, "512mib": 512 << 20, "1GiB": 1 << 30,
		"2 TiB": 2 << 40, "1.5GiB": 3 << 29, "10KB": 10000, "3MB": 3000000, "1GB": 1e9, "100B": 100,
		"64k": 64 << 10, "8M": 8 << 20, " 7 KiB ": 7 << 10,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-5MiB", "1.2.3GB", "abc", "1e3", "0x10", "9999999TiB", "1 PiB", "NaN", "Inf"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	cases := map[int64]string{0: "0B", 100: "100B", 1024: "1KiB", 512 << 20: "512MiB", 3 << 29: "1.5GiB", 100 << 30: "100GiB", -2048: "-2KiB"}
	for in, want := range cases {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
		if in >= 0 {
			if back, err := ParseSize(FormatSize(in)); err != nil || back != in {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", in, back, err)
			}
		}
	}
}
