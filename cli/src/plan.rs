//! `vwr plan`: what a sale needs and costs (docs/rehearsal.md#plan). The arithmetic is the
//! `vwr-plan` library; this only parses the flags, reads files and answers the text to print.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use vwr_plan::{
    Architecture, Calibration, DEFAULT_DWELL_SECONDS, DEFAULT_REGION, Deployment, Inputs, PlanError, Prices,
    RedisEngine,
};

/// Arguments of `vwr plan`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: Option<PlanCommand>,
    /// Visitors who will join the line.
    #[arg(long, required = true, allow_hyphen_values = true)]
    pub audience: Option<f64>,
    /// Joins in the busiest second (the open).
    #[arg(long, required = true, allow_hyphen_values = true)]
    pub peak_arrivals_per_second: Option<f64>,
    /// Visitors tier 1 lets into tier 2 per minute.
    #[arg(long, required = true, allow_hyphen_values = true)]
    pub outflow_per_minute: Option<f64>,
    /// Tier 2's cap on active users (default: outflow per second × dwell).
    #[arg(long, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Seconds an admitted visitor stays.
    #[arg(long, default_value_t = DEFAULT_DWELL_SECONDS, allow_hyphen_values = true)]
    pub dwell_seconds: f64,
    /// Minutes the line takes to drain (default: audience ÷ outflow).
    #[arg(long, allow_hyphen_values = true)]
    pub wait_minutes: Option<f64>,
    /// The AWS region priced.
    #[arg(long, env = "AWS_REGION", default_value = DEFAULT_REGION)]
    pub region: String,
    /// The functions' instruction set, as deployed (Terraform `architecture`).
    #[arg(long, default_value = "x86_64", value_parser = Architecture::NAMES)]
    pub architecture: String,
    /// Tier 2's ElastiCache Serverless engine, as deployed (Terraform `redis_engine`).
    #[arg(long, default_value = "valkey", value_parser = RedisEngine::NAMES)]
    pub redis_engine: String,
    /// Price no WAF web ACL (Terraform `waf_enabled = false`, or a web ACL of your own).
    #[arg(long)]
    pub no_waf: bool,
    /// Price no interface VPC endpoints (Terraform `create_vpc_endpoints = false`).
    #[arg(long)]
    pub no_vpc_endpoints: bool,
    /// Availability Zones of tier 2's subnets (2 or 3): interface endpoints are billed per zone.
    #[arg(long, default_value_t = 2)]
    pub availability_zones: u32,
    /// The plan as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// A calibration from a `vwr loadtest --json` report, on stdout (redirect it to
    /// cli/plan/calibration.json).
    Calibrate {
        report: PathBuf,
        /// The run's date (default: today, UTC).
        #[arg(long)]
        date: Option<String>,
        /// The machine the run was on.
        #[arg(long, default_value = "")]
        machine: String,
    },
}

fn today_utc() -> String {
    let s = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    s.get(..10).unwrap_or(&s).to_owned()
}

