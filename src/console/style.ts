// The page's style sheet, served as /assets/app.css. Sizes are in rem and layouts wrap, so the page
// reads at 200% zoom; colours are the Okabe–Ito palette, and no state is shown by colour alone (every
// verdict has its text and a ✓/✗ mark; narrowed bounds a ▼).
export const css = `
:root { --blue:#0072B2; --orange:#E69F00; --green:#009E73; --verm:#D55E00; --sky:#56B4E9; --purple:#CC79A7; --ink:#1a1a1a; --muted:#555; --line:#c8c8c8; --bg:#fff; --panel:#f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
header { padding: 0.75rem 1.25rem 0; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.4rem; margin: 0 0 0.25rem; } h2 { font-size: 1.25rem; } h3 { font-size: 1.05rem; margin: 1rem 0 0.5rem; }
main { padding: 0.5rem 1.25rem 2rem; max-width: 90rem; }
nav[role=tablist] { display: flex; flex-wrap: wrap; gap: 0.25rem; margin-top: 0.5rem; }
[role=tab] { font: inherit; padding: 0.5rem 1rem; border: 1px solid var(--line); border-bottom: none; background: var(--panel); border-radius: 0.4rem 0.4rem 0 0; cursor: pointer; }
[role=tab][aria-selected=true] { background: var(--bg); font-weight: 600; border-color: var(--blue); box-shadow: inset 0 3px 0 var(--blue); }
:focus-visible { outline: 3px solid var(--orange); outline-offset: 2px; }
button { font: inherit; padding: 0.35rem 0.8rem; border: 1px solid #888; border-radius: 0.3rem; background: #fff; cursor: pointer; }
button.link { border: none; background: none; color: var(--blue); text-decoration: underline; padding: 0.1rem 0; text-align: left; }
input, select { font: inherit; padding: 0.25rem 0.4rem; border: 1px solid #888; border-radius: 0.25rem; max-width: 100%; }
.muted { color: var(--muted); font-size: 0.9rem; }
.error { color: #8a2b00; font-weight: 600; }
.pickers { display: flex; flex-wrap: wrap; gap: 1rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 0.5rem; padding: 0.75rem 1rem; flex: 1 1 22rem; display: flex; flex-direction: column; gap: 0.35rem; }
.calls { margin: 0; padding-left: 1.2rem; max-height: 14rem; overflow: auto; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 1rem; font-size: 0.85rem; font-weight: 600; border: 2px solid; }
.v-valid .badge, .badge.v-valid { color: #00466e; border-color: var(--blue); background: #e3f1fa; }
.badge.v-signed_unauthorized, .badge.v-unverifiable { color: #7a2600; border-color: var(--verm); background: #fbe9df; }
.badge.v-unchecked { color: #555; border-color: #888; background: #f0f0f0; border-style: dashed; }
.verdict { font-size: 1.05rem; }
.tree { margin-top: 1rem; }
.hop { border: 2px solid var(--line); border-left: 0.4rem solid var(--blue); border-radius: 0.4rem; padding: 0.4rem 0.75rem; margin: 0.5rem 0; background: #fff; }
.hop.failing { border-color: var(--verm); border-left-style: dashed; }
.hop-head { border: none; background: none; font-size: 1rem; padding: 0.2rem 0; text-align: left; width: 100%; }
.hop-head::before { content: "▾ "; } .hop-head[aria-expanded=false]::before { content: "▸ "; }
.hop-op { font-weight: 700; font-family: ui-monospace, monospace; }
.fails { color: #7a2600; background: #fbe9df; border-left: 0.3rem solid var(--verm); padding: 0.3rem 0.6rem; }
.fails.soft { background: #fff4ea; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 1rem; margin: 0.4rem 0; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.subs { list-style: none; padding-left: 1.25rem; border-left: 2px dotted #999; margin: 0.4rem 0 0; }
.ident { font-family: ui-monospace, monospace; font-size: 0.9em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5rem 0; }
caption { text-align: left; color: var(--muted); font-size: 0.9rem; padding-bottom: 0.25rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
thead th { background: var(--panel); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.narrowed { background: #fff0d6; font-weight: 600; }
th button.sort { border: none; background: none; font-weight: 600; padding: 0; }
.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; background: var(--panel); padding: 0.75rem; border-radius: 0.5rem; }
.filters label { display: flex; flex-direction: column; font-size: 0.9rem; }
.outcome.o-failed, .outcome.o-error { color: #7a2600; font-weight: 600; }
.outcome.o-ok { color: #00466e; }
.controls { display: flex; gap: 1rem; flex-wrap: wrap; }
.figure { margin: 0.5rem 0; max-width: 44rem; }
.chart { width: 100%; height: auto; }
.chart .grid { stroke: #ddd; } .chart .axis { font-size: 11px; fill: #444; } .chart .label { font-size: 12px; fill: #222; }
.legend { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; list-style: none; padding: 0; margin: 0.25rem 0; font-size: 0.9rem; }
.swatch { display: inline-block; width: 0.9rem; height: 0.9rem; margin-right: 0.35rem; vertical-align: -0.1rem; border: 1px solid #333; }
.meter { display: inline-block; width: 8rem; height: 0.8rem; border: 1px solid #555; background: #fff; vertical-align: middle; }
.meter span { display: block; height: 100%; background: repeating-linear-gradient(45deg, var(--blue) 0 4px, var(--sky) 4px 8px); }
.sentinel { height: 1px; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 30rem), 1fr)); gap: 0 2rem; align-items: start; }
@media (min-width: 60rem) { .cols.wide-left { grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); } }
.scroll.tall { max-height: 24rem; overflow-y: auto; }
.scroll.tall.lines { max-height: min(40rem, 65vh); }
.nowrap { white-space: nowrap; }
.scroll.tall thead th { position: sticky; top: 0; }
.who.named { font-weight: 600; }
`
