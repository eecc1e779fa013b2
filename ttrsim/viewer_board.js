// The board as ttrsim draws it: the game viewer (viewer.html) and the play page
// (play/page.html) both include this script, so a board looks the same in both.
// drawBoard(svg, B) draws B (the viewer data's "board": cities, coords, cards, routes,
// stations) once into the <svg> and returns {routes, stations, paint(owner, station)};
// paint recolours the claimed routes and the stations of a position.
"use strict";
const SEAT = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd"];
const CARD = {red: "#e53935", blue: "#1e63d6", green: "#2e9d3a", yellow: "#f2c418", black: "#222",
  white: "#f4f4f4", orange: "#f28c1b", pink: "#e86fb4", gray: "#9a9a9a", wild: "#c9b6e4"};
const SVGNS = "http://www.w3.org/2000/svg";
{ // the drawing's own style, once per page
  const style = document.createElement("style");
  style.textContent = ".names text { font-size: 1.6px; fill: #333; pointer-events: none; }\n" +
    ".card { display: inline-block; min-width: 16px; padding: 0 3px; margin: 1px; " +
    "border: 1px solid #999; border-radius: 3px; text-align: center; font-size: 12px; }";
  document.head.appendChild(style);
}

function cardColor(name) {
  if (CARD[name]) return CARD[name];
  let h = 0;
  for (const ch of String(name)) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return `hsl(${h},60%,50%)`;
}
function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function esc(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}
// cards as coloured chips: counts[t] cards of type t, named names[t] (wild last)
function cardsHtml(counts, names) {
  return counts.map((n, t) => n ? `<span class="card" style="background:${cardColor(names[t])};` +
    `color:${["black", "blue", "green", "red"].includes(names[t]) ? "#fff" : "#000"}" title="${esc(names[t])}">` +
    `${n}</span>` : "").join("");
}

function drawBoard(map, B) {
  const X = i => B.coords[i][0], Y = i => 100 - B.coords[i][1];
  { // frame the board's cities
    const xs = B.coords.map(c => c[0]), ys = B.coords.map(c => 100 - c[1]);
    const x0 = Math.min(...xs) - 3, y0 = Math.min(...ys) - 4;
    map.setAttribute("viewBox", `${x0} ${y0} ${Math.max(...xs) - x0 + 8} ${Math.max(...ys) - y0 + 3}`);
  }
  const routeEls = [];
  const layer = el("g", {}, map);
  B.routes.forEach((r, i) => {
    let x1 = X(r.a), y1 = Y(r.a), x2 = X(r.b), y2 = Y(r.b);
    if (r.partner >= 0) {             // the two halves of a double side by side
      const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy) || 1;
      const side = i < r.partner ? 1 : -1, off = 0.55 * side;
      x1 += -dy / len * off; x2 += -dy / len * off; y1 += dx / len * off; y2 += dx / len * off;
    }
    const g = el("g", {"data-route": r.id}, layer);
    el("title", {}, g).textContent = r.name;
    const base = el("line", {x1, y1, x2, y2, stroke: cardColor(r.color), "stroke-width": 0.55,
      "stroke-opacity": 0.6, "stroke-linecap": "round"}, g);
    if (r.tunnel) el("line", {x1, y1, x2, y2, stroke: "#555", "stroke-width": 1.1, "stroke-dasharray": "0.8 0.8",
      fill: "none", "stroke-opacity": 0.6}, g).classList.add("tunnel");
    const casing = el("line", {x1, y1, x2, y2, stroke: "none", "stroke-width": 1.5, "stroke-linecap": "round"}, g);
    const own = el("line", {x1, y1, x2, y2, stroke: "none", "stroke-width": 1.1, "stroke-linecap": "round",
      class: "owned"}, g);
    if (r.ferry) el("circle", {cx: (x1 + x2) / 2, cy: (y1 + y2) / 2, r: 0.75, fill: "none",
      stroke: "#333", "stroke-width": 0.25, class: "ferry"}, g);
    routeEls.push({base, own, casing, g});
  });
  const stationEls = [], labels = [];
  B.cities.forEach((name, i) => {
    const g = el("g", {class: "city", "data-city": i}, map);
    el("circle", {cx: X(i), cy: Y(i), r: 0.8, fill: "#fff", stroke: "#333", "stroke-width": 0.25}, g);
    stationEls.push(el("rect", {x: X(i) - 0.9, y: Y(i) - 0.9, width: 1.8, height: 1.8, fill: "none",
      stroke: "none", class: "station"}, map));
  });
  // the names in a layer of their own, above the board (a page that draws more on the
  // board moves it up again: names are read over everything)
  const names = el("g", {class: "names"}, map);
  B.cities.forEach((name, i) => {
    const t = el("text", {x: X(i) + 1, y: Y(i) - 0.9, "data-city": i}, names);
    t.textContent = name;
    labels.push(t);
  });
  placeLabels(B, labels, X, Y);
  function paint(owner, station) {
    owner.forEach((q, i) => {
      routeEls[i].own.setAttribute("stroke", q >= 0 ? SEAT[q] : "none");
      routeEls[i].casing.setAttribute("stroke", q >= 0 ? "#111" : "none");
      routeEls[i].g.setAttribute("data-owner", q);
    });
    station.forEach((q, i) => {
      stationEls[i].setAttribute("fill", q >= 0 ? SEAT[q] : "none");
      stationEls[i].setAttribute("stroke", q >= 0 ? "#000" : "none");
      stationEls[i].setAttribute("stroke-width", 0.2);
    });
  }
  return {routes: routeEls, stations: stationEls, names, paint};
}

