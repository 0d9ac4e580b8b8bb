//! What the console shows: the rows of each panel (shared with the `--once` snapshot), the
//! screen, and the formatting of times and figures.

use super::*;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Sparkline, Wrap};

impl App {
    /// Lifecycle: state, message, close reason, countdown, seed.
    pub fn event_rows(&self) -> Vec<Row> {
        let Some(s) = &self.status else {
            return vec![row("state", "waiting for the first answer…")];
        };
        let state = s.state().unwrap_or(DASH);
        let mut rows = vec![Row {
            label: "state",
            value: state.to_owned(),
            style: state_style(state).add_modifier(Modifier::BOLD),
        }];
        if let Some(held) = s.hold_text() {
            let value = match s.hold.as_ref().and_then(|h| h.since) {
                Some(at) => format!("{held} ({} ago)", fmt_duration(self.now - at as f64)),
                None => held,
            };
            rows.push(Row { label: "hold", value, style: hold_style() });
        }
        if let Some((alarm, state)) = &s.standby_alarm {
            // An alarm tier 1 cannot read never opens the event: as loud as a hold.
            let (value, style) = match state.as_deref() {
                Some("unreadable") => (format!("{alarm}: UNREADABLE, the event cannot open"), hold_style()),
                Some(st) => (format!("{alarm}: {}", st.to_uppercase()), Style::default()),
                None => (alarm.clone(), Style::default()),
            };
            rows.push(Row { label: "standby on", value, style });
        }
        let msg_style = Style::default().fg(Color::Magenta);
        match (&s.message_en, &s.message_ko) {
            (None, None) if s.message_more.is_empty() => rows.push(row("message", DASH)),
            (en, ko) => {
                if let Some(en) = en {
                    rows.push(Row { label: "message en", value: en.clone(), style: msg_style });
                }
                if let Some(ko) = ko {
                    rows.push(Row { label: "message ko", value: ko.clone(), style: msg_style });
                }
                for (label, text) in &s.message_more {
                    rows.push(Row { label, value: text.clone(), style: msg_style });
                }
            }
        }
        if let Some(r) = &s.close_reason {
            rows.push(Row {
                label: "close reason",
                value: r.clone(),
                style: Style::default().fg(Color::Red),
            });
        }
        let pre_open = matches!(s.state(), Some("scheduled" | "prequeue"));
        if pre_open {
            if let (Some("scheduled"), Some(at)) = (s.state(), s.prequeue_at) {
                rows.push(row("prequeue at", countdown(at, self.now)));
            }
            let value = s.open_at.map_or_else(|| DASH.to_owned(), |at| countdown(at, self.now));
            rows.push(Row { label: "opens", value, style: Style::default().fg(Color::Cyan) });
        } else if let Some(at) = s.opened_at.filter(|a| *a > 0) {
            rows.push(row("opened at", fmt_utc(at as f64)));
        }
        if let Some(at) = s.close_at.filter(|a| *a > 0)
            && s.state() != Some("closed")
        {
            rows.push(row("closes", countdown(at, self.now)));
        }
        let seed = match &s.seed_commitment {
            Some(c) => {
                format!("{} · {}", short_hex(c), if s.seed_revealed { "revealed" } else { "not revealed" })
            }
            None if s.seed_revealed => "revealed".to_owned(),
            None => DASH.to_owned(),
        };
        rows.push(row("seed", seed));
        rows
    }

    /// The line: counters, no-show share, wait estimate.
    pub fn line_rows(&self) -> Vec<Row> {
        let s = self.status.clone().unwrap_or_default();
        let n = |v: Option<u64>| v.map_or_else(|| DASH.to_owned(), |v| v.to_string());
        let mut rows = vec![
            row("issued", n(s.issued)),
            row("serving counter", n(s.serving_counter)),
            row("waiting", n(s.waiting)),
            row("admitted", n(s.admitted)),
            row("prequeue size", n(s.prequeue_size)),
        ];
        let no_show = match (s.outflow_no_show_share(), s.overall_no_show_share()) {
            (Some(f), _) => format!("{:.1} % (recent)", f * 100.0),
            (None, Some(f)) => format!("{:.1} % (whole sale)", f * 100.0),
            (None, None) => DASH.to_owned(),
        };
        rows.push(row("no-show share", no_show));
        rows.push(row(
            "wait, last in line",
            self.wait_estimate().map_or_else(|| DASH.to_owned(), fmt_duration),
        ));
        rows
    }

