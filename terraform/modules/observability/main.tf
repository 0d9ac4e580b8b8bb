# Alarms and a dashboard for vwr. Inputs are the tier modules' outputs.
#
# Metrics used: API Gateway (5xx, Count), Lambda (Errors, Throttles), SQS (DLQ depth), the EMF
# metrics the functions print (namespace vwr, dimension EventId: Served, ServingCounter,
# QueueLength, AdvancerStuck, AdvancerHeld, Admitted, ActiveUsers, …), log metric filters:
# one per completed advancer / worker run (`tier1.advancer_run`, `tier2.worker_run` JSON log
# lines), refused proofs by kind, failed notices, the wait of each first admission
# (`tier1.admitted`'s `wait_seconds`: the dashboard's wait percentiles), and — for the health gate's example alarm — the origin's 5xx rate (CloudFront's
# 5xxErrorRate, or the protected-API gate's 5XXError).

data "aws_region" "current" {}

locals {
  tier2         = var.tier2 != null
  apis          = merge({ tier1 = var.tier1.public_api_id }, local.tier2 ? { tier2 = var.tier2.public_api_id } : {})
  serving       = merge({ "tier1-api" = var.tier1.function_names["api"], "tier1-admin" = var.tier1.function_names["admin"] }, local.tier2 ? { "tier2-api" = var.tier2.function_names["api"], "tier2-authorizer" = var.tier2.function_names["authorizer"] } : {})
  scheduled     = merge({ "tier1-advancer" = var.tier1.function_names["advancer"] }, local.tier2 ? { "tier2-worker" = var.tier2.function_names["worker"] } : {})
  all_functions = merge(local.serving, local.scheduled)
  namespace     = "vwr"
}

# ---------------------------------------------------------------------------------------------
# API 5xx rate

resource "aws_cloudwatch_metric_alarm" "api_5xx" {
  for_each            = local.apis
  alarm_name          = "${var.name}-${each.key}-api-5xx"
  alarm_description   = "More than ${var.api_5xx_percent}% of ${each.key} API requests fail with 5xx (503 = DynamoDB or Redis trouble; see the function logs)."
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.api_5xx_percent
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  metric_query {
    id          = "rate"
    expression  = "IF(requests >= ${var.api_min_requests}, 100 * errors / requests, 0)"
    label       = "5xx %"
    return_data = true
  }
  metric_query {
    id = "errors"
    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "5xx"
      dimensions  = { ApiId = each.value }
      period      = 60
      stat        = "Sum"
    }
  }
  metric_query {
    id = "requests"
    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "Count"
      dimensions  = { ApiId = each.value }
      period      = 60
      stat        = "Sum"
    }
  }
}

# ---------------------------------------------------------------------------------------------
# The origin's 5xx rate: an example alarm for the health gate (docs/outflow.md#health-gate). Put
# its name in the tier-1 module's health_alarm_names and the advancer holds every event while it
# is in ALARM: nobody new is let in while the site is failing, and everybody keeps their place.
#
# The advancer reads alarms of its own region, and an alarm can only watch metrics of its own
# region. CloudFront publishes its metrics in us-east-1 only, so the "cloudfront" source needs
# this module in us-east-1; elsewhere the "protected-api" source watches the protected-API gate
# in front of the booking backend (regional). A metric alarm, not a composite one: the advancer
# asks DescribeAlarms for metric alarms, on their ARNs only.
#
# Not one resource with api_5xx: its name goes to the tier-1 module, so it must not depend on
# the tier modules' outputs (a cycle).

