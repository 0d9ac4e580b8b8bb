//! Why a plan cannot be made: bad inputs, a calibration or price table that does not parse, a
//! load-test report without the figures a calibration needs.

/// Every way [`crate::plan`] and its loaders can fail.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A count or rate that must be above zero (and finite) is not.
    #[error("--{flag} must be a number above 0, got {value}")]
    NotPositive { flag: &'static str, value: f64 },
    /// More arrivals in one second than the whole audience.
    #[error(
        "--peak-arrivals-per-second ({peak}) is more than --audience ({audience}): at most the whole audience arrives in one second"
    )]
    PeakAboveAudience { peak: f64, audience: f64 },
    /// A choice flag (`--architecture`, `--redis-engine`) with a value it does not know.
    #[error("--{flag} must be one of {known}, got {value:?}")]
    UnknownChoice { flag: &'static str, value: String, known: String },
    /// Tier 2's subnets span 2 or 3 Availability Zones (terraform/modules/tier2, `subnet_ids`).
    #[error("--availability-zones must be 2 or 3 (tier 2's subnets, one per zone), got {0}")]
    AvailabilityZones(u32),
    /// No prices for the region.
    #[error("no prices for region {region:?}; known regions: {known}")]
    UnknownRegion { region: String, known: String },
    /// The calibration file does not parse or holds an impossible figure.
    #[error("calibration: {0}")]
    Calibration(String),
    /// The price table does not parse or holds an impossible price.
    #[error("price table: {0}")]
    Prices(String),
    /// A `vwr loadtest --json` report lacks a figure the calibration needs.
    #[error("load-test report: {key} is missing or not a number")]
    ReportField { key: &'static str },
}