    /// Seconds the last in line waits: waiting / served per second (the status's 60-s rate,
    /// else the live one).
    pub fn wait_estimate(&self) -> Option<f64> {
        let s = self.status.as_ref()?;
        let waiting = s.waiting?;
        let rate = s
            .served_per_second
            .filter(|r| *r > 0.0)
            .or_else(|| self.live().map(|l| l.served_per_second).filter(|r| *r > 0.0))?;
        Some(waiting as f64 / rate)
    }

    /// The live rates over the last [`RATE_WINDOW_SECS`].
    pub fn live(&self) -> Option<LiveRates> {
        live_rates(&self.samples, RATE_WINDOW_SECS)
    }

    /// joins/s and admitted/s: live 10-s figures and the status's 60-s figures.
    pub fn rate_rows(&self) -> Vec<Row> {
        let live = self.live();
        let s = self.status.clone().unwrap_or_default();
        let r = |v: Option<f64>| v.map_or_else(|| DASH.to_owned(), |v| format!("{v:.1}"));
        vec![
            row(
                "joins/s",
                format!("{} (10 s) · {} (60 s)", r(live.map(|l| l.joins_per_second)), r(s.joins_per_second)),
            ),
            row(
                "admitted/s",
                format!(
                    "{} (10 s) · served {} (60 s)",
                    r(live.map(|l| l.admitted_per_second)),
                    r(s.served_per_second)
                ),
            ),
        ]
    }

    /// Outflow (docs/outflow.md): the mode and its target, redeemed and served per minute,
    /// releases.
    pub fn outflow_rows(&self) -> Vec<Row> {
        let s = self.status.clone().unwrap_or_default();
        let o = s.outflow.clone().unwrap_or_default();
        let r = |v: Option<f64>| v.map_or_else(|| DASH.to_owned(), |v| format!("{v:.1}"));
        let target = o.target_per_minute.or(s.target_arrivals_per_minute).filter(|t| *t > 0);
        let mode = match s.mode() {
            Some("targetArrivals") => {
                let mut v = format!(
                    "targetArrivals · target {}/min",
                    target.map_or_else(|| DASH.to_owned(), |t| t.to_string())
                );
                if let Some(m) = s.max_batch_size {
                    v.push_str(&format!(" · at most {m}/step"));
                }
                v
            }
            Some("fixed") | None if s.batch_size == Some(0) => "fixed · manual advances only".to_owned(),
            Some("fixed") | None if s.batch_size.is_some() => format!(
                "fixed · {} every {}",
                s.batch_size.unwrap_or_default(),
                s.interval_seconds.map_or_else(|| DASH.to_owned(), |i| fmt_duration(i as f64))
            ),
            Some(other) => other.to_owned(),
            None => DASH.to_owned(),
        };
        let mut per_minute =
            format!("redeemed {} · served {}", r(o.redeemed_per_minute), r(o.served_per_minute));
        if let (Some(t), Some(got)) = (target, o.redeemed_per_minute)
            && s.mode() == Some("targetArrivals")
        {
            per_minute.push_str(&format!(" · {:.0} % of target", got / t as f64 * 100.0));
        }
        vec![
            Row { label: "mode", value: mode, style: Style::default().fg(Color::Cyan) },
            row("per minute", per_minute),
            row("released", o.released.map_or_else(|| DASH.to_owned(), |v| v.to_string())),
        ]
    }

