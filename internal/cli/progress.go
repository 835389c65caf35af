package cli

import "github.com/icectl/icectl/internal/cli/progress"

// progressBar returns the bar of a run whose steps are called unit, or nil
// when stderr is not a terminal (and no test forces one). A verb given the
// bar as its progress hook also logs through it, so that its lines print
// above the bar instead of through it.
func (f *Factory) progressBar(unit string) *progress.Bars {
	return progress.New(f.ErrOut, unit, f.ForceProgress)
}
