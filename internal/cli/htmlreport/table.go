package htmlreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/icectl/icectl/health"
)

// Chart geometry, in SVG user units.
const (
	histW, histH = 560, 200 // the table's size histogram
	miniW, miniH = 150, 34  // a partition's histogram
	ratioW       = 150      // a partition's deleted-row ratio bar
	dayW, dayH   = 1000, 140
	kindW        = 420
)

// bar is one bar of a chart: its box, its class (colour) and what it
// shows, for the label and the tooltip.
type bar struct {
	X, Y, W, H float64
	Class      string
	Label      string
	Title      string
	Count      int64
	Note       string
}

type tablePage struct {
	R         health.Report
	Generated string
	Oldest    string
	Hist      []bar // the table's histogram
	SmallText string
	Kinds     []bar
	Parts     []partRow
	SnapDays  dayChart
	LogDays   dayChart
}

type partRow struct {
	I     int
	P     health.Partition
	Name  string
	Hist  []bar
	Ratio bar
	Limit float64 // x of the threshold mark on the ratio bar
	Over  bool
}

type dayChart struct {
	Bars  []bar
	First string
	Last  string
	Total int
	// Growth is the running total as an SVG polyline's points, scaled
	// to the chart's height: how the count grew.
	Growth string
	End    float64 // the right edge of the last bar
}

// Table writes the page of one table's health report.
func Table(w io.Writer, r health.Report) error {
	p := tablePage{R: r, Generated: timeText(r.NowMS)}
	if r.Snapshots.OldestMS != nil {
		p.Oldest = timeText(*r.Snapshots.OldestMS)
	}
	th := r.Thresholds
	p.Hist = histogram(r.Data.Histogram, r.SmallFileBytes, th.TargetFileSize, histW, histH-30)
	p.Kinds = kinds(r.Deletes)
	for i, part := range r.Partitions {
		row := partRow{I: i, P: part, Name: part.Partition,
			Hist: histogram(part.Data.Histogram, r.SmallFileBytes, th.TargetFileSize, miniW, miniH)}
		if row.Name == "" {
			row.Name = "(unpartitioned)"
		}
		ratio := min(part.Deletes.DeleteRatio, 1)
		row.Over = part.Data.Records > 0 && part.Deletes.DeleteRatio >= th.DeleteRatio
		row.Ratio = bar{W: ratio * ratioW, H: 14, Class: "ok"}
		if row.Over {
			row.Ratio.Class = "bad"
		}
		row.Limit = min(th.DeleteRatio, 1) * ratioW
		p.Parts = append(p.Parts, row)
	}
	p.SnapDays = days(r.Snapshots.PerDay)
	p.LogDays = days(r.MetadataFiles.LogPerDay)
	return tableTmpl.Execute(w, p)
}

// histogram lays out size buckets as bars over width w and height h:
// buckets wholly below the small-file size are "bad", the one holding it
// "warn", and the one holding the target is labelled so.
func histogram(bs []health.Bucket, small, target int64, w, h float64) []bar {
	if len(bs) == 0 {
		return nil
	}
	most := 1
	for _, b := range bs {
		most = max(most, b.Files)
	}
	step := w / float64(len(bs))
	out := make([]bar, len(bs))
	for i, b := range bs {
		bh := float64(b.Files) / float64(most) * h
		if b.Files > 0 {
			bh = max(bh, 1)
		}
		class := "ok"
		switch {
		case b.MaxBytes != nil && *b.MaxBytes <= small:
			class = "bad"
		case b.MinBytes < small:
			class = "warn"
		}
		label := b.Label
		if target >= b.MinBytes && (b.MaxBytes == nil || target < *b.MaxBytes) {
			label += " (target)"
		}
		out[i] = bar{X: float64(i)*step + 2, Y: h - bh, W: step - 4, H: bh, Class: class, Label: label, Count: int64(b.Files),
			Title: fmt.Sprintf("%s: %d files", b.Label, b.Files)}
	}
	return out
}

// kinds lays out the delete files' counts by kind as horizontal bars.
func kinds(d health.DeleteStats) []bar {
	ks := []struct {
		name string
		n    int
	}{{"position deletes", d.Position.Count}, {"deletion vectors", d.DV.Count}, {"equality deletes", d.Equality.Count}}
	most := 1
	for _, k := range ks {
		most = max(most, k.n)
	}
	out := make([]bar, len(ks))
	for i, k := range ks {
		bw := float64(k.n) / float64(most) * (kindW - 150)
		if k.n > 0 {
			bw = max(bw, 1)
		}
		out[i] = bar{X: 140, Y: float64(i) * 26, W: bw, H: 18, Class: []string{"pos", "dv", "eq"}[i], Label: k.name,
			Title: fmt.Sprintf("%s: %d", k.name, k.n)}
	}
	return out
}

// days lays out counts per day as bars, one per day that has any.
func days(ds []health.DayCount) dayChart {
	c := dayChart{}
	if len(ds) == 0 {
		return c
	}
	c.First, c.Last = ds[0].Day, ds[len(ds)-1].Day
	most := 1
	for _, d := range ds {
		most = max(most, d.Count)
		c.Total += d.Count
	}
	// A bar is at most 40 wide: a few days do not fill the chart.
	step := min(float64(dayW)/float64(len(ds)), 40)
	h := float64(dayH - 20)
	var pts strings.Builder
	run := 0
	for i, d := range ds {
		bh := max(float64(d.Count)/float64(most)*h, 1)
		c.Bars = append(c.Bars, bar{X: float64(i) * step, Y: h - bh, W: max(step-1, 0.5), H: bh, Class: "ok",
			Title: fmt.Sprintf("%s: %d", d.Day, d.Count)})
		run += d.Count
		fmt.Fprintf(&pts, "%.1f,%.1f ", float64(i)*step+step/2, h-float64(run)/float64(c.Total)*h)
	}
	c.Growth = strings.TrimSpace(pts.String())
	c.End = float64(len(ds)) * step
	return c
}

func timeText(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
}
