# Where the alarms of one resource each went when they became entries of a map (main.tf): a
# deployment made before keeps its alarms (moved in the state, not destroyed and created again).
# An address the state does not hold (tier 2 off, another origin-5xx source) moves nothing.

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier1-api"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-api-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier1-admin"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-admin-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier1-advancer"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-advancer-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier2-api"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-api-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier2-authorizer"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-authorizer-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.errors["tier2-worker"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-worker-errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier1-api"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-api-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier1-admin"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-admin-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier1-advancer"]
  to   = aws_cloudwatch_metric_alarm.metric["tier1-advancer-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier2-api"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-api-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier2-authorizer"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-authorizer-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.throttles["tier2-worker"]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-worker-throttles"]
}

moved {
  from = aws_cloudwatch_metric_alarm.advancer_not_running
  to   = aws_cloudwatch_metric_alarm.metric["tier1-advancer-not-running"]
}

moved {
  from = aws_cloudwatch_metric_alarm.worker_not_running[0]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-worker-not-running"]
}

moved {
  from = aws_cloudwatch_metric_alarm.notice_failures[0]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-notice-failures"]
}

moved {
  from = aws_cloudwatch_metric_alarm.notice_dlq[0]
  to   = aws_cloudwatch_metric_alarm.metric["tier2-notice-dlq"]
}

moved {
  from = aws_cloudwatch_metric_alarm.origin_5xx_cloudfront[0]
  to   = aws_cloudwatch_metric_alarm.origin_5xx["cloudfront"]
}

moved {
  from = aws_cloudwatch_metric_alarm.origin_5xx_gate[0]
  to   = aws_cloudwatch_metric_alarm.origin_5xx["protected-api"]
}
