//! `vwr preflight`: the deployed stack and the account against a plan
//! (docs/rehearsal.md#preflight). The checks are the pure `vwr-preflight` crate; [`aws`] is the
//! adapter that reads the account through the AWS SDK into its plain `Observations`. This module
//! parses the flags, reads the plan file and answers the text to print and the exit code.

#[cfg(feature = "preflight")]
pub mod aws;

use std::path::{Path, PathBuf};

use clap::Args;
#[cfg(feature = "preflight")]
use vwr_preflight::judge;
use vwr_preflight::{DEFAULT_PREFIX, Names, PlanNeeds, PreflightError, Report};

/// Arguments of `vwr preflight`. The region, credentials and endpoint are the AWS SDK's own
/// (`AWS_REGION`, `AWS_PROFILE`, `AWS_ENDPOINT_URL`, …).
#[derive(Debug, Args)]
pub struct PreflightArgs {
    /// A `vwr plan --json` file: what the sale needs. Without it, rows show what was seen.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// The Terraform modules' `name`: the prefix of every resource.
    #[arg(long, default_value = DEFAULT_PREFIX)]
    pub name_prefix: String,
    /// The tier-1 table (default: <prefix>-tier1).
    #[arg(long, env = "VWR_TABLE")]
    pub table: Option<String>,
    /// The edge KeyValueStore's ARN (the edge module's output `kvs_arn`); without it the
    /// store's rows are not checked.
    #[arg(long, env = "VWR_EDGE_KVS_ARN")]
    pub kvs_arn: Option<String>,
    /// The CloudFront-scope WAF web ACL's name (default: <prefix>-edge).
    #[arg(long)]
    pub web_acl: Option<String>,
    /// The rows as JSON.
    #[arg(long)]
    pub json: bool,
    /// Fail (exit 1) on any row not checked, not only on a shortfall.
    #[arg(long)]
    pub strict: bool,
}

impl PreflightArgs {
    /// The names read: the Terraform naming of the prefix, less what the flags override.
    pub fn names(&self) -> Names {
        let mut names = Names::new(&self.name_prefix);
        if let Some(t) = &self.table {
            names.table.clone_from(t);
        }
        if let Some(w) = &self.web_acl {
            names.web_acl.clone_from(w);
        }
        names.kvs_arn.clone_from(&self.kvs_arn);
        names
    }
}

/// The needs of the `--plan` file, if one is given.
pub fn read_plan(path: Option<&Path>) -> Result<Option<PlanNeeds>, PreflightError> {
    let Some(path) = path else { return Ok(None) };
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| PreflightError::PlanUnreadable { path: name.clone(), reason: e.to_string() })?;
    PlanNeeds::from_json(&name, &text).map(Some)
}

#[cfg(feature = "preflight")]
/// Reads the account and the stack named by `names` and judges them against `plan`.
pub async fn preflight(sdk: &aws_config::SdkConfig, names: &Names, plan: Option<&PlanNeeds>) -> Report {
    let seen = aws::observe(sdk, names).await;
    judge(&seen, names, plan)
}

/// The report as printed: the table, or `--json`'s object.
pub fn render(report: &Report, json: bool) -> Result<String, PreflightError> {
    if json {
        serde_json::to_string_pretty(&report.json()).map_err(|e| PreflightError::Render(e.to_string()))
    } else {
        Ok(vwr_preflight::render_table(report))
    }
}

/// What `vwr preflight` prints and its exit code (1 on a blocking shortfall, 2 when nothing
/// could be checked), or why it cannot run (the caller exits 2): no region, no credentials —
/// said once, not once per row.
#[cfg(not(feature = "preflight"))]
pub async fn run(args: PreflightArgs) -> Result<(String, u8), PreflightError> {
    read_plan(args.plan.as_deref())?;
    Err(PreflightError::NotBuilt)
}

/// What `vwr preflight` prints and its exit code (see above).
#[cfg(feature = "preflight")]
pub async fn run(args: PreflightArgs) -> Result<(String, u8), PreflightError> {
    use aws_credential_types::provider::ProvideCredentials;
    let needs = read_plan(args.plan.as_deref())?;
    let names = args.names();
    let sdk = aws::sdk_config().await;
    if sdk.region().is_none() {
        return Err(PreflightError::NoRegion);
    }
    let Some(creds) = sdk.credentials_provider() else {
        return Err(PreflightError::NoCredentials("no credentials provider".into()));
    };
    if let Err(e) = creds.provide_credentials().await {
        // The innermost cause says why ("IMDS is disabled…"); the outer one only that it failed.
        return Err(PreflightError::NoCredentials(crate::human::root_cause(&e)));
    }
    aws::reachable(&sdk).await?;
    let report = preflight(&sdk, &names, needs.as_ref()).await;
    Ok((render(&report, args.json)?, report.exit_code(args.strict)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: PreflightArgs,
    }

    fn args(argv: &[&str]) -> PreflightArgs {
        let mut all = vec!["vwr"];
        all.extend_from_slice(argv);
        Cli::try_parse_from(all).unwrap().args
    }

    #[test]
    fn names_follow_the_prefix_unless_a_flag_says_otherwise() {
        let a = args(&["--name-prefix", "shop", "--web-acl", "my-acl", "--kvs-arn", "arn:kvs"]);
        let n = a.names();
        assert_eq!(n.prefix, "shop");
        assert_eq!(n.web_acl, "my-acl");
        assert_eq!(n.kvs_arn.as_deref(), Some("arn:kvs"));
        if std::env::var_os("VWR_TABLE").is_none() {
            assert_eq!(n.table, "shop-tier1");
        }
        assert_eq!(args(&["--table", "t"]).names().table, "t");
    }

    #[test]
    fn a_plan_file_that_is_missing_or_not_a_plan_names_itself() {
        let e = read_plan(Some(Path::new("/nonexistent/plan.json"))).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/plan.json"), "{e}");
        let dir = std::env::temp_dir().join(format!("vwr-preflight-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("not-a-plan.json");
        std::fs::write(&file, r#"{"hello": 1}"#).unwrap();
        let e = read_plan(Some(&file)).unwrap_err();
        assert!(e.to_string().contains("not a `vwr plan --json` file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read_plan(None).unwrap(), None);
    }

    #[test]
    fn json_output_carries_the_rows_and_the_verdict() {
        let report = Report { checks: vec![] };
        let v: serde_json::Value = serde_json::from_str(&render(&report, true).unwrap()).unwrap();
        assert_eq!(v["blocking"], false);
        assert!(v["checks"].as_array().unwrap().is_empty());
        assert!(render(&report, false).unwrap().starts_with("check"));
    }
}
