package icebergread

import "encoding/hex"

// hexPtr renders optional bytes; nil stays nil so "absent" and "empty" differ.
func hexPtr(b *[]byte) *string {
	if b == nil {
		return nil
	}
	s := hex.EncodeToString(*b)
	return &s
}

func hexOrNil(b []byte) *string {
	if b == nil {
		return nil
	}
	s := hex.EncodeToString(b)
	return &s
}

func hexMap(m map[int][]byte) map[int]string {
	if m == nil {
		return nil
	}
	out := make(map[int]string, len(m))
	for k, v := range m {
		out[k] = hex.EncodeToString(v)
	}
	return out
}
