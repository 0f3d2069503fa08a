extension ReportHTML {
    /// The page's one style sheet, inline: the system's own fonts (none fetched), cards on a
    /// light grey like GNOME's wellbeing panel, and a dark scheme. Bar and limit fills are
    /// attributes of the SVG, the same in both schemes.
    static let style = """
        :root { color-scheme: light dark; --bg: #f6f5f4; --card: #ffffff; --fg: #241f31;
          --muted: #5e5c64; --grid: #e6e5e3; --axis: #c0bfbc; --shadow: rgba(0, 0, 0, .07); }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #1d1d20; --card: #2b2b30; --fg: #f6f5f4; --muted: #c0bfbc;
            --grid: #3d3d44; --axis: #5e5c64; --shadow: rgba(0, 0, 0, .4); }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg);
          font: 15px/1.45 system-ui, -apple-system, Cantarell, "Segoe UI", Roboto, "Noto Sans", sans-serif;
          font-variant-numeric: tabular-nums; }
        main { max-width: 760px; margin: 0 auto; padding: 32px 20px 40px; }
        header { margin: 0 0 20px; }
        h1 { font-size: 26px; line-height: 1.2; margin: 0 0 4px; }
        h2 { font-size: 16px; margin: 0 0 2px; overflow-wrap: anywhere; }
        h3 { font-size: 14px; margin: 18px 0 4px; color: var(--muted); overflow-wrap: anywhere; }
        h2 + h3 { margin-top: 8px; }
        .period { margin: 0; color: var(--muted); }
        .card { background: var(--card); border-radius: 12px; padding: 18px 24px 20px;
          margin: 0 0 16px; box-shadow: 0 1px 2px var(--shadow), 0 0 0 1px var(--shadow); }
        .total { font-size: 28px; font-weight: 700; margin: 0 0 6px; }
        .summary, .legend, .note { color: var(--muted); margin: 6px 0 0; font-size: 14px; }
        .key-limit { display: inline-block; width: 16px; height: 2px; margin: 0 8px 4px 0;
          background: #e01b24; vertical-align: middle; }
        svg { display: block; max-width: 100%; height: auto; }
        svg text { fill: var(--muted); font-size: 11px; font-family: inherit; }
        svg text.fig { fill: var(--fg); font-weight: 600; paint-order: stroke; stroke: var(--card);
          stroke-width: 3px; stroke-linejoin: round; }
        svg text.date { font-size: 10px; }
        .grid { fill: var(--grid); }
        .baseline { fill: var(--axis); }
        table.hbars { width: 100%; border-collapse: collapse; }
        .hbars th { text-align: left; font-weight: normal; padding: 5px 12px 5px 0;
          max-width: 260px; overflow-wrap: anywhere; }
        .hbars .dir { color: var(--muted); font-size: 13px; }
        .hbars .name { font-weight: 600; }
        .hbars td.hbar { width: 260px; padding: 5px 12px 5px 0; }
        .hbars td.fig { white-space: nowrap; text-align: right; padding: 5px 0; }
        .hbars td.fig .note { display: block; margin: 0; font-size: 12px; }
        .hbars td.hbar svg { width: 100%; height: 14px; }
        @media (max-width: 560px) {
          main { padding: 20px 12px 32px; }
          .card { padding: 16px; }
          .hbars tr { display: grid; grid-template-columns: 1fr auto; align-items: center; }
          .hbars th { grid-column: 1 / -1; max-width: none; padding-bottom: 0; }
          .hbars td.hbar { width: auto; }
        }
        ul.counts { list-style: none; margin: 8px 0 0; padding: 0; display: grid; gap: 10px;
          grid-template-columns: repeat(auto-fill, minmax(112px, 1fr)); }
        ul.counts li { background: var(--bg); border-radius: 8px; padding: 10px 12px; color: var(--muted); font-size: 13px; }
        ul.counts .n { display: block; font-size: 24px; font-weight: 700; color: var(--fg); }
        footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 24px; }
        """
}