/// What `vwr plan` prints, or why it cannot (the caller exits 2 on a `PlanError`).
pub fn run(args: PlanArgs) -> Result<String, PlanError> {
    if let Some(PlanCommand::Calibrate { report, date, machine }) = args.command {
        let text = std::fs::read_to_string(&report)
            .map_err(|e| PlanError::Calibration(format!("{}: {e}", report.display())))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| PlanError::Calibration(format!("{}: {e}", report.display())))?;
        let mut cal = Calibration::from_loadtest_report(&value)?;
        if let Some(run) = cal.source.runs.first_mut() {
            run.date = date.unwrap_or_else(today_utc);
            run.machine = machine;
        }
        return serde_json::to_string_pretty(&cal).map_err(|e| PlanError::Calibration(e.to_string()));
    }
    let inputs = Inputs {
        audience: args.audience.unwrap_or_default(),
        peak_arrivals_per_second: args.peak_arrivals_per_second.unwrap_or_default(),
        outflow_per_minute: args.outflow_per_minute.unwrap_or_default(),
        threshold: args.threshold,
        dwell_seconds: args.dwell_seconds,
        wait_minutes: args.wait_minutes,
        region: args.region,
    };
    let deployment = Deployment {
        architecture: args.architecture.parse()?,
        redis_engine: args.redis_engine.parse()?,
        waf: !args.no_waf,
        vpc_endpoints: !args.no_vpc_endpoints,
        availability_zones: args.availability_zones,
    };
    let plan =
        vwr_plan::plan_deployed(&inputs, &deployment, &Calibration::embedded()?, &Prices::embedded()?)?;
    if args.json {
        serde_json::to_string_pretty(&plan).map_err(|e| PlanError::Prices(e.to_string()))
    } else {
        Ok(vwr_plan::render_table(&plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: PlanArgs,
    }

    fn plan(argv: &[&str]) -> Result<String, PlanError> {
        let mut all = vec!["vwr"];
        all.extend_from_slice(argv);
        run(Cli::try_parse_from(all).unwrap().args)
    }

    const SALE: [&str; 6] =
        ["--audience", "500000", "--peak-arrivals-per-second", "5000", "--outflow-per-minute", "3000"];

    #[test]
    fn a_500k_sale_as_a_table_and_as_json() {
        let table = plan(&SALE).unwrap();
        assert!(table.to_lowercase().contains("shards"), "{table}");
        let mut argv = SALE.to_vec();
        argv.extend(["--json", "--region", "us-east-1"]);
        let json: serde_json::Value = serde_json::from_str(&plan(&argv).unwrap()).unwrap();
        for k in ["shards", "lambdaConcurrency", "peakRequestsPerSecond", "cost", "warnings"] {
            assert!(json.get(k).is_some(), "{k}");
        }
        assert!(json["shards"].as_u64().unwrap() >= 5, "≥ peak / 1,000 per second: {}", json["shards"]);
        assert!(json["cost"]["totalUsd"].as_f64().unwrap() > 0.0);
        assert!(json["cost"]["per1000VisitorsUsd"].as_f64().unwrap() > 0.0);
        assert!(json["cost"]["byService"]["waf"].as_f64().unwrap() > 0.0, "the WAF is on by default");
        assert!(json["cost"]["monthlyFloorUsd"].as_f64().unwrap() > 0.0);
        assert_eq!(json["deployment"]["architecture"], "x86_64");
        assert_eq!(json["deployment"]["redisEngine"], "valkey");
        let quotas: Vec<&str> =
            json["warnings"].as_array().unwrap().iter().filter_map(|w| w["quota"].as_str()).collect();
        assert!(quotas.iter().any(|q| q.contains("warm throughput")), "5,100 writes/s > 4,000: {quotas:?}");
    }

    #[test]
    fn the_deployment_flags_change_what_is_priced() {
        let json = |extra: &[&str]| -> serde_json::Value {
            let mut argv = SALE.to_vec();
            argv.push("--json");
            argv.extend_from_slice(extra);
            serde_json::from_str(&plan(&argv).unwrap()).unwrap()
        };
        let default = json(&[]);
        let other =
            json(&["--architecture", "arm64", "--redis-engine", "redis", "--no-waf", "--no-vpc-endpoints"]);
        assert_eq!(other["deployment"]["architecture"], "arm64");
        assert_eq!(other["deployment"]["redisEngine"], "redis");
        assert!(other["cost"]["byService"].get("waf").is_none());
        assert!(other["cost"]["monthlyFloor"].get("waf").is_none());
        assert!(other["cost"]["monthlyFloor"].get("vpcEndpoints").is_none());
        let lambda = |v: &serde_json::Value| v["cost"]["byService"]["lambda"].as_f64().unwrap();
        assert!(lambda(&other) < lambda(&default), "arm64 is cheaper per GB-second");
        let three = json(&["--availability-zones", "3"]);
        let endpoints = |v: &serde_json::Value| v["cost"]["monthlyFloor"]["vpcEndpoints"].as_f64().unwrap();
        assert!(endpoints(&three) > endpoints(&default));
        let mut argv = SALE.to_vec();
        argv.extend(["--availability-zones", "4"]);
        assert!(plan(&argv).unwrap_err().to_string().contains("--availability-zones"));
        let table = plan(&SALE).unwrap();
        for want in ["Lambda x86_64", "Valkey", "waf", "fixed monthly floor", "per 1,000 visitors"] {
            assert!(table.contains(want), "{want}: {table}");
        }
        let mut argv = SALE.to_vec();
        argv.extend(["--architecture", "sparc"]);
        let all = ["vwr"].into_iter().chain(argv).collect::<Vec<_>>();
        assert!(Cli::try_parse_from(all).is_err(), "clap refuses an unknown architecture");
    }

    #[test]
    fn twenty_thousand_a_second_warns_and_bad_input_names_its_flag() {
        let json = plan(&[
            "--audience",
            "500000",
            "--peak-arrivals-per-second",
            "20000",
            "--outflow-per-minute",
            "3000",
            "--json",
        ])
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let quotas: Vec<&str> =
            v["warnings"].as_array().unwrap().iter().filter_map(|w| w["quota"].as_str()).collect();
        assert!(quotas.iter().any(|q| q.contains("API Gateway")), "{quotas:?}");
        let e = plan(&["--audience", "0", "--peak-arrivals-per-second", "1", "--outflow-per-minute", "1"])
            .unwrap_err();
        assert!(e.to_string().contains("--audience"), "{e}");
        let e = plan(&["calibrate", "/nonexistent/report.json"]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/report.json"), "{e}");
    }
}
