//! The report as people read it: `vwr preflight` without `--json`.

use crate::check::Report;

/// One line per check (check, status, seen, needed, note), then the summary and the verdict.
pub fn render_table(report: &Report) -> String {
    let header = ["check", "status", "seen", "needed", "note"];
    let needed: Vec<String> = report.checks.iter().map(crate::check::Row::needed_text).collect();
    let cells: Vec<[&str; 5]> = report
        .checks
        .iter()
        .zip(&needed)
        .map(|(r, n)| [r.check.as_str(), r.status.as_str(), r.seen.as_str(), n.as_str(), r.note.as_str()])
        .collect();
    let width =
        |i: usize| cells.iter().map(|c| c[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0);
    let w = [width(0), width(1), width(2), width(3)];
    let line = |c: [&str; 5]| {
        format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        )
        .trim_end()
        .to_owned()
    };
    let mut out = vec![line(header)];
    out.extend(cells.into_iter().map(line));
    let s = report.summary();
    out.push(String::new());
    out.push(format!("{} ok, {} warn, {} fail, {} not checked", s.ok, s.warn, s.fail, s.not_checked));
    out.push(if report.blocking() {
        "blocking: a check failed; the stack cannot take the sale as planned".to_owned()
    } else if s.not_checked > 0 {
        "not blocking; the rows not checked are unknown, not ok: check them by hand".to_owned()
    } else {
        "not blocking".to_owned()
    });
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Row, Status};

    #[test]
    fn the_table_has_a_row_per_check_and_says_what_was_not_checked() {
        let report = Report {
            checks: vec![
                Row::new("Lambda concurrent executions", Status::Ok).value(1_000.0).needed(Some(80)),
                Row::new("DynamoDB TTL", Status::NotChecked)
                    .note("DescribeTimeToLive: AccessDeniedException"),
            ],
        };
        let text = render_table(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("check"), "{text}");
        assert!(lines[1].contains("ok") && lines[1].contains("1,000") && lines[1].ends_with("80"), "{text}");
        assert!(lines[2].contains("not checked") && lines[2].contains("AccessDenied"), "{text}");
        assert!(text.contains("1 ok, 0 warn, 0 fail, 1 not checked"), "{text}");
        assert!(text.contains("not blocking; the rows not checked"), "{text}");
    }
}
