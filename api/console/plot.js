// plot.js - the decay curve a search used, drawn as SVG: the time factor
// t(age) = (1 - recency_bias) + recency_bias * d(age) of the scoring formula, with each
// result placed at its age and the decay the server reported for it (explain).

const SVG = "http://www.w3.org/2000/svg";
const DAY = 86400;

/** d(age) for a decay kind ("exponential", "linear", "gaussian", "none", "weibull"). */
export function decayAt(kind, halfLifeS, ageS, shape = 1.5) {
  if (kind === "none" || !(halfLifeS > 0)) return 1;
  const x = ageS / halfLifeS;
  switch (kind) {
    case "linear": return Math.max(0, 1 - x / 2);
    case "gaussian": return 0.5 ** (x * x);
    case "weibull": return 0.5 ** (x ** shape);
    default: return 0.5 ** x;
  }
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmtDays(d) {
  if (d >= 1) return `${+d.toFixed(d < 10 ? 1 : 0)} d`;
  return `${+(d * 24).toFixed(1)} h`;
}

/**
 * Draw into svg: params {kind, halfLifeS, recencyBias, shape}, results [{id, age_seconds,
 * decay}]. Replaces whatever was drawn before.
 */
export function drawDecay(svg, params, results) {
  const W = 420, H = 180, L = 38, R = 14, T = 22, B = 30;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const { kind, halfLifeS, recencyBias, shape } = params;
  const ages = results.map((r) => r.age_seconds).filter((a) => Number.isFinite(a));
  let maxAge = Math.max(halfLifeS > 0 ? 3 * halfLifeS : 0, ...ages, 0) * 1.05;
  if (!(maxAge > 0)) maxAge = 30 * DAY;
  const x = (age) => L + (age / maxAge) * (W - L - R);
  const y = (v) => T + (1 - v) * (H - T - B);
  const t = (d) => (1 - recencyBias) + recencyBias * d;

  for (const v of [0, 0.5, 1]) {
    svg.append(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
    svg.append(el("text", { x: L - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" },
      v.toFixed(1)));
  }
  for (let i = 0; i <= 4; i++) {
    const a = (maxAge * i) / 4;
    svg.append(el("text", { x: x(a), y: H - B + 16, class: "tick", "text-anchor": "middle" },
      fmtDays(a / DAY)));
  }
  svg.append(el("text", { x: W - R, y: H - 2, class: "axis", "text-anchor": "end" }, "age"));
  svg.append(el("text", { x: 4, y: 12, class: "axis" },
    "time factor (1 − recency bias) + recency bias × decay"));
  if (halfLifeS > 0 && halfLifeS <= maxAge) {
    svg.append(el("line", { x1: x(halfLifeS), x2: x(halfLifeS), y1: T, y2: H - B,
      class: "half-life" }));
  }
  const pts = [];
  const N = 120;
  for (let i = 0; i <= N; i++) {
    const a = (maxAge * i) / N;
    pts.push(`${x(a).toFixed(1)},${y(t(decayAt(kind, halfLifeS, a, shape))).toFixed(1)}`);
  }
  svg.append(el("polyline", { points: pts.join(" "), class: "curve" }));
  for (const r of results) {
    if (!Number.isFinite(r.age_seconds)) continue;
    const d = Number.isFinite(r.decay) ? r.decay : decayAt(kind, halfLifeS, r.age_seconds, shape);
    const dot = el("circle", { cx: x(Math.min(r.age_seconds, maxAge)), cy: y(t(d)), r: 4,
      class: "dot" });
    dot.append(el("title", {}, `${r.id}: age ${fmtDays(r.age_seconds / DAY)}, decay ${d.toFixed(4)}`));
    svg.append(dot);
  }
}
