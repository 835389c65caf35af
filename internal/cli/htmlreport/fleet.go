package htmlreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/icectl/icectl/maintain"
)

const debtW = 560 // the longest debt bar

type fleetPage struct {
	P         *maintain.Plan
	Generated string
	Tables    int
	Debt      []bar
	DebtH     int
}

// Fleet writes the page of maintain's fleet plan (a dry run): the tables
// with work due ranked as maintain would run them (by debt class, then
// longest since maintained), each with its debt and the verbs due, then
// the healthy and the unreadable tables.
func Fleet(w io.Writer, p *maintain.Plan) error {
	fp := fleetPage{P: p, Generated: timeText(p.NowMS), Tables: len(p.Due) + len(p.Healthy) + len(p.Failed)}
	var most int64 = 1
	for _, tp := range p.Due {
		most = max(most, tp.Debt)
	}
	for i, tp := range p.Due {
		bw := float64(tp.Debt) / float64(most) * debtW
		if tp.Debt > 0 {
			bw = max(bw, 1)
		}
		verbs := make([]string, len(tp.Due))
		for j, d := range tp.Due {
			verbs[j] = d.Verb
		}
		fp.Debt = append(fp.Debt, bar{Note: strings.Join(verbs, ", "), X: 0, Y: float64(i) * 20, W: bw, H: 14, Class: "bad", Label: tp.Table, Count: tp.Debt,
			Title: fmt.Sprintf("%d. %s: debt %d", i+1, tp.Table, tp.Debt)})
	}
	fp.DebtH = len(p.Due) * 20
	return fleetTmpl.Execute(w, fp)
}