// Each city's name put where it covers the fewest routes, cities and names already placed:
// eight places around the city are tried, the most crowded cities first (a greedy
// placement, as map labelling usually starts). Name widths are estimated from their length
// (0.6 of the font size a character, a little more than
// the sans-serif fonts draw) so that a page drawn while hidden places them alike.
function placeLabels(B, labels, X, Y) {
  const H = 1.6, W = n => 0.6 * H * n;   // font size; the estimated width of n characters
  // [dx, dy of the text's anchor, text-anchor]: right above (the old place), right, right
  // below, below, left below, left, left above, above
  const PLACES = [[1, -0.9, "start"], [1.2, 0.55, "start"], [1, 2, "start"], [0, 2.5, "middle"],
    [-1, 2, "end"], [-1.2, 0.55, "end"], [-1, -0.9, "end"], [0, -1.3, "middle"]];
  const segs = B.routes.map(r => [X(r.a), Y(r.a), X(r.b), Y(r.b), r.a, r.b]);
  const degree = B.cities.map(() => 0);
  B.routes.forEach(r => { degree[r.a]++; degree[r.b]++; });
  const box = (i, p) => {
    const w = W(B.cities[i].length), x = X(i) + p[0], y = Y(i) + p[1];
    const x0 = p[2] === "start" ? x : p[2] === "end" ? x - w : x - w / 2;
    return [x0, y - 0.95 * H, x0 + w, y + 0.25 * H];
  };
  const cuts = (b, s) => {       // does segment s cross box b (Liang-Barsky clipping)?
    let t0 = 0, t1 = 1;
    const dx = s[2] - s[0], dy = s[3] - s[1];
    for (const [p, q] of [[-dx, s[0] - b[0]], [dx, b[2] - s[0]], [-dy, s[1] - b[1]], [dy, b[3] - s[1]]]) {
      if (p === 0) { if (q < 0) return false; continue; }
      const t = q / p;
      if (p < 0) { if (t > t1) return false; if (t > t0) t0 = t; }
      else { if (t < t0) return false; if (t < t1) t1 = t; }
    }
    return true;
  };
  const xs = B.coords.map(c => c[0]), ys = B.coords.map(c => 100 - c[1]);   // drawBoard's frame
  const frame = [Math.min(...xs) - 3, Math.min(...ys) - 4, Math.max(...xs) + 8, Math.max(...ys) + 3];
  const mids = segs.map(s => [(s[0] + s[2]) / 2 - 0.75, (s[1] + s[3]) / 2 - 0.75,
                               (s[0] + s[2]) / 2 + 0.75, (s[1] + s[3]) / 2 + 0.75]);
  const meet = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  const placed = [];
  const order = B.cities.map((_, i) => i).sort((a, b) => degree[b] - degree[a] || a - b);
  for (const i of order) {
    let best = null, bestCost = Infinity;
    PLACES.forEach((p, k) => {
      const b = box(i, p);
      let cost = 0.01 * k;                         // ties keep the old place
      if (b[0] < frame[0] || b[1] < frame[1] || b[2] > frame[2] || b[3] > frame[3]) cost += 50;
      for (const s of segs) if (s[4] !== i && s[5] !== i && cuts(b, s)) cost += 1;
        else if ((s[4] === i || s[5] === i) && cuts(b, s)) cost += 0.6;   // its own routes
      B.coords.forEach((_, j) => { if (j !== i && meet(b, [X(j) - 0.9, Y(j) - 0.9, X(j) + 0.9, Y(j) + 0.9])) cost += 8; });
      for (const o of placed) if (meet(b, o)) cost += 12;
      for (const m of mids) if (meet(b, m)) cost += 1;   // a length disc or a ferry ring
      if (cost < bestCost) { bestCost = cost; best = [p, b]; }
    });
    placed.push(best[1]);
    const t = labels[i];
    t.setAttribute("x", X(i) + best[0][0]);
    t.setAttribute("y", Y(i) + best[0][1]);
    t.setAttribute("text-anchor", best[0][2]);
  }
}