    /// Tier 2, when known.
    pub fn tier2_rows(&self) -> Vec<Row> {
        let n = |v: Option<u64>| v.map_or_else(|| DASH.to_owned(), |v| v.to_string());
        let mut rows = Vec::new();
        match self.tier2() {
            Some((t, from)) if t.registered == Some(false) => {
                rows.push(row("tier 2", "not registered"));
                rows.push(row("tier-2 from", from));
            }
            Some((t, from)) => {
                let mut v = format!("active {}/{} · waiting {}", n(t.active), n(t.threshold), n(t.waiting));
                if let Some(h) = t.held {
                    v.push_str(&format!(" · held {h}"));
                }
                if let Some(r) = t.admitted_per_second {
                    v.push_str(&format!(" · admitted {r:.1}/s"));
                }
                rows.push(row("tier 2", v));
                rows.push(row("tier-2 from", from));
            }
            None => rows.push(row("tier 2", DASH)),
        }
        if let Some(e) = &self.tier2_error {
            rows.push(Row {
                label: "tier-2 error",
                value: e.clone(),
                style: Style::default().fg(Color::Red),
            });
        }
        rows
    }

    /// The figures as plain text, one `label  value` per line (`vwr admin status`).
    pub fn figures_text(&self) -> String {
        let mut out = String::new();
        let sections =
            [self.event_rows(), self.line_rows(), self.outflow_rows(), self.rate_rows(), self.tier2_rows()];
        for rows in sections {
            for r in rows {
                out.push_str(&format!("{:<20}{}\n", r.label, r.value));
            }
        }
        out
    }

    /// The figures as plain text with when they were read (`--once`).
    pub fn snapshot_text(&self) -> String {
        let mut out = format!("vwr watch {}\n{}", self.event_id, self.figures_text());
        out.push_str(&format!(
            "{:<20}{}\n",
            "refreshed",
            self.last_refresh.map_or_else(|| DASH.to_owned(), fmt_utc)
        ));
        if let Some(n) = &self.notice {
            out.push_str(&format!("{:<20}{}\n", "note", n.text));
        }
        out
    }

    // -----------------------------------------------------------------------------------------
    // Rendering
    // -----------------------------------------------------------------------------------------

