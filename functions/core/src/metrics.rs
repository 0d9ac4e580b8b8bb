//! Operator metrics as CloudWatch Embedded Metric Format (EMF) lines on stdout: in Lambda,
//! CloudWatch turns them into metrics without any API call. Locally they are off or logged.

use std::io::Write;

use serde_json::{Map, Value, json};

/// Where metrics go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsSink {
    /// EMF JSON lines on stdout (Lambda).
    Emf,
    /// A `tracing` event per batch (local).
    Log,
    Off,
}

/// Metric namespace in CloudWatch.
pub const NAMESPACE: &str = "vwr";

/// A unit understood by CloudWatch.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Count,
    CountPerSecond,
    Milliseconds,
    Bytes,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Self::Count => "Count",
            Self::CountPerSecond => "Count/Second",
            Self::Milliseconds => "Milliseconds",
            Self::Bytes => "Bytes",
        }
    }
}

impl MetricsSink {
    /// Emits `values` with the given dimensions (one dimension set).
    pub fn emit(self, dimensions: &[(&str, &str)], values: &[(&str, f64, Unit)], now_millis: u64) {
        match self {
            Self::Off => {}
            Self::Log => {
                let vals: Map<String, Value> =
                    values.iter().map(|(k, v, _)| ((*k).to_owned(), json!(v))).collect();
                let dims: Map<String, Value> =
                    dimensions.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
                let (dims, vals) = (Value::Object(dims), Value::Object(vals));
                tracing::info!(event = "metrics", dimensions = %dims, values = %vals);
            }
            Self::Emf => {
                let line = emf_line(dimensions, values, now_millis);
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
            }
        }
    }
}

/// One EMF document.
pub fn emf_line(dimensions: &[(&str, &str)], values: &[(&str, f64, Unit)], now_millis: u64) -> Value {
    let mut doc = Map::new();
    doc.insert(
        "_aws".into(),
        json!({
            "Timestamp": now_millis,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [dimensions.iter().map(|(k, _)| *k).collect::<Vec<_>>()],
                "Metrics": values.iter().map(|(k, _, u)| json!({"Name": k, "Unit": u.as_str()})).collect::<Vec<_>>(),
            }]
        }),
    );
    for (k, v) in dimensions {
        doc.insert((*k).to_owned(), json!(v));
    }
    for (k, v, _) in values {
        doc.insert((*k).to_owned(), json!(v));
    }
    Value::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emf_document_shape() {
        let v = emf_line(&[("EventId", "e1")], &[("QueueLength", 5.0, Unit::Count)], 1000);
        assert_eq!(v["EventId"], "e1");
        assert_eq!(v["QueueLength"], 5.0);
        assert_eq!(v["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0][0], "EventId");
        assert_eq!(v["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Unit"], "Count");
    }
}
