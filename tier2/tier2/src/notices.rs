//! Admission notices: what the worker sends for every admission (`{action:"admitted",
//! eventId, userId, jti, admittedAt}`, never a token) and where it sends them — a
//! [`NoticeSink`]: SQS FIFO in AWS (`vwr_tier2_store::sqs`), [`MemoryNotices`] locally. A
//! failed send never blocks or undoes an admission (docs/adr/0010-admission-notices.md).

use std::sync::Mutex;

use async_trait::async_trait;
use serde::Serialize;
use vwr_core::EventId;

use crate::model::PendingNotice;

/// SQS takes at most 10 messages per batch; sinks are handed at most this many at once.
pub const SQS_BATCH: usize = 10;

/// The message body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoticeBody<'a> {
    pub action: &'static str,
    pub event_id: &'a str,
    pub user_id: &'a str,
    pub jti: &'a str,
    /// Milliseconds since the epoch.
    pub admitted_at: u64,
}

/// Where notices go.
#[async_trait]
pub trait NoticeSink: Send + Sync + 'static {
    /// Sends up to [`SQS_BATCH`] notices; returns the indices that failed.
    async fn send(&self, event: &EventId, batch: &[PendingNotice]) -> Vec<usize>;
    /// For logs.
    fn name(&self) -> &'static str;
}

/// Most notices [`MemoryNotices`] keeps (the oldest are forgotten).
const MEMORY_NOTICES_KEPT: usize = 10_000;

/// Keeps the latest notices in memory (local server without SQS, Lambdas without a queue,
/// tests).
#[derive(Debug, Default)]
pub struct MemoryNotices {
    sent: Mutex<std::collections::VecDeque<(EventId, PendingNotice)>>,
}

impl MemoryNotices {
    pub fn sent(&self) -> Vec<(EventId, PendingNotice)> {
        self.sent.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
    }
}

#[async_trait]
impl NoticeSink for MemoryNotices {
    async fn send(&self, event: &EventId, batch: &[PendingNotice]) -> Vec<usize> {
        let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        for n in batch {
            tracing::debug!(event = "tier2.notice", event_id = %event, user = %n.user_id, jti = %n.jti);
            sent.push_back((event.clone(), n.clone()));
            if sent.len() > MEMORY_NOTICES_KEPT {
                sent.pop_front();
            }
        }
        Vec::new()
    }

    fn name(&self) -> &'static str {
        "memory"
    }
}
