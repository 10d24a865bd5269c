/**
 * A small accessible SVG line chart: y ticks from 0 (or fixed ticks for a state gauge), time ticks
 * back from now, one line per series with its own colour and dash (told apart without colour too),
 * and a legend. For assistive technology the SVG is one `role="img"` whose label summarises the
 * latest values, and a visually hidden table lists them.
 */
import type { CSSProperties } from 'preact';
import type { Lines } from './rates.js';
import { latestValues } from './rates.js';
import { agoLabel, linear, linePath, niceTicks, timeTicks } from './scale.js';
import { type ChartSpec, formatValue } from './series.js';

export interface LineChartProps {
  readonly spec: ChartSpec;
  readonly lines: Lines;
  /** The time span drawn: the oldest and newest scrape of the history. */
  readonly fromMs: number;
  readonly toMs: number;
  /** No data can exist yet (a rate needs two scrapes): say so instead of the chart's empty note. */
  readonly waiting?: boolean;
}

/** Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), with dashes as a second cue. */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3'];
const WIDTH = 600;
const HEIGHT = 200;
const MARGIN = { top: 10, right: 16, bottom: 26, left: 64 };

/** Hidden from sight but read by screen readers (the usual clip pattern). */
export const VISUALLY_HIDDEN: CSSProperties = {
  position: 'absolute',
  width: '1px',
  height: '1px',
  padding: 0,
  margin: '-1px',
  overflow: 'hidden',
  clip: 'rect(0, 0, 0, 0)',
  whiteSpace: 'nowrap',
  border: 0,
};

const styleOf = (index: number) => ({
  stroke: COLOURS[index % COLOURS.length]!,
  dash: DASHES[Math.floor(index / COLOURS.length) % DASHES.length]!,
});

export function LineChart({ spec, lines, fromMs, toMs, waiting }: LineChartProps) {
  const latest = latestValues(lines);
  const headingId = `metrics-chart-${spec.id}`;
  const finite = lines.lines.flatMap((line) => line.values.filter((value): value is number => value !== null && Number.isFinite(value)));
  const hasData = finite.length > 0;
  const summary =
    latest.length > 0
      ? `${spec.title}, latest: ${latest.map(({ name, value }) => `${name} ${formatValue(spec, value)}`).join(', ')}`
      : `${spec.title}: no current value`;
  const yTicks = spec.ticks ? [...spec.ticks] : niceTicks(Math.max(0, ...finite));
  const yMax = yTicks[yTicks.length - 1]!;
  const yMin = Math.min(0, yTicks[0]!);
  const x = linear([fromMs, toMs], [MARGIN.left, WIDTH - MARGIN.right]);
  const y = linear([yMin, yMax], [HEIGHT - MARGIN.bottom, MARGIN.top]);

  return (
    <figure class="metrics-chart" aria-labelledby={headingId} style={{ margin: '0 0 1.5rem', position: 'relative' }}>
      <figcaption>
        <h3 id={headingId} style={{ margin: '0 0 0.25rem', fontSize: '1rem' }}>
          {spec.title}
        </h3>
        <p style={{ margin: '0 0 0.5rem' }}>{spec.description}</p>
      </figcaption>
      {!hasData ? (
        <p class="metrics-chart-empty">{waiting ? 'Waiting for the next scrape…' : spec.empty}</p>
      ) : (
        <>
          <svg
            role="img"
            aria-label={summary}
            viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
            width="100%"
            style={{ maxWidth: `${WIDTH}px`, display: 'block' }}
          >
            <g font-size="11" fill="currentColor">
              {yTicks.map((tick) => (
                <g key={`y${tick}`}>
                  <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(tick)} y2={y(tick)} stroke="currentColor" stroke-opacity="0.15" />
                  <text x={MARGIN.left - 6} y={y(tick)} text-anchor="end" dominant-baseline="middle">
                    {formatValue(spec, tick)}
                  </text>
                </g>
              ))}
              {timeTicks(fromMs, toMs).map((ago) => (
                <text key={`x${ago}`} x={x(toMs - ago)} y={HEIGHT - 8} text-anchor={ago === 0 ? 'end' : 'middle'}>
                  {agoLabel(ago)}
                </text>
              ))}
              <line
                x1={MARGIN.left}
                x2={MARGIN.left}
                y1={MARGIN.top}
                y2={HEIGHT - MARGIN.bottom}
                stroke="currentColor"
                stroke-opacity="0.5"
              />
            </g>
            {lines.lines.map((line, index) => {
              const { stroke, dash } = styleOf(index);
              return (
                <path
                  key={line.name}
                  d={linePath(lines.times, line.values, x, y)}
                  fill="none"
                  stroke={stroke}
                  stroke-width="2"
                  stroke-dasharray={dash || undefined}
                  stroke-linecap="round"
                  stroke-linejoin="round"
                />
              );
            })}
          </svg>
          <ul
            aria-hidden="true"
            class="metrics-chart-legend"
            style={{ listStyle: 'none', padding: 0, margin: '0.25rem 0', display: 'flex', flexWrap: 'wrap', gap: '0.25rem 1rem' }}
          >
            {lines.lines.map((line, index) => {
              const { stroke, dash } = styleOf(index);
              const value = latest.find((entry) => entry.name === line.name)?.value;
              return (
                <li key={line.name}>
                  <svg aria-hidden="true" width="24" height="10" style={{ marginRight: '0.25rem' }}>
                    <line x1="1" x2="23" y1="5" y2="5" stroke={stroke} stroke-width="2" stroke-dasharray={dash || undefined} />
                  </svg>
                  {line.name}
                  {value === undefined ? '' : `: ${formatValue(spec, value)}`}
                </li>
              );
            })}
          </ul>
          <table style={VISUALLY_HIDDEN}>
            <caption>{spec.title}: latest values</caption>
            <thead>
              <tr>
                <th scope="col">Series</th>
                <th scope="col">Latest value</th>
              </tr>
            </thead>
            <tbody>
              {latest.map(({ name, value }) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{formatValue(spec, value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </figure>
  );
}
