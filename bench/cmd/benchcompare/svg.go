package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// bar is one bar of the chart.
type bar struct {
	label string
	ratio float64
	total bool // the geometric mean, drawn apart
	// reference marks the yardstick: not Folio, the HTTP ceiling over
	// PostgreSQL.
	reference bool
}

// svg draws the ratios as horizontal bars on a log scale around 1: right of
// the line Folio is faster, left of it PostgreSQL is. A log scale, because
// a workload ten times slower and one ten times faster are as far from
// even, and ratios here span several powers of ten.
func (c *comparison) svg() []byte {
	var bars []bar
	for _, r := range c.rows {
		bars = append(bars, bar{label: r.workload.Name, ratio: r.ratio})
	}
	for _, r := range c.rows {
		if r.grpc != nil {
			bars = append(bars, bar{label: r.workload.Name + " gRPC", ratio: r.grpcRatio})
		}
	}
	bars = append(bars, bar{label: "geomean", ratio: c.geomean, total: true})
	if c.yardstick != nil && c.yardstickPG != nil && c.yardstickPG.OpsPerSecond() > 0 {
		bars = append(bars, bar{label: "yardstick " + c.yardstick.Workload, ratio: c.yardstick.OpsPerSecond() / c.yardstickPG.OpsPerSecond(), reference: true})
	}
	return drawBars(bars)
}

func drawBars(bars []bar) []byte {
	const (
		width, left, right = 760, 110, 40
		top, rowH, barH    = 56, 30, 18
	)
	lo, hi := 0.0, 0.0 // decades shown: 10^lo to 10^hi
	for _, b := range bars {
		if b.ratio > 0 {
			lo = math.Min(lo, math.Floor(math.Log10(b.ratio)))
			hi = math.Max(hi, math.Ceil(math.Log10(b.ratio)))
		}
	}
	lo, hi = math.Min(lo, -1), math.Max(hi, 1)
	plotW := float64(width - left - right)
	x := func(r float64) float64 { return left + (math.Log10(r)-lo)/(hi-lo)*plotW }
	height := top + rowH*len(bars) + 40

	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="%d" y="22" font-size="15" font-weight="bold">Folio / PostgreSQL operations per second (log scale; right of 1: Folio faster)</text>`+"\n", left)
	fmt.Fprintf(&s, `<text x="%d" y="40" font-size="11" fill="#555">red: PostgreSQL faster · green: Folio faster · blue: geometric mean · grey: trivial HTTP handler over PostgreSQL</text>`+"\n", left)
	bottom := top + rowH*len(bars)
	for d := lo; d <= hi; d++ {
		r := math.Pow(10, d)
		stroke, w := "#ccc", 1
		if d == 0 {
			stroke, w = "#333", 2
		}
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%d"/>`+"\n", x(r), top-8, x(r), bottom, stroke, w)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", x(r), bottom+18, tickLabel(r))
	}
	for i, b := range bars {
		y := top + rowH*i
		style := ""
		switch {
		case b.total:
			style = ` font-weight="bold"`
		case b.reference:
			style = ` font-style="italic" fill="#555"`
		}
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end"%s>%s</text>`+"\n", left-10, y+barH-4, style, html.EscapeString(b.label))
		if b.ratio <= 0 {
			fmt.Fprintf(&s, `<text x="%.1f" y="%d" fill="#555">no result</text>`+"\n", x(1)+6, y+barH-4)
			continue
		}
		x0, x1 := x(1), x(b.ratio)
		fill, anchor, tx := "#2e7d32", "start", x1+5
		if b.ratio < 1 {
			x0, x1 = x1, x0
			fill, anchor, tx = "#c62828", "end", x0-5
		}
		switch {
		case b.total:
			fill = "#1565c0"
		case b.reference:
			fill = "#9e9e9e"
		}
		fmt.Fprintf(&s, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y, math.Max(x1-x0, 1), barH, fill)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`+"\n", tx, y+barH-4, anchor, fmtRatio(b.ratio))
	}
	s.WriteString("</svg>\n")
	return []byte(s.String())
}

func tickLabel(r float64) string {
	if r >= 1 {
		return fmt.Sprintf("%g×", r)
	}
	return fmt.Sprintf("1/%g", 1/r)
}
