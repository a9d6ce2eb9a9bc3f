package main

import (
	"fmt"
	"html"
	"math"
	"net/http"
	"strings"

	"github.com/batonhq/baton/handoff"
)

// edge is one transition of the transfer machine.
type edge struct{ from, to, label string }

// machineEdges merges the machine's transition table into one edge per
// pair of states, the triggers (and their guards) as its label.
func machineEdges(g handoff.Graph) []edge {
	var out []edge
	idx := map[[2]string]int{}
	for _, e := range g.Edges {
		from, to := string(e.From), string(e.To)
		if from == "" {
			from = "new"
		}
		label := string(e.Trigger)
		if e.Guard != "" {
			label += " [" + e.Guard + "]"
		}
		k := [2]string{from, to}
		if i, seen := idx[k]; seen {
			out[i].label += ", " + label
			continue
		}
		idx[k] = len(out)
		out = append(out, edge{from, to, label})
	}
	return out
}

// statePos places the states on a fixed layout: the happy path left to
// right, the decision states below it.
var statePos = map[string][2]float64{
	"new":         {60, 70},
	"stopping":    {210, 70},
	"generating":  {380, 70},
	"starting":    {550, 70},
	"completed":   {720, 70},
	"failed":      {380, 250},
	"interrupted": {550, 250},
	"cancelled":   {210, 250},
}

// machineSVG draws the transfer machine. Each state is a group with the
// class "state" and data-state, so the page can highlight the current one.
func (s *server) machineSVG(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write([]byte(renderMachine(machineEdges(handoff.MachineGraph()))))
}

func renderMachine(edges []edge) string {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 330" role="img" aria-labelledby="machine-title">` + "\n")
	b.WriteString(`<title id="machine-title">The session-transfer state machine</title>` + "\n")
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>` + "\n")
	for _, e := range edges {
		p, ok1 := statePos[e.from]
		q, ok2 := statePos[e.to]
		if !ok1 || !ok2 {
			continue
		}
		title := html.EscapeString(e.from + " → " + e.to + ": " + e.label)
		if e.from == e.to {
			fmt.Fprintf(&b, `<path class="edge" d="M%.0f,%.0f c-30,-60 30,-60 14,-18" fill="none" stroke="#999" marker-end="url(#arrow)"><title>%s</title></path>`+"\n", p[0]-8, p[1]-18, title)
			continue
		}
		// Shorten the segment to the ellipses' edges; bend reverse edges.
		dx, dy := q[0]-p[0], q[1]-p[1]
		d := math.Hypot(dx, dy)
		ux, uy := dx/d, dy/d
		x1, y1 := p[0]+ux*62, p[1]+uy*22
		x2, y2 := q[0]-ux*62, q[1]-uy*22
		mx, my := (x1+x2)/2-uy*18, (y1+y2)/2+ux*18
		fmt.Fprintf(&b, `<path class="edge" d="M%.0f,%.0f Q%.0f,%.0f %.0f,%.0f" fill="none" stroke="#999" marker-end="url(#arrow)"><title>%s</title></path>`+"\n", x1, y1, mx, my, x2, y2, title)
	}
	for _, name := range []string{"new", "stopping", "generating", "starting", "completed", "failed", "interrupted", "cancelled"} {
		p := statePos[name]
		fmt.Fprintf(&b, `<g class="state" data-state="%s"><ellipse cx="%.0f" cy="%.0f" rx="60" ry="22" fill="#fff" stroke="#333"/><text x="%.0f" y="%.0f" text-anchor="middle" font-family="sans-serif" font-size="13">%s</text></g>`+"\n", name, p[0], p[1], p[0], p[1]+4, name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