    /// Draws the whole screen.
    pub fn render(&self, frame: &mut Frame) {
        let (event_rows, line_rows, tier2_rows) = (self.event_rows(), self.line_rows(), self.tier2_rows());
        let outflow_rows = self.outflow_rows();
        // A long value (the hold's reason) wraps: the panels grow with it.
        let left_inner = usize::from(frame.area().width) * 55 / 100;
        let right_inner = usize::from(frame.area().width) - left_inner;
        let top_height = wrapped_height(&event_rows, EVENT_LABEL, left_inner.saturating_sub(2))
            .max(wrapped_height(&line_rows, LINE_LABEL, right_inner.saturating_sub(2)))
            + 2;
        let [header, top, outflow, rates, tier2, notice, footer] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(u16::try_from(top_height).unwrap_or(u16::MAX)),
            Constraint::Length(u16::try_from(outflow_rows.len() + 2).unwrap_or(u16::MAX)),
            Constraint::Min(6),
            Constraint::Length(u16::try_from(tier2_rows.len() + 2).unwrap_or(u16::MAX)),
            Constraint::Length(1),
            Constraint::Length(2),
        ])
        .areas(frame.area());
        self.render_header(frame, header);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
        frame.render_widget(rows_paragraph(event_rows, "Event", EVENT_LABEL), left);
        frame.render_widget(rows_paragraph(line_rows, "Line", LINE_LABEL), right);
        frame.render_widget(rows_paragraph(outflow_rows, "Outflow", EVENT_LABEL), outflow);
        self.render_rates(frame, rates);
        frame.render_widget(rows_paragraph(tier2_rows, "Tier 2", 13), tier2);
        self.render_notice(frame, notice);
        self.render_footer(frame, footer);
        if self.mode == Mode::Help {
            render_help(frame);
        }
    }

    pub(super) fn render_header(&self, frame: &mut Frame, area: Rect) {
        let state = self.status.as_ref().and_then(Status::state).unwrap_or(DASH);
        let refreshed = match self.last_refresh {
            Some(at) => format!("refreshed {} ({:.0} s ago)", fmt_clock(at), (self.now - at).max(0.0)),
            None => "not refreshed yet".to_owned(),
        };
        let mut spans = vec![
            Span::styled(" vwr watch ", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(self.event_id.clone()),
            Span::raw("  "),
            Span::styled(state.to_uppercase(), state_style(state).add_modifier(Modifier::BOLD)),
            Span::raw("  "),
        ];
        if let Some(held) = self.status.as_ref().and_then(Status::hold_text) {
            spans.push(Span::styled(format!(" {held} "), hold_style()));
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(refreshed, Style::default().fg(Color::DarkGray)));
        let line = Line::from(spans);
        frame.render_widget(Paragraph::new(line), area);
    }

    pub(super) fn render_rates(&self, frame: &mut Frame, area: Rect) {
        let block = Block::default().borders(Borders::ALL).title(" Rates (sparklines: last 2 min) ");
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [joins, admitted] = Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(inner);
        let rows = self.rate_rows();
        let series = [
            (joins, rate_series(&self.samples, |s| s.issued), Color::Cyan),
            (admitted, rate_series(&self.samples, |s| s.admitted), Color::Green),
        ];
        for ((area, data, color), r) in series.into_iter().zip(rows) {
            let [label, spark] = Layout::horizontal([Constraint::Length(44), Constraint::Min(0)]).areas(area);
            let text = Line::from(vec![
                Span::styled(format!("{:<11}", r.label), Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(r.value),
            ]);
            frame.render_widget(Paragraph::new(text), label);
            let width = usize::from(spark.width);
            let tail = &data[data.len().saturating_sub(width)..];
            frame.render_widget(Sparkline::default().data(tail).style(Style::default().fg(color)), spark);
        }
    }

    pub(super) fn render_notice(&self, frame: &mut Frame, area: Rect) {
        let (text, style) = match (&self.busy, &self.notice) {
            (Some(b), _) => (format!("{b}… waiting for the answer"), Style::default().fg(Color::Yellow)),
            (None, Some(n)) => (
                n.text.clone(),
                Style::default().fg(match n.kind {
                    NoticeKind::Info => Color::Yellow,
                    NoticeKind::Ok => Color::Green,
                    NoticeKind::Error => Color::Red,
                }),
            ),
            (None, None) => (String::new(), Style::default()),
        };
        frame.render_widget(Paragraph::new(Span::styled(format!(" {text}"), style)), area);
    }

    pub(super) fn render_footer(&self, frame: &mut Frame, area: Rect) {
        let key = |k: &'static str| {
            Span::styled(k, Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED))
        };
        let lines: Vec<Line> = match &self.mode {
            Mode::Normal | Mode::Help => vec![Line::from(vec![
                key(" p "),
                Span::raw(" pause  "),
                key(" r "),
                Span::raw(" resume  "),
                key(" a "),
                Span::raw(" advance  "),
                key(" c "),
                Span::raw(" close  "),
                key(" m "),
                Span::raw(" message  "),
                key(" h "),
                Span::raw(if self.status.as_ref().is_some_and(|s| s.hold.is_some()) {
                    " release hold  "
                } else {
                    " hold  "
                }),
                key(" ? "),
                Span::raw(" help  "),
                key(" q "),
                Span::raw(" quit"),
            ])],
            Mode::ChooseReason => vec![
                Line::styled(
                    format!("Close event {}: why?", self.event_id),
                    Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Line::from(vec![
                    key(" s "),
                    Span::raw(" sold_out  "),
                    key(" e "),
                    Span::raw(" ended  "),
                    key(" Esc "),
                    Span::raw(" cancel"),
                ]),
            ],
            Mode::Confirm { question, .. } => vec![
                Line::styled(
                    question.clone(),
                    Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Line::raw("y = yes, n or Esc = no"),
            ],
            Mode::Prompt { kind, input, error } => {
                let mut first = vec![Span::styled(kind.question(), Style::default().fg(Color::Yellow))];
                if let Some(e) = error {
                    first.push(Span::styled(format!("  ({e})"), Style::default().fg(Color::Red)));
                }
                let prompt = format!("> {input}");
                let cursor_x =
                    area.x.saturating_add(u16::try_from(prompt.chars().count()).unwrap_or(u16::MAX));
                frame.set_cursor_position((
                    cursor_x.min(area.right().saturating_sub(1)),
                    area.y.saturating_add(1),
                ));
                vec![Line::from(first), Line::raw(prompt)]
            }
        };
        frame.render_widget(Paragraph::new(lines), area);
    }
}

/// Label widths of the panels.
pub(super) const EVENT_LABEL: usize = 13;
pub(super) const LINE_LABEL: usize = 19;

/// Lines `rows` take in a panel `width` columns wide inside its borders (values wrap; a word
/// moved whole to the next line can cost one more, hence the rounding up per row).
pub(super) fn wrapped_height(rows: &[Row], label_width: usize, width: usize) -> usize {
    rows.iter()
        .map(|r| {
            let chars = label_width + r.value.chars().count();
            if width == 0 || chars <= width { 1 } else { chars.div_ceil(width.saturating_sub(1).max(1)) }
        })
        .sum()
}

pub(super) fn rows_paragraph(rows: Vec<Row>, title: &str, label_width: usize) -> Paragraph<'static> {
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|r| {
            Line::from(vec![
                Span::styled(format!("{:<label_width$}", r.label), Style::default().fg(Color::DarkGray)),
                Span::styled(r.value, r.style),
            ])
        })
        .collect();
    Paragraph::new(lines)
        .block(Block::default().borders(Borders::ALL).title(format!(" {title} ")))
        .wrap(Wrap { trim: false })
}