locals {
  origin_5xx_source = var.origin_5xx == null ? null : var.origin_5xx.source
  # What var.origin_5xx names, "" where it names nothing: the preconditions say what is missing.
  origin_5xx = { for k in ["distribution_id", "api_name", "api_stage"] : k => try(var.origin_5xx[k], null) == null ? "" : var.origin_5xx[k] }
  # The alarm's sources: what differs between them. The one of var.origin_5xx is made.
  origin_5xx_sources = {
    cloudfront = {
      through = "CloudFront ${local.origin_5xx.distribution_id}"
      # 5xxErrorRate is a percentage already.
      rate       = "errors"
      errors     = { namespace = "AWS/CloudFront", metric_name = "5xxErrorRate", stat = "Average" }
      requests   = { namespace = "AWS/CloudFront", metric_name = "Requests", stat = "Sum" }
      dimensions = { DistributionId = local.origin_5xx.distribution_id, Region = "Global" }
    }
    protected-api = {
      through    = "the protected-API gate ${local.origin_5xx.api_name} (the booking backend behind it)"
      rate       = "100 * errors / requests"
      errors     = { namespace = "AWS/ApiGateway", metric_name = "5XXError", stat = "Sum" }
      requests   = { namespace = "AWS/ApiGateway", metric_name = "Count", stat = "Sum" }
      dimensions = { ApiName = local.origin_5xx.api_name, Stage = local.origin_5xx.api_stage }
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "origin_5xx" {
  for_each            = { for k, source in local.origin_5xx_sources : k => source if k == local.origin_5xx_source }
  alarm_name          = "${var.name}-origin-5xx"
  alarm_description   = "More than ${var.origin_5xx_percent}% of the requests through ${each.value.through} fail with 5xx in 2 of 3 minutes (only with >= ${var.origin_5xx_min_requests} requests per minute). In the advancer's VWR_HEALTH_ALARMS it holds the waiting room's outflow (docs/outflow.md#health-gate)."
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.origin_5xx_percent
  evaluation_periods  = 3
  datapoints_to_alarm = 2
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  metric_query {
    id          = "rate"
    expression  = "IF(requests >= ${var.origin_5xx_min_requests}, ${each.value.rate}, 0)"
    label       = "origin 5xx %"
    return_data = true
  }
  metric_query {
    id = "errors"
    metric {
      namespace   = each.value.errors.namespace
      metric_name = each.value.errors.metric_name
      dimensions  = each.value.dimensions
      period      = 60
      stat        = each.value.errors.stat
    }
  }
  metric_query {
    id = "requests"
    metric {
      namespace   = each.value.requests.namespace
      metric_name = each.value.requests.metric_name
      dimensions  = each.value.dimensions
      period      = 60
      stat        = each.value.requests.stat
    }
  }

  lifecycle {
    precondition {
      condition     = each.key != "cloudfront" || data.aws_region.current.name == "us-east-1"
      error_message = "origin_5xx.source = \"cloudfront\" needs this module in us-east-1: CloudFront publishes its metrics there only, an alarm cannot watch another region's metrics, and the advancer reads alarms of its own region. Use source = \"protected-api\", or an alarm of your own origin in this region (tier-1 health_alarm_names)."
    }
    precondition {
      condition     = each.key != "cloudfront" || length(local.origin_5xx.distribution_id) > 0
      error_message = "origin_5xx.source = \"cloudfront\" needs origin_5xx.distribution_id."
    }
    precondition {
      condition     = each.key != "protected-api" || (length(local.origin_5xx.api_name) > 0 && length(local.origin_5xx.api_stage) > 0)
      error_message = "origin_5xx.source = \"protected-api\" needs origin_5xx.api_name and api_stage (the tier-2 module's protected_api_name and protected_api_stage)."
    }
  }
}

# ---------------------------------------------------------------------------------------------
# Alarms on one metric: one per entry of local.metric_alarms (<name>-<key>).
#
# - <function>-errors, <function>-throttles: every Lambda function; a scheduled one alarms on any
#   error.
# - tier1-advancer-not-running, tier2-worker-not-running: completed scheduled runs (a log metric
#   below). Missing runs = the schedule, the role or the function is broken, and nobody is being
#   let in: missing data breaches.
# - tier2-notice-failures, tier2-notice-dlq: admission notices.
#
# A conditional entry stands alone in its `cond ? { … } : {}`: entries of different types in one
# object cannot be unified with the empty one.

locals {
  metric_alarms = merge(
    { for k, fn in local.all_functions : "${k}-errors" => {
      description         = "${fn} reports errors (start-up failures are logged as event=startup_failed)."
      namespace           = "AWS/Lambda"
      metric_name         = "Errors"
      dimensions          = { FunctionName = fn }
      statistic           = "Sum"
      period              = 300
      evaluation_periods  = 1
      datapoints_to_alarm = null
      comparison_operator = "GreaterThanThreshold"
      threshold           = contains(keys(local.scheduled), k) ? 0 : var.function_error_threshold
      treat_missing_data  = "notBreaching"
    } },
    { for k, fn in local.all_functions : "${k}-throttles" => {
      description         = "${fn} is throttled: its reserved or the account's concurrency is exhausted."
      namespace           = "AWS/Lambda"
      metric_name         = "Throttles"
      dimensions          = { FunctionName = fn }
      statistic           = "Sum"
      period              = 60
      evaluation_periods  = 3
      datapoints_to_alarm = 2
      comparison_operator = "GreaterThanThreshold"
      threshold           = 0
      treat_missing_data  = "notBreaching"
    } },
    {
      "tier1-advancer-not-running" = {
        description         = "Fewer than 3 completed advancer runs in 5 minutes: servingCounter is not advancing (check the schedule ${var.name}-tier1-advancer and the function's logs)."
        namespace           = local.namespace
        metric_name         = aws_cloudwatch_log_metric_filter.advancer_runs.metric_transformation[0].name
        dimensions          = null
        statistic           = "Sum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "LessThanThreshold"
        threshold           = 3
        treat_missing_data  = "breaching"
      }
    },
    {
      "tier1-edge-sync-failing" = {
        description         = "The edge's configuration (CloudFront KeyValueStore: gated events, revoked passes) could not be written: new activations and standby openings are not gated at the edge, deactivations stick, revocations do not reach it. Look for tier1.edge_sync_failed (TooLarge: too many live revocations beside the event list; see docs/passes.md)."
        namespace           = local.namespace
        metric_name         = aws_cloudwatch_log_metric_filter.tier1_errors["edge-sync-failures-admin"].metric_transformation[0].name
        dimensions          = null
        statistic           = "Sum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "GreaterThanThreshold"
        threshold           = 0
        treat_missing_data  = "notBreaching"
      }
    },
    {
      "tier1-standby-alarm-unreadable" = {
        description         = "The advancer cannot read the alarm a standby event waits for (deleted, renamed or outside standby_alarm_names since the standby was set): the event will not open when the site falls over. Look for tier1.standby_alarm_unreadable; vwr admin status shows standbyAlarmState."
        namespace           = local.namespace
        metric_name         = aws_cloudwatch_log_metric_filter.tier1_errors["standby-alarm-unreadable"].metric_transformation[0].name
        dimensions          = null
        statistic           = "Sum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "GreaterThanThreshold"
        threshold           = 0
        treat_missing_data  = "notBreaching"
      }
    },
    local.tier2 ? {
      "tier2-worker-not-running" = {
        description         = "Fewer than 3 completed admission-worker runs in 5 minutes: nobody is admitted from the tier-2 lines."
        namespace           = local.namespace
        metric_name         = aws_cloudwatch_log_metric_filter.worker_runs[0].metric_transformation[0].name
        dimensions          = null
        statistic           = "Sum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "LessThanThreshold"
        threshold           = 3
        treat_missing_data  = "breaching"
      }
    } : {},
    local.tier2 ? {
      "tier2-notice-failures" = {
        description         = "Admission notices fail to reach SQS (admissions still happen; consumers miss notices). Look for tier2.notice_send_failed / notice_dropped."
        namespace           = local.namespace
        metric_name         = aws_cloudwatch_log_metric_filter.notice_failures[0].metric_transformation[0].name
        dimensions          = null
        statistic           = "Sum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "GreaterThanThreshold"
        threshold           = var.notice_failure_threshold
        treat_missing_data  = "notBreaching"
      }
    } : {},
    local.tier2 ? {
      "tier2-notice-dlq" = {
        description         = "Admission notices reached the dead-letter queue ${var.tier2.notice_dlq_name}: a consumer keeps failing on them."
        namespace           = "AWS/SQS"
        metric_name         = "ApproximateNumberOfMessagesVisible"
        dimensions          = { QueueName = var.tier2.notice_dlq_name }
        statistic           = "Maximum"
        period              = 300
        evaluation_periods  = 1
        datapoints_to_alarm = null
        comparison_operator = "GreaterThanThreshold"
        threshold           = 0
        treat_missing_data  = "notBreaching"
      }
    } : {},
  )
}

resource "aws_cloudwatch_metric_alarm" "metric" {
  for_each            = local.metric_alarms
  alarm_name          = "${var.name}-${each.key}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric_name
  dimensions          = each.value.dimensions
  statistic           = each.value.statistic
  period              = each.value.period
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.datapoints_to_alarm
  comparison_operator = each.value.comparison_operator
  threshold           = each.value.threshold
  treat_missing_data  = each.value.treat_missing_data
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
}

# ---------------------------------------------------------------------------------------------
# Log metrics: one log line per completed scheduled run (advancer, worker), the refused proofs,
# the failed admission notices.

resource "aws_cloudwatch_log_metric_filter" "advancer_runs" {
  name           = "${var.name}-advancer-runs"
  log_group_name = var.tier1.log_group_names["advancer"]
  pattern        = "{ $.event = \"tier1.advancer_run\" }"

  metric_transformation {
    name          = "AdvancerRuns"
    namespace     = local.namespace
    value         = "1"
    default_value = "0"
  }
}

# Tier-1 errors an operator must hear of, one count per log line: the edge configuration not
# written (docs/failures.md#edge-configuration; the admin function on a change, the advancer
# reconciling every minute: one metric, a filter per log group) and a standby event's alarm
# the advancer cannot read (docs/lifecycle.md#standby).
locals {
  tier1_error_filters = {
    "edge-sync-failures-admin"    = { role = "admin", event = "tier1.edge_sync_failed", metric = "EdgeSyncFailures" }
    "edge-sync-failures-advancer" = { role = "advancer", event = "tier1.edge_sync_failed", metric = "EdgeSyncFailures" }
    "standby-alarm-unreadable"    = { role = "advancer", event = "tier1.standby_alarm_unreadable", metric = "StandbyAlarmUnreadable" }
  }
}

resource "aws_cloudwatch_log_metric_filter" "tier1_errors" {
  for_each       = local.tier1_error_filters
  name           = "${var.name}-${each.key}"
  log_group_name = var.tier1.log_group_names[each.value.role]
  pattern        = "{ $.event = \"${each.value.event}\" }"

  metric_transformation {
    name          = each.value.metric
    namespace     = local.namespace
    value         = "1"
    default_value = "0"
  }
}

# Refused proofs (docs/abuse.md): a ticket checked without its secret (stolen or pasted), a bad
# or replayed proof of work, a bad enqueue token. No alarm: what is normal depends on the sale;
# the dashboard shows them by kind.
resource "aws_cloudwatch_log_metric_filter" "proofs_refused" {
  name           = "${var.name}-proofs-refused"
  log_group_name = var.tier1.log_group_names["api"]
  pattern        = "{ $.event = \"tier1.proof_refused\" }"

  metric_transformation {
    name       = "ProofsRefused"
    namespace  = local.namespace
    value      = "1"
    dimensions = { Kind = "$.kind" }
  }
}

# The wait of each first admission, from the join (or the open, for a pre-queue ticket) to the
# redemption: the `wait_seconds` of the `tier1.admitted` log line, for the dashboard's wait
# percentiles. The report after the sale (docs/operate.md#the-report-after-the-sale) reads its
# own per-minute counts from the table, not this.
resource "aws_cloudwatch_log_metric_filter" "wait_seconds" {
  name           = "${var.name}-wait-seconds"
  log_group_name = var.tier1.log_group_names["api"]
  pattern        = "{ $.event = \"tier1.admitted\" && $.wait_seconds >= 0 }"

  metric_transformation {
    name      = "WaitSeconds"
    namespace = local.namespace
    value     = "$.wait_seconds"
    unit      = "Seconds"
  }
}

resource "aws_cloudwatch_log_metric_filter" "worker_runs" {
  count          = local.tier2 ? 1 : 0
  name           = "${var.name}-worker-runs"
  log_group_name = var.tier2.log_group_names["worker"]
  pattern        = "{ $.event = \"tier2.worker_run\" }"

  metric_transformation {
    name          = "WorkerRuns"
    namespace     = local.namespace
    value         = "1"
    default_value = "0"
  }
}

resource "aws_cloudwatch_log_metric_filter" "notice_failures" {
  count          = local.tier2 ? 1 : 0
  name           = "${var.name}-notice-failures"
  log_group_name = var.tier2.log_group_names["worker"]
  pattern        = "{ $.event = \"tier2.worker_run\" && $.notices_failed > 0 }"

  metric_transformation {
    name          = "NoticeFailuresTotal"
    namespace     = local.namespace
    value         = "$.notices_failed"
    default_value = "0"
  }
}

# ---------------------------------------------------------------------------------------------
# Line stalled: people wait and nobody is served while the advancer runs. Alarms cannot SEARCH
# over EventId, so the waiting-but-not-served half is per event (var.stall_alarm_event_ids);
# the AdvancerStuck half also has a catch-all over every event (a Metrics Insights query).
#
# Missing data is not breaching: the advancer emits QueueLength and Served only at steps of an
# event that advances automatically, so silence means deactivated or manual (batchSize 0) —
# not stalled. An advancer that stopped running is the advancer-not-running alarm's case.

resource "aws_cloudwatch_metric_alarm" "line_stalled" {
  for_each            = toset(var.stall_alarm_event_ids)
  alarm_name          = "${var.name}-tier1-line-stalled-${each.key}"
  alarm_description   = "Event ${each.key}: people wait (QueueLength > 0) and nobody was served for 5 minutes, or the advancer cannot advance it (AdvancerStuck). Check it is not deactivated or manual (batchSize 0): `vwr admin --sigv4 status ${each.key}`, and the advancer logs for tier1.advancer_stuck."
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  metric_query {
    id          = "stalled"
    expression  = "IF((FILL(waiting, 0) > 0 AND FILL(served, 0) == 0) OR FILL(stuck, 0) > 0, 1, 0)"
    label       = "line stalled"
    return_data = true
  }
  metric_query {
    id = "waiting"
    metric {
      namespace   = local.namespace
      metric_name = "QueueLength"
      dimensions  = { EventId = each.key }
      period      = 300
      stat        = "Maximum"
    }
  }
  metric_query {
    id = "served"
    metric {
      namespace   = local.namespace
      metric_name = "Served"
      dimensions  = { EventId = each.key }
      period      = 300
      stat        = "Sum"
    }
  }
  metric_query {
    id = "stuck"
    metric {
      namespace   = local.namespace
      metric_name = "AdvancerStuck"
      dimensions  = { EventId = each.key }
      period      = 300
      stat        = "Sum"
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "advancer_stuck" {
  alarm_name          = "${var.name}-tier1-advancer-stuck"
  alarm_description   = "The advancer found an event whose stored step lies in the future and cannot advance it (AdvancerStuck, any event): its line is stalled. Find the event in the advancer logs (tier1.advancer_stuck), check `vwr admin --sigv4 status <event>`."
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  metric_query {
    id          = "stuck"
    expression  = "SELECT SUM(AdvancerStuck) FROM SCHEMA(\"${local.namespace}\", EventId)"
    period      = 300
    label       = "AdvancerStuck, all events"
    return_data = true
  }
}

# ---------------------------------------------------------------------------------------------
# Dashboard

locals {
  region = data.aws_region.current.name
  api_widgets = [for k, id in local.apis : {
    type   = "metric"
    width  = 12
    height = 6
    properties = {
      title   = "${k} API: requests, 4xx, 5xx"
      region  = local.region
      stat    = "Sum"
      period  = 60
      metrics = [["AWS/ApiGateway", "Count", "ApiId", id], [".", "4xx", ".", "."], [".", "5xx", ".", "."]]
    }
  }]
  latency_widgets = [for k, id in local.apis : {
    type   = "metric"
    width  = 12
    height = 6
    properties = {
      title   = "${k} API latency (ms)"
      region  = local.region
      period  = 60
      metrics = [["AWS/ApiGateway", "Latency", "ApiId", id, { stat = "p50" }], ["...", { stat = "p99" }]]
    }
  }]
  function_widgets = [for metric in ["Invocations", "Errors", "Throttles", "ConcurrentExecutions"] : {
    type   = "metric"
    width  = 12
    height = 6
    properties = {
      title   = "Lambda ${metric}"
      region  = local.region
      stat    = metric == "ConcurrentExecutions" ? "Maximum" : "Sum"
      period  = 60
      metrics = [for k, fn in local.all_functions : ["AWS/Lambda", metric, "FunctionName", fn, { label = k }]]
    }
  }]
  emf_widgets = [for m in concat(["QueueLength", "ServingCounter", "Served", "AdvancerStuck", "AdvancerHeld"], local.tier2 ? ["Admitted", "ActiveUsers", "Evicted", "StaleRemoved", "OverThresholdAttempts"] : []) : {
    type   = "metric"
    width  = 8
    height = 6
    properties = {
      title   = "${m} by event"
      region  = local.region
      period  = 60
      metrics = [[{ expression = "SEARCH('{${local.namespace},EventId} MetricName=\"${m}\"', '${contains(["Served", "AdvancerStuck", "AdvancerHeld", "Admitted", "Evicted", "StaleRemoved", "OverThresholdAttempts"], m) ? "Sum" : "Maximum"}', 60)", id = "e1", label = "" }]]
    }
  }]
  abuse_widget = [{
    type   = "metric"
    width  = 8
    height = 6
    properties = {
      title   = "Refused proofs by kind (stolen tickets, proofs of work, enqueue tokens)"
      region  = local.region
      period  = 60
      metrics = [[{ expression = "SEARCH('{${local.namespace},Kind} MetricName=\"ProofsRefused\"', 'Sum', 60)", id = "p1", label = "" }]]
    }
  }]
  wait_widget = [{
    type   = "metric"
    width  = 8
    height = 6
    properties = {
      title  = "Wait from the join to the first admission (p50, p90, p99)"
      region = local.region
      period = 60
      metrics = [
        [local.namespace, aws_cloudwatch_log_metric_filter.wait_seconds.metric_transformation[0].name, { stat = "p50", label = "p50" }],
        [local.namespace, aws_cloudwatch_log_metric_filter.wait_seconds.metric_transformation[0].name, { stat = "p90", label = "p90" }],
        [local.namespace, aws_cloudwatch_log_metric_filter.wait_seconds.metric_transformation[0].name, { stat = "p99", label = "p99" }],
      ]
    }
  }]
  # One widget per element of a for (a conditional between two tuples of different widget
  # shapes is a type error when tier 2 is set).
  tier2_widgets = [for w in [
    {
      type   = "metric"
      width  = 12
      height = 6
      properties = {
        title   = "Admission notices (SQS)"
        region  = local.region
        stat    = "Sum"
        period  = 60
        metrics = [["AWS/SQS", "NumberOfMessagesSent", "QueueName", var.tier2.notice_queue_name], [".", "ApproximateNumberOfMessagesVisible", ".", ".", { stat = "Maximum" }], [".", "ApproximateNumberOfMessagesVisible", ".", var.tier2.notice_dlq_name, { stat = "Maximum", label = "DLQ" }], [local.namespace, "NoticeFailuresTotal"]]
      }
    },
    {
      type   = "metric"
      width  = 12
      height = 6
      properties = {
        title   = "Redis (ElastiCache Serverless)"
        region  = local.region
        period  = 60
        metrics = [["AWS/ElastiCache", "ElastiCacheProcessingUnits", "clusterId", var.tier2.redis_cache_name, { stat = "Sum" }], [".", "BytesUsedForCache", ".", ".", { stat = "Maximum", yAxis = "right" }]]
      }
    },
  ] : w if local.tier2]
  run_widget = [{
    type   = "metric"
    width  = 12
    height = 6
    properties = {
      title   = "Completed scheduled runs (per 5 min)"
      region  = local.region
      stat    = "Sum"
      period  = 300
      metrics = concat([[local.namespace, "AdvancerRuns"]], local.tier2 ? [[local.namespace, "WorkerRuns"]] : [])
    }
  }]
}

resource "aws_cloudwatch_dashboard" "this" {
  dashboard_name = "${var.name}-waiting-room"
  dashboard_body = jsonencode({
    widgets = concat(local.api_widgets, local.latency_widgets, local.emf_widgets, local.run_widget, local.abuse_widget, local.wait_widget, local.function_widgets, local.tier2_widgets)
  })
}
