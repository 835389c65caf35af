// Package meter is the progress hook every long-running verb calls: the
// verb says how many steps (groups, partitions, manifests, files) a run has
// and reports each one as it finishes; the CLI decides how to show it. It
// sits below the verbs and imports nothing, so a verb reports progress
// without knowing about terminals or internal/cli.
package meter

// Meter receives the advance of a run. Calls may come from several
// goroutines, one at a time; Start comes first and Done last.
type Meter interface {
	// Start begins a run of steps totalling bytes (0 when unknown).
	Start(steps int, bytes int64)
	// Step records one finished step that processed bytes.
	Step(bytes int64)
	// Done ends the run, however it ended.
	Done()
}

// Or returns m, or a Meter that does nothing when m is nil, so a verb
// calls its hook without checking for one.
func Or(m Meter) Meter {
	if m == nil {
		return nop{}
	}
	return m
}

type nop struct{}

func (nop) Start(int, int64) {}
func (nop) Step(int64)       {}
func (nop) Done()            {}
