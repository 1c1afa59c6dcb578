// A small SVG chart (no dependency): latency per HTTP case, small chain against large chain. Each case gets
// two bars (p50) with a thin whisker to p99, on a log scale so 0.5 ms and 50 ms both read.

export interface PlotRow {
  name: string;
  small?: { p50: number; p99: number };
  large?: { p50: number; p99: number };
}

const COLORS = { small: '#7aa6d8', large: '#d9822b' };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function latencySvg(rows: PlotRow[], labels: { title: string; small: string; large: string }): string {
  const labelWidth = 430;
  const plotWidth = 520;
  const barHeight = 9;
  const rowHeight = 2 * barHeight + 10;
  const top = 58;
  const height = top + rows.length * rowHeight + 40;
  const width = labelWidth + plotWidth + 30;
  const values = rows.flatMap((r) => [r.small?.p99, r.large?.p99, r.small?.p50, r.large?.p50]);
  const max = Math.max(1, ...values.filter((v): v is number => v !== undefined && v > 0));
  const minLog = Math.log10(0.1);
  const maxLog = Math.log10(10 ** Math.ceil(Math.log10(max)));
  const x = (ms: number) =>
    labelWidth + ((Math.log10(Math.max(ms, 0.1)) - minLog) / (maxLog - minLog)) * plotWidth;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">${escapeXml(labels.title)}</text>`,
    `<rect x="10" y="32" width="12" height="10" fill="${COLORS.small}"/>`,
    `<text x="27" y="41">${escapeXml(labels.small)}</text>`,
    `<rect x="${labelWidth / 2 + 40}" y="32" width="12" height="10" fill="${COLORS.large}"/>`,
    `<text x="${labelWidth / 2 + 57}" y="41">${escapeXml(labels.large)}</text>`,
    `<text x="${labelWidth + plotWidth}" y="41" text-anchor="end">bar: p50, whisker: p99 (ms, log scale)</text>`,
  ];
  for (let decade = Math.round(minLog); decade <= maxLog; decade++) {
    for (const m of [1, 2, 5]) {
      const ms = m * 10 ** decade;
      if (Math.log10(ms) > maxLog + 1e-9) continue;
      const gx = x(ms).toFixed(1);
      out.push(
        `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${height - 34}" stroke="${m === 1 ? '#bbb' : '#eee'}"/>`,
      );
      if (m === 1 || m === 5)
        out.push(`<text x="${gx}" y="${height - 20}" text-anchor="middle" fill="#555">${ms}</text>`);
    }
  }
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    out.push(
      `<text x="${labelWidth - 8}" y="${y + barHeight + 4}" text-anchor="end">${escapeXml(row.name)}</text>`,
    );
    (['small', 'large'] as const).forEach((which, j) => {
      const v = row[which];
      if (!v) return;
      const by = y + j * barHeight;
      out.push(
        `<rect x="${labelWidth}" y="${by}" width="${(x(v.p50) - labelWidth).toFixed(1)}" height="${barHeight - 1}" fill="${COLORS[which]}"><title>${which}: p50 ${v.p50} ms, p99 ${v.p99} ms</title></rect>`,
        `<line x1="${x(v.p50).toFixed(1)}" y1="${by + barHeight / 2}" x2="${x(v.p99).toFixed(1)}" y2="${by + barHeight / 2}" stroke="${COLORS[which]}" stroke-width="1.5"/>`,
        `<line x1="${x(v.p99).toFixed(1)}" y1="${by + 1}" x2="${x(v.p99).toFixed(1)}" y2="${by + barHeight - 2}" stroke="${COLORS[which]}" stroke-width="1.5"/>`,
      );
    });
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
