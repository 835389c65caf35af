package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/maintain"
)

var (
	//go:embed page.css
	pageCSS string
	//go:embed table.html
	tableHTML string
	//go:embed fleet.html
	fleetHTML string
)

// funcs are the templates' helpers. Sizes and ratios are shown as the
// text report shows them (bytesize.Format, one decimal of a percent).
var funcs = template.FuncMap{
	"css":   func() template.CSS { return template.CSS(pageCSS) },
	"bytes": bytesize.Format,
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", f*100) },
	"add":   func(a, b float64) float64 { return a + b },
	"sub":   func(a, b float64) float64 { return a - b },
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
	"inc":    func(i int) int { return i + 1 },
	"age":    ageText,
	"histW":  func() float64 { return histW },
	"histH":  func() float64 { return histH },
	"miniW":  func() float64 { return miniW },
	"miniH":  func() float64 { return miniH },
	"ratioW": func() float64 { return ratioW },
	"kindW":  func() float64 { return kindW },
	"dayW":   func() float64 { return dayW },
	"dayH":   func() float64 { return dayH },
	"debtW":  func() float64 { return debtW },
	"dayArgs": func(c dayChart, key string, ds []health.DayCount) dayTmplArgs {
		return dayTmplArgs{C: c, Key: key, Days: ds}
	},
	"retention": func(tps []*maintain.TablePlan) bool {
		for _, tp := range tps {
			if tp.Retention != nil {
				return true
			}
		}
		return false
	},
	"notes": func(tps []*maintain.TablePlan) bool {
		for _, tp := range tps {
			if len(tp.Off)+len(tp.Attention) > 0 {
				return true
			}
		}
		return false
	},
}

type dayTmplArgs struct {
	C    dayChart
	Key  string
	Days []health.DayCount
}

var (
	tableTmpl = template.Must(template.New("table").Funcs(funcs).Parse(tableHTML))
	fleetTmpl = template.Must(template.New("fleet").Funcs(funcs).Parse(fleetHTML))
)

// ageText is a retention in days when it is whole days.
func ageText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d > 0 && d%(24*time.Hour) == 0 {
		n := int(d / (24 * time.Hour))
		if n == 1 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", n)
	}
	return d.String()
}
