//! Admission notices to an SQS FIFO queue: `MessageGroupId` = eventId,
//! `MessageDeduplicationId` = `userId:eventId:jti` (the admission's `jti`, so a re-admission
//! within SQS's 5-minute deduplication window is not swallowed as a duplicate of the first),
//! sent in batches of up to 10 with a bounded timeout (docs/adr/0010-admission-notices.md).

use std::time::Duration;

use async_trait::async_trait;
use aws_lc_rs::digest;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use vwr_core::EventId;
use vwr_tier2::model::PendingNotice;
use vwr_tier2::notices::{NoticeBody, NoticeSink};

/// `userId:eventId:jti`, or its SHA-256 (hex) when that is longer than SQS's 128 characters
/// or holds characters SQS does not allow.
pub fn dedup_id(user: &str, event: &EventId, jti: &str) -> String {
    let id = format!("{user}:{event}:{jti}");
    let ok = id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        id
    } else {
        digest::digest(&digest::SHA256, id.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// SQS FIFO sink.
#[derive(Debug, Clone)]
pub struct SqsNotices {
    client: aws_sdk_sqs::Client,
    queue_url: String,
    timeout: Duration,
}

impl SqsNotices {
    pub fn new(client: aws_sdk_sqs::Client, queue_url: impl Into<String>, timeout: Duration) -> Self {
        Self { client, queue_url: queue_url.into(), timeout }
    }
}

#[async_trait]
impl NoticeSink for SqsNotices {
    async fn send(&self, event: &EventId, batch: &[PendingNotice]) -> Vec<usize> {
        let mut entries = Vec::with_capacity(batch.len());
        for (i, n) in batch.iter().enumerate() {
            let body = NoticeBody {
                action: "admitted",
                event_id: event.as_str(),
                user_id: &n.user_id,
                jti: &n.jti,
                admitted_at: n.admitted_at,
            };
            let entry = SendMessageBatchRequestEntry::builder()
                .id(i.to_string())
                .message_body(serde_json::to_string(&body).unwrap_or_default())
                .message_group_id(event.as_str())
                .message_deduplication_id(dedup_id(&n.user_id, event, &n.jti))
                .build();
            match entry {
                Ok(e) => entries.push(e),
                Err(e) => tracing::error!(event = "tier2.notice_build_failed", error = %e),
            }
        }
        let all: Vec<usize> = (0..batch.len()).collect();
        let call =
            self.client.send_message_batch().queue_url(&self.queue_url).set_entries(Some(entries)).send();
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(out)) => out.failed().iter().filter_map(|f| f.id().parse().ok()).collect(),
            Ok(Err(e)) => {
                tracing::warn!(event = "tier2.notice_send_failed", event_id = %event, error = %aws_sdk_sqs::error::DisplayErrorContext(&e));
                all
            }
            Err(_) => {
                tracing::warn!(event = "tier2.notice_send_timeout", event_id = %event, timeout_ms = self.timeout.as_millis() as u64);
                all
            }
        }
    }

    fn name(&self) -> &'static str {
        "sqs"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_ids_fit_sqs() {
        let e = EventId::parse("e1").unwrap();
        assert_eq!(dedup_id("alice", &e, "j1"), "alice:e1:j1");
        let long = "v".repeat(200);
        let d = dedup_id(&long, &e, "j1");
        assert_eq!(d.len(), 64);
        assert_eq!(d, dedup_id(&long, &e, "j1"));
        assert_ne!(dedup_id("é", &e, "j1"), "é:e1:j1");
    }

    /// Review finding 15: a second admission of the same user within SQS's 5-minute
    /// deduplication window must not be dropped as a duplicate of the first.
    #[test]
    fn a_readmission_is_not_a_duplicate() {
        let e = EventId::parse("e1").unwrap();
        assert_ne!(dedup_id("alice", &e, "w1.1"), dedup_id("alice", &e, "w7.3"));
    }
}
