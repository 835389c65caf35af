// Package cli is icectl's command layer: cobra wiring, flags turned into
// options, text and JSON rendering, and the exit codes.
//
// One file per verb. Each verb has a NewCmdX(f, runF) constructor so its
// flag parsing can be tested without running anything. The package never
// writes anything but results to stdout, and never prints credentials.
// Cobra stays in this package and cmd/; nothing below imports it.
package cli
