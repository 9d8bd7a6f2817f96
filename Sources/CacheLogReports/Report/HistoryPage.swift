import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CacheLog
import FeedCacheLog

/// The report's page (``HistoryReport/html()``): one HTML file with its CSS, its script and its
/// data inline, so it opens from `file://` with no network. The summary table is written here, so
/// it reads without the script; the timeline, its axis, the tooltips and the slider are drawn by
/// the script from the embedded data (``HistoryReport/json()``), which keeps the file small (the
/// drawing is not in the file).
///
/// Every key reaches the page as text only: escaped for HTML in the table (``HTMLText``), as
/// JSON with every `<` escaped in the data, and set with `textContent`/`setAttribute` by the script.
enum HistoryPage {
    static func html(_ report: HistoryReport) -> String {
        let data = HTMLText.scriptJSON(report.json())
        let window = "\(TimestampText.string(report.window.start)) – \(TimestampText.string(report.window.end))"
        var page = ""
        page.reserveCapacity(data.utf8.count + report.keys.count * 400 + style.utf8.count + script.utf8.count + 4096)
        page += """
            <!doctype html>
            <html lang="en" data-ready="0" data-errors="">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>cachelog report: \(HTMLText.escaped(report.selection)), \(window)</title>
            <script>\(errorRecorder)</script>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <h1>Cache history</h1>
            <p class="meta">\(HTMLText.escaped(report.selection)) · \(window) (UTC) · \(summaryLine(report)) · staleness judged by \(HTMLText.escaped(report.judgedBy))</p>
            </header>
            \(legend)
            <div class="controls">
            <label>Keys containing <input id="filter" type="search" placeholder="filter" autocomplete="off"></label>
            <label class="scrub">Moment <input id="slider" type="range" min="0" max="1000" step="1" value="1000"></label>
            <output id="moment"></output> <span id="counts"></span>
            </div>
            <div id="timeline"><noscript>The timeline needs JavaScript; the table below does not.</noscript></div>
            <h2>Summary</h2>
            <table id="summary">
            <thead><tr><th>Key</th><th>Events</th><th>put</th><th>delete</th><th>expire</th><th>Last refresh</th><th>Fresh</th><th>Stale</th><th>Missing</th><th>At the moment</th></tr></thead>
            <tbody>

            """
        for key in report.keys { page += row(key) }
        page += """
            </tbody>
            </table>
            \(report.keys.isEmpty ? "<p class=\"empty\">No events in this window.</p>\n" : "")<div id="tip" role="tooltip" hidden></div>
            <script type="application/json" id="history">\(data)</script>
            <script>\(script)</script>
            </body>
            </html>

            """
        return page
    }

    private static func summaryLine(_ report: HistoryReport) -> String {
        let events = report.keys.reduce(0) { $0 + $1.puts + $1.deletes + $1.expires }
        return "\(counted(report.keys.count, "key")), \(counted(events, "event")) in the window"
    }

    private static func row(_ key: HistoryReport.Key) -> String {
        let name = HTMLText.escaped(key.key)
        let events = key.puts + key.deletes + key.expires
        let corrupt = key.corrupt > 0 ? " <span class=\"corrupt\">+ \(counted(key.corrupt, "corrupt record"))</span>" : ""
        let state = key.state.name
        func time(_ seconds: Double) -> String { "<td class=\"num\" data-seconds=\"\(JSONText.number(seconds))\">\(DurationText.string(seconds))</td>" }
        return "<tr data-key=\"\(name)\" data-events=\"\(events)\"><td class=\"key\">\(name)</td><td class=\"num\">\(events)\(corrupt)</td>"
            + "<td class=\"num\">\(key.puts)</td><td class=\"num\">\(key.deletes)</td><td class=\"num\">\(key.expires)</td>"
            + "<td>\(key.lastRefresh.map(TimestampText.string) ?? "never")</td>"
            + time(key.fresh) + time(key.stale) + time(key.missing)
            + "<td class=\"now\" data-state=\"\(state)\"><span class=\"chip \(state)\"></span>\(state == "none" ? "no cache yet" : state)</td></tr>\n"
    }

