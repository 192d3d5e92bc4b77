// A small SVG line chart (throughput against concurrency) for BENCHMARKS.md; no library needed
// for two lines on four points.
export function throughputChart(points: { connections: number; bare: number; full: number }[]): string {
  const W = 640,
    H = 320,
    L = 70,
    R = 20,
    T = 30,
    B = 50;
  const max = Math.max(...points.flatMap((p) => [p.bare, p.full])) * 1.1;
  const x = (i: number) => L + (i * (W - L - R)) / Math.max(1, points.length - 1);
  const y = (v: number) => T + (H - T - B) * (1 - v / max);
  const line = (key: "bare" | "full", color: string) =>
    `<polyline fill="none" stroke="${color}" stroke-width="2.5" points="${points.map((p, i) => `${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(" ")}"/>` +
    points
      .map((p, i) => `<circle cx="${x(i).toFixed(1)}" cy="${y(p[key]).toFixed(1)}" r="4" fill="${color}"/>`)
      .join("");
  const ticks = Array.from({ length: 5 }, (_, i) => (max * i) / 4);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">POST /v1/log throughput (requests/s) by concurrent connections</text>
${ticks.map((t) => `<line x1="${L}" x2="${W - R}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e5e7eb"/><text x="${L - 8}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${Math.round(t).toLocaleString("en-US")}</text>`).join("\n")}
${points.map((p, i) => `<text x="${x(i).toFixed(1)}" y="${H - B + 18}" text-anchor="middle">${p.connections}</text>`).join("")}
<text x="${W / 2}" y="${H - 10}" text-anchor="middle">connections</text>
${line("bare", "#9ca3af")}
${line("full", "#4f46e5")}
<rect x="${L + 10}" y="${T + 4}" width="12" height="12" fill="#9ca3af"/><text x="${L + 28}" y="${T + 14}">bare Bun.serve (parse JSON, answer JSON)</text>
<rect x="${L + 10}" y="${T + 22}" width="12" height="12" fill="#4f46e5"/><text x="${L + 28}" y="${T + 32}">Signalboard, synchronous=full (acknowledged after commit)</text>
</svg>
`;
}
