package puffin

// Layout constants of the Puffin format (format/puffin-spec.md).
var magic = [4]byte{'P', 'F', 'A', '1'}

const (
	magicLen = 4
	// footerTailLen is payload size (int32 LE), flags (4 bytes) and magic.
	footerTailLen = 4 + 4 + magicLen
	// footerOverhead is the footer's opening magic plus its tail.
	footerOverhead = magicLen + footerTailLen

	flagFooterCompressed = 1 // byte 0, bit 0: footer payload is LZ4
)
