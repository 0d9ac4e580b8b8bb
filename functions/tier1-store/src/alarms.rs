//! The health gate's CloudWatch side (docs/outflow.md#health-gate): the advancer holds an
//! event while one of its configured alarms is in ALARM. One `DescribeAlarms` call answers
//! for every alarm and is cached for a few seconds, so the cost does not grow with events.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_cloudwatch::Client;
use aws_sdk_cloudwatch::types::StateValue;
use vwr_core::EventId;
use vwr_core::cache::TtlCache;
use vwr_core::time::Clock;
use vwr_tier1::config::HealthAlarms;
use vwr_tier1::store::{AlarmStates, HealthSignal};

/// How long one reading of the alarms is used.
pub const ALARM_CACHE: Duration = Duration::from_secs(5);
/// `DescribeAlarms` takes at most 100 names per call.
const NAMES_PER_CALL: usize = 100;

/// Reads the configured alarms' states from CloudWatch.
pub struct CloudWatchAlarms {
    client: Client,
    alarms: HealthAlarms,
    cache: TtlCache<(), HashSet<String>>,
}

impl std::fmt::Debug for CloudWatchAlarms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudWatchAlarms").field("alarms", &self.alarms).finish()
    }
}

impl CloudWatchAlarms {
    pub fn new(client: Client, alarms: HealthAlarms, clock: Arc<dyn Clock>) -> Self {
        Self { client, alarms, cache: TtlCache::with_clock(ALARM_CACHE, clock) }
    }

    /// The configured alarms now in ALARM.
    async fn alarming(&self) -> Result<HashSet<String>, String> {
        if let Some(set) = self.cache.get(&()) {
            return Ok(set);
        }
        let mut set = HashSet::new();
        for names in self.alarms.names().chunks(NAMES_PER_CALL) {
            let mut next: Option<String> = None;
            loop {
                let out = self
                    .client
                    .describe_alarms()
                    .set_alarm_names(Some(names.to_vec()))
                    .state_value(StateValue::Alarm)
                    .set_next_token(next.take())
                    .send()
                    .await
                    .map_err(|e| {
                        format!("DescribeAlarms: {}", aws_sdk_cloudwatch::error::DisplayErrorContext(&e))
                    })?;
                // The state is checked here too, not only by the request's filter (an emulator
                // may ignore it).
                let alarming = |name: Option<&str>, state: Option<&StateValue>| {
                    (state == Some(&StateValue::Alarm)).then(|| name.map(str::to_owned)).flatten()
                };
                set.extend(
                    out.metric_alarms().iter().filter_map(|a| alarming(a.alarm_name(), a.state_value())),
                );
                set.extend(
                    out.composite_alarms().iter().filter_map(|a| alarming(a.alarm_name(), a.state_value())),
                );
                match out.next_token() {
                    Some(t) if !t.is_empty() => next = Some(t.to_owned()),
                    _ => break,
                }
            }
        }
        self.cache.insert((), set.clone());
        Ok(set)
    }
}

#[async_trait]
impl HealthSignal for CloudWatchAlarms {
    async fn alarm(&self, event: &EventId) -> Result<Option<String>, String> {
        if self.alarms.is_empty() {
            return Ok(None);
        }
        let alarming = self.alarming().await?;
        Ok(self.alarms.for_event(event).find(|a| alarming.contains(*a)).map(str::to_owned))
    }
}

/// The state of any named alarm, for standby events (docs/lifecycle.md#standby): one
/// `DescribeAlarms` of that name, its answer used for [`ALARM_CACHE`].
pub struct CloudWatchAlarmStates {
    client: Client,
    cache: TtlCache<String, bool>,
}

impl std::fmt::Debug for CloudWatchAlarmStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudWatchAlarmStates").finish_non_exhaustive()
    }
}

impl CloudWatchAlarmStates {
    pub fn new(client: Client, clock: Arc<dyn Clock>) -> Self {
        Self { client, cache: TtlCache::with_clock(ALARM_CACHE, clock) }
    }
}

#[async_trait]
impl AlarmStates for CloudWatchAlarmStates {
    async fn in_alarm(&self, name: &str) -> Result<bool, String> {
        if let Some(state) = self.cache.get(&name.to_owned()) {
            return Ok(state);
        }
        let out =
            self.client.describe_alarms().alarm_names(name).send().await.map_err(|e| {
                format!("DescribeAlarms: {}", aws_sdk_cloudwatch::error::DisplayErrorContext(&e))
            })?;
        let metric =
            out.metric_alarms().iter().find(|a| a.alarm_name() == Some(name)).map(|a| a.state_value());
        let composite =
            out.composite_alarms().iter().find(|a| a.alarm_name() == Some(name)).map(|a| a.state_value());
        let state = metric.or(composite).ok_or_else(|| format!("no alarm named {name:?}"))?;
        let alarm = state == Some(&StateValue::Alarm);
        self.cache.insert(name.to_owned(), alarm);
        Ok(alarm)
    }
}