    private static let legend = """
        <div class="legend" aria-label="legend">
        <span><svg width="28" height="12"><rect class="band fresh" width="28" height="12"/></svg>fresh</span>
        <span><svg width="28" height="12"><rect class="band stale" width="28" height="12"/></svg>stale (past its max age)</span>
        <span><svg width="28" height="12"><rect class="band missing" width="28" height="12"/></svg>missing (expired or deleted)</span>
        <span><svg width="28" height="12"><rect class="band none" y="5" width="28" height="2"/></svg>no cache yet</span>
        <span><svg width="12" height="12"><path class="mark put" d="M6 1v10"/></svg>put (a save)</span>
        <span><svg width="12" height="12"><path class="mark delete" d="M2 2l8 8m0-8l-8 8"/></svg>delete</span>
        <span><svg width="12" height="12"><path class="mark expire" d="M6 1l5 5l-5 5l-5-5z"/></svg>expire</span>
        <span class="hint">Hover for details; where a key has more events than columns, a mark counts a column's events.</span>
        </div>
        """

    /// First, so that an error anywhere on the page is recorded where a test (or a person with
    /// the inspector) can read it: the `data-errors` attribute of the root element.
    private static let errorRecorder = #"""
        (function () {
          const errors = [];
          function record(message) {
            errors.push(String(message));
            document.documentElement.setAttribute('data-errors', errors.join(' | '));
          }
          window.addEventListener('error', (event) => record(event.message));
          window.addEventListener('unhandledrejection', (event) => record(event.reason));
          const original = console.error;
          console.error = function (...args) { record(args.join(' ')); original.apply(console, args); };
        })();
        """#

    // Okabe–Ito colours, which stay apart for the common colour-vision deficiencies; missing is
    // hatched as well, so it differs from stale in shape, not only in hue.
    private static let style = #"""
        :root { --fresh: #009e73; --stale: #e69f00; --missing: #d55e00; --put: #0072b2; --delete: #222; --expire: #cc79a7; --label: 240px; }
        body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 20px; color: #1d1d1f; background: #fff; }
        h1 { font-size: 20px; margin: 0 0 2px; } h2 { font-size: 15px; margin: 18px 0 6px; }
        .meta { color: #555; margin: 0 0 8px; }
        .legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; margin-bottom: 8px; }
        .legend span { display: inline-flex; align-items: center; gap: 5px; }
        .legend .hint { color: #666; }
        .controls { display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: center; padding: 6px 0; border-top: 1px solid #ddd; }
        .controls .scrub { flex: 1 1 320px; display: flex; gap: 8px; align-items: center; }
        #slider { flex: 1; }
        #moment { font-variant-numeric: tabular-nums; font-weight: 600; }
        #counts .chip { margin-left: 8px; }
        #timeline { position: relative; max-height: 70vh; overflow: auto; border: 1px solid #ddd; border-radius: 4px; }
        .axis { position: sticky; top: 0; z-index: 2; background: #fff; border-bottom: 1px solid #ccc; display: flex; }
        .axis .corner { flex: 0 0 var(--label); font-size: 11px; color: #666; padding: 4px 6px; box-sizing: border-box; }
        .axis svg text { font-size: 11px; fill: #444; }
        .axis svg line { stroke: #bbb; }
        .row { display: flex; height: 22px; align-items: center; }
        .row:nth-child(even) { background: #f7f7f8; }
        .row.hidden, tr.hidden { display: none; }
        .label { flex: 0 0 var(--label); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding: 0 6px; box-sizing: border-box; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
        .track { display: block; }
        .band.fresh { fill: var(--fresh); } .band.stale { fill: var(--stale); } .band.missing { fill: url(#hatch); } .band.none { fill: #c8c8cc; }
        .mark { fill: none; stroke-width: 1.6; } .mark.put { stroke: var(--put); } .mark.delete { stroke: var(--delete); }
        .mark.expire { fill: var(--expire); stroke: #7a3b63; stroke-width: 0.8; }
        #cursor { position: absolute; top: 0; width: 0; border-left: 2px solid #1d1d1f; pointer-events: none; z-index: 1; }
        #tip { position: fixed; z-index: 5; max-width: 460px; background: #1d1d1f; color: #fff; padding: 6px 8px; border-radius: 4px; font-size: 12px; pointer-events: none; white-space: pre-wrap; overflow-wrap: anywhere; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eee; white-space: nowrap; }
        th { position: sticky; top: 0; background: #fafafa; }
        td.key { font-family: ui-monospace, "DejaVu Sans Mono", monospace; white-space: normal; overflow-wrap: anywhere; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        .corrupt { color: #b00020; }
        .chip { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
        .chip.fresh { background: var(--fresh); } .chip.stale { background: var(--stale); }
        .chip.missing { background: repeating-linear-gradient(45deg, var(--missing) 0 2px, #f4c7ad 2px 4px); } .chip.none { background: #c8c8cc; }
        .empty { color: #555; }
        """#

    /// Draws the timeline from the embedded data and runs the slider and the tooltips.
    private static let script = #"""
        (function () {
          'use strict';
          const data = JSON.parse(document.getElementById('history').textContent);
          const STATES = ['none', 'fresh', 'stale', 'missing'];
          const ROW = 22, STEPS = 1000, SVG = 'http://www.w3.org/2000/svg';
          const timeline = document.getElementById('timeline');
          const slider = document.getElementById('slider');
          const tip = document.getElementById('tip');
          const tableRows = Array.from(document.querySelectorAll('#summary tbody tr'));
          const label = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--label')) || 240;
          const width = Math.max(320, timeline.clientWidth - label - 18);
          const x = (seconds) => data.span > 0 ? seconds / data.span * width : 0;
          const secondsAt = (px) => Math.min(data.span, Math.max(0, px / width * data.span));
          const iso = (seconds) => new Date(Math.round((data.start + seconds) * 1000)).toISOString().replace('.000Z', 'Z');

          function duration(seconds) {
            let rest = Math.round(seconds);
            if (rest <= 0) return '0s';
            const parts = [];
            for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]]) {
              if (rest >= size && parts.length < 2) { parts.push(Math.floor(rest / size) + unit); rest %= size; }
            }
            return parts.join(' ');
          }

          function svg(name, attributes) {
            const element = document.createElementNS(SVG, name);
            for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
            return element;
          }

          // The band of `key` at `seconds`: its index in the flat [start, state, …] pairs.
          function bandIndex(key, seconds) {
            const bands = key.bands;
            let low = 0, high = bands.length / 2 - 1;
            while (low < high) {
              const middle = (low + high + 1) >> 1;
              if (bands[middle * 2] <= seconds) low = middle; else high = middle - 1;
            }
            return low;
          }
          const stateAt = (key, seconds) => STATES[key.bands[bandIndex(key, seconds) * 2 + 1]];

          // Axis: about eight labelled ticks on round UTC steps.
          function axis() {
            const bar = document.createElement('div');
            bar.className = 'axis';
            const corner = document.createElement('div');
            corner.className = 'corner';
            corner.textContent = 'key · time (UTC)';
            bar.appendChild(corner);
            const picture = svg('svg', { width: width + 8, height: 30 });
            const steps = [60, 300, 900, 3600, 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2592000, 7776000, 31536000];
            const step = steps.find((candidate) => data.span / candidate <= 8) || steps[steps.length - 1];
            const daily = step >= 86400;
            for (let at = Math.ceil(data.start / step) * step; at <= data.start + data.span; at += step) {
              const px = x(at - data.start);
              picture.appendChild(svg('line', { x1: px, x2: px, y1: 20, y2: 30 }));
              const text = svg('text', { x: Math.min(px + 2, width - 70), y: 14 });
              const stamp = new Date(at * 1000).toISOString();
              text.textContent = daily ? stamp.slice(0, 10) : stamp.slice(5, 10) + ' ' + stamp.slice(11, 16);
              picture.appendChild(text);
            }
            bar.appendChild(picture);
            return bar;
          }

          const defs = svg('svg', { width: 0, height: 0, style: 'position:absolute' });
          const pattern = svg('pattern', { id: 'hatch', width: 5, height: 5, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
          pattern.appendChild(svg('rect', { width: 5, height: 5, fill: '#f4c7ad' }));
          pattern.appendChild(svg('rect', { width: 2.5, height: 5, fill: '#d55e00' }));
          defs.appendChild(pattern);
          timeline.appendChild(defs);
          timeline.appendChild(axis());

          const GLYPHS = [
            (px) => `M${px} 1v8`,
            (px) => `M${px - 3} 2l6 6m0-6l-6 6`,
            (px) => `M${px} 1l4 4l-4 4l-4-4z`,
          ];
          const KIND_NAMES = ['put', 'delete', 'expire', 'delete (replaced)'];

          // Bands arrive as [time since the previous band's start, state, …]: made absolute here.
          // Counts arrive as four characters per column (see HistoryReport.counts): read per column.
          const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyABCDEFGHIJKLMNOPQRSTUVWXYZ';
          for (const key of data.keys) {
            for (let index = 2; index < key.bands.length; index += 2) key.bands[index] += key.bands[index - 2];
            key.buckets = [];
            for (let column = 0; column * 4 < key.counts.length; column++) {
              const digits = key.counts.substr(column * 4, 4);
              if (digits === '0000') continue;
              let counts = Array.from(digits, (digit) => DIGITS.indexOf(digit));
              if (digits.includes('z')) {
                for (let index = 0; index < key.overflow.length; index += 5) {
                  if (key.overflow[index] === column) counts = key.overflow.slice(index + 1, index + 5);
                }
              }
              key.buckets.push(column, ...counts);
            }
          }

          const rows = data.keys.map((key) => {
            const row = document.createElement('div');
            row.className = 'row';
            row.setAttribute('data-key', key.key);
            const name = document.createElement('span');
            name.className = 'label';
            name.title = key.key;
            name.textContent = key.key;
            row.appendChild(name);
            const track = svg('svg', { class: 'track', width: width + 8, height: ROW });
            const paths = { none: [], fresh: [], stale: [], missing: [] };
            const half = key.bands.length / 2;
            for (let index = 0; index < half; index++) {
              const start = x(key.bands[index * 2]);
              const end = x(index + 1 < half ? key.bands[index * 2 + 2] : data.span);
              const state = STATES[key.bands[index * 2 + 1]];
              const top = state === 'none' ? 14 : 10;
              const bottom = state === 'none' ? 16 : 21;
              paths[state].push(`M${start} ${top}H${Math.max(end, start + 1)}V${bottom}H${start}Z`);
            }
            for (const state of STATES) {
              if (paths[state].length) track.appendChild(svg('path', { class: `band ${state}`, d: paths[state].join(''), 'data-count': paths[state].length }));
            }
            const glyphs = [[], [], []];
            for (const mark of key.marks) if (mark[1] < 3) glyphs[mark[1]].push(GLYPHS[mark[1]](x(mark[0])));
            for (let index = 0; index < key.buckets.length; index += 5) {
              const px = (key.buckets[index] + 0.5) / data.columns * width;
              for (let kind = 0; kind < 3; kind++) if (key.buckets[index + 1 + kind] > 0) glyphs[kind].push(GLYPHS[kind](px));
            }
            ['put', 'delete', 'expire'].forEach((kind, index) => {
              if (glyphs[index].length) track.appendChild(svg('path', { class: `mark ${kind}`, d: glyphs[index].join(''), 'data-count': glyphs[index].length }));
            });
            row.appendChild(track);
            timeline.appendChild(row);
            return { key, row, track };
          });

          const cursor = document.createElement('div');
          cursor.id = 'cursor';
          cursor.style.height = (30 + rows.length * ROW) + 'px';
          timeline.appendChild(cursor);

          // The slider: for the chosen moment, each key's state, in the table and in the counts.
          let moment = data.span;
          function show(seconds) {
            moment = seconds;
            cursor.style.left = (label + x(seconds)) + 'px';
            document.getElementById('moment').textContent = iso(seconds);
            const counts = { fresh: 0, stale: 0, missing: 0, none: 0 };
            rows.forEach(({ key }, index) => {
              const state = stateAt(key, seconds);
              const tableRow = tableRows[index];
              if (!tableRow.classList.contains('hidden')) counts[state]++;
              const cell = tableRow.querySelector('td.now');
              if (cell.getAttribute('data-state') !== state) {
                cell.setAttribute('data-state', state);
                cell.textContent = '';
                const chip = document.createElement('span');
                chip.className = 'chip ' + state;
                cell.appendChild(chip);
                cell.appendChild(document.createTextNode(state === 'none' ? 'no cache yet' : state));
              }
            });
            const summary = document.getElementById('counts');
            summary.textContent = '';
            for (const state of ['fresh', 'stale', 'missing', 'none']) {
              const chip = document.createElement('span');
              chip.className = 'chip ' + state;
              summary.appendChild(chip);
              summary.appendChild(document.createTextNode(`${counts[state]} ${state === 'none' ? 'no cache yet' : state}`));
            }
            summary.setAttribute('data-fresh', counts.fresh);
            summary.setAttribute('data-stale', counts.stale);
            summary.setAttribute('data-missing', counts.missing);
          }
          slider.addEventListener('input', () => show(data.span * slider.value / STEPS));

          document.getElementById('filter').addEventListener('input', (event) => {
            const text = event.target.value.toLowerCase();
            rows.forEach(({ key, row }, index) => {
              const hidden = text !== '' && !key.key.toLowerCase().includes(text);
              row.classList.toggle('hidden', hidden);
              tableRows[index].classList.toggle('hidden', hidden);
            });
            show(moment);
          });

          // Tooltips: the band under the pointer, and the nearest mark within a few pixels.
          function describe(entry, px) {
            const key = entry.key;
            const seconds = secondsAt(px);
            const index = bandIndex(key, seconds);
            const from = key.bands[index * 2];
            const to = index * 2 + 2 < key.bands.length ? key.bands[index * 2 + 2] : data.span;
            const lines = [key.key, `${STATES[key.bands[index * 2 + 1]]} ${iso(from)} – ${iso(to)} (${duration(to - from)})`];
            let best = null, distance = 6;
            for (const mark of key.marks) {
              const d = Math.abs(x(mark[0]) - px);
              if (d < distance || (d === distance && best && mark[1] === 0)) { best = mark; distance = d; }
            }
            if (best) {
              const saves = key.marks.filter((mark) => mark[0] === best[0]);
              for (const mark of saves) lines.push(`${iso(mark[0])}  ${KIND_NAMES[mark[1]]}  seq ${mark[2]}: ${mark[3]}`);
            }
            const column = Math.floor(px / width * data.columns);
            for (let i = 0; i < key.buckets.length; i += 5) {
              if (Math.abs(key.buckets[i] - column) > 1) continue;
              const [c, puts, deletes, expires, replaced] = key.buckets.slice(i, i + 5);
              const start = c / data.columns * data.span, end = (c + 1) / data.columns * data.span;
              const parts = [];
              if (puts) parts.push(`${puts} put`);
              if (replaced) parts.push(`${replaced} delete (replaced)`);
              if (deletes) parts.push(`${deletes} delete`);
              if (expires) parts.push(`${expires} expire`);
              const total = puts + deletes + expires + replaced;
              lines.push(`${iso(start)} – ${iso(end)}: ${total} ${total === 1 ? 'event' : 'events'}: ${parts.join(', ')}`);
            }
            return lines.join('\n');
          }
          timeline.addEventListener('mousemove', (event) => {
            const entry = rows.find(({ track }) => track === event.target.closest('svg.track'));
            if (!entry) { tip.hidden = true; return; }
            tip.textContent = describe(entry, event.clientX - entry.track.getBoundingClientRect().left);
            tip.hidden = false;
            tip.style.left = Math.min(event.clientX + 14, window.innerWidth - 470) + 'px';
            tip.style.top = (event.clientY + 14) + 'px';
          });
          timeline.addEventListener('mouseleave', () => { tip.hidden = true; });

          // `report.html#at=2026-12-05T00:00:00Z` opens at that moment.
          const asked = /^#at=(.+)$/.exec(decodeURIComponent(location.hash));
          const at = asked ? Date.parse(asked[1]) / 1000 - data.start : NaN;
          const start = Number.isFinite(at) ? Math.min(data.span, Math.max(0, at)) : data.span;
          slider.value = data.span > 0 ? Math.round(start / data.span * STEPS) : STEPS;
          show(start);
          document.documentElement.setAttribute('data-ready', '1');
        })();
        """#
}