pub(super) fn render_help(frame: &mut Frame) {
    let text = [
        "p    pause (optional message to visitors, then y/n)",
        "r    resume (y/n)",
        "a    advance the serving counter by N (default: the batch size)",
        "c    close: s = sold_out, e = ended; optional message; y/n",
        "m    set the message (en, then ko; both empty = clear); y/n",
        "h    health gate: hold the advancer (asks a reason), or release a hold; y/n",
        "q    quit (also Esc, Ctrl-C)",
        "?    this help",
        "",
        "In a prompt: Enter accepts, Esc cancels, Ctrl-U clears.",
        "joins/s and admitted/s (10 s) are computed from successive polls;",
        "(60 s) figures come from the status. No-show share: the status's recent",
        "outflow figure, else 1 - admitted / serving over the whole sale.",
        "Outflow per minute: redeemed admissions and served positions (status).",
        "",
        "Any key closes this help.",
    ];
    let area = frame.area();
    let width = area.width.min(78);
    let height = area.height.min(text.len() as u16 + 2);
    let popup =
        Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height };
    frame.render_widget(Clear, popup);
    let lines: Vec<Line> = text.iter().map(|l| Line::raw(*l)).collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Keys ")),
        popup,
    );
}

/// The hold: white on red, as loud as the terminal gets.
pub(super) fn hold_style() -> Style {
    Style::default().fg(Color::White).bg(Color::Red).add_modifier(Modifier::BOLD)
}

pub(super) fn state_style(state: &str) -> Style {
    Style::default().fg(match state {
        "scheduled" => Color::Blue,
        "prequeue" => Color::Cyan,
        "open" | "active" => Color::Green,
        "paused" => Color::Yellow,
        "closed" => Color::Red,
        _ => Color::DarkGray,
    })
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

pub(super) fn short_hex(h: &str) -> String {
    clip(h, 12)
}

/// "1h 02m 03s", "5m 00s", "42s".
pub fn fmt_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m {s:02}s"),
        _ => format!("{h}h {m:02}m {s:02}s"),
    }
}

pub(super) fn countdown(at: u64, now: f64) -> String {
    let left = at as f64 - now;
    // The date only when it is not within the next or last day.
    let when = if left.abs() < 86_400.0 { zone::clock(at) } else { fmt_utc(at as f64) };
    if left > 0.0 {
        format!("in {} · at {when}", fmt_duration(left))
    } else {
        format!("due {} ago · at {when}", fmt_duration(-left))
    }
}

/// Unix seconds as "YYYY-MM-DD hh:mm:ssZ" (UTC).
pub fn fmt_utc(secs: f64) -> String {
    zone::short(secs.max(0.0) as u64)
}

/// Unix seconds as "hh:mm:ssZ" (UTC).
pub(super) fn fmt_clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64 % 86_400;
    format!("{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

pub(super) fn now_secs_f64() -> f64 {
    vwr_core::time::now_millis() as f64 / 1000.0
}
