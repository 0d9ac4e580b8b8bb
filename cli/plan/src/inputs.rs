//! What the operator knows of the sale: the flags of `vwr plan` (docs/rehearsal.md#plan).

use serde::{Deserialize, Serialize};

use crate::error::PlanError;
use crate::prices::Prices;

/// Seconds an admitted visitor stays in tier 2 when `--dwell-seconds` is not given: a checkout
/// of ten minutes, the entry token's default active TTL.
pub const DEFAULT_DWELL_SECONDS: f64 = 600.0;
/// The region priced when `--region` is not given.
pub const DEFAULT_REGION: &str = "us-east-1";

/// The sale to plan. Counts and rates are `f64` so that a negative or non-numeric flag reaches
/// [`Inputs::validate`] and gets its own message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inputs {
    /// Visitors who will join the line (`--audience`).
    pub audience: f64,
    /// Joins per second in the busiest second, at the open (`--peak-arrivals-per-second`).
    pub peak_arrivals_per_second: f64,
    /// Visitors tier 1 lets into tier 2 per minute (`--outflow-per-minute`).
    pub outflow_per_minute: f64,
    /// Tier 2's cap on active users (`--threshold`); without it, the cap that just lets the
    /// outflow through: outflow per second × dwell.
    pub threshold: Option<f64>,
    /// Seconds an admitted visitor stays (`--dwell-seconds`).
    pub dwell_seconds: f64,
    /// How long the line takes to drain (`--wait-minutes`); without it, audience ÷ outflow.
    pub wait_minutes: Option<f64>,
    /// The AWS region priced (`--region`).
    pub region: String,
}

impl Inputs {
    /// A sale with the default dwell, derived threshold and wait, in [`DEFAULT_REGION`].
    pub fn new(audience: f64, peak_arrivals_per_second: f64, outflow_per_minute: f64) -> Self {
        Self {
            audience,
            peak_arrivals_per_second,
            outflow_per_minute,
            threshold: None,
            dwell_seconds: DEFAULT_DWELL_SECONDS,
            wait_minutes: None,
            region: DEFAULT_REGION.to_owned(),
        }
    }

    /// Refuses a count or rate that is zero, negative or not a number, a peak above the
    /// audience, and a region without prices (naming the regions that have them).
    pub fn validate(&self, prices: &Prices) -> Result<(), PlanError> {
        positive("audience", self.audience)?;
        positive("peak-arrivals-per-second", self.peak_arrivals_per_second)?;
        positive("outflow-per-minute", self.outflow_per_minute)?;
        positive("dwell-seconds", self.dwell_seconds)?;
        if let Some(t) = self.threshold {
            positive("threshold", t)?;
        }
        if let Some(w) = self.wait_minutes {
            positive("wait-minutes", w)?;
        }
        if self.peak_arrivals_per_second > self.audience {
            return Err(PlanError::PeakAboveAudience {
                peak: self.peak_arrivals_per_second,
                audience: self.audience,
            });
        }
        prices.region(&self.region).map(|_| ())
    }

    /// Minutes until the last visitor is let through: `--wait-minutes`, else audience ÷
    /// outflow.
    pub fn wait_minutes(&self) -> f64 {
        self.wait_minutes.unwrap_or(self.audience / self.outflow_per_minute)
    }

    /// Visitors let into tier 2 per second.
    pub fn outflow_per_second(&self) -> f64 {
        self.outflow_per_minute / 60.0
    }

    /// Tier 2's cap: `--threshold`, else the one the outflow needs (outflow/s × dwell, up).
    pub fn threshold(&self) -> f64 {
        self.threshold.unwrap_or_else(|| ceil(self.outflow_per_second() * self.dwell_seconds))
    }
}

fn positive(flag: &'static str, value: f64) -> Result<(), PlanError> {
    if value.is_finite() && value > 0.0 { Ok(()) } else { Err(PlanError::NotPositive { flag, value }) }
}

/// Rounds up, ignoring the last bits of floating-point noise (3 × 0.1 × 10 is 3, not 4).
pub(crate) fn ceil(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() < 1e-9 { r.max(0.0) } else { x.ceil().max(0.0) }
}
