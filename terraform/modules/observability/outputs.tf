output "dashboard_name" {
  description = "CloudWatch dashboard of the waiting room."
  value       = aws_cloudwatch_dashboard.this.dashboard_name
}

output "alarm_names" {
  description = "Names of every alarm."
  value = concat(
    [for a in aws_cloudwatch_metric_alarm.api_5xx : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.metric : a.alarm_name],
    [aws_cloudwatch_metric_alarm.advancer_stuck.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.line_stalled : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.origin_5xx : a.alarm_name],
  )
}

output "origin_5xx_alarm_name" {
  description = "Name of the origin-5xx alarm (null without var.origin_5xx): give it to the tier-1 module's health_alarm_names and the advancer holds every event while it is in ALARM (docs/outflow.md#health-gate)."
  value       = one([for a in aws_cloudwatch_metric_alarm.origin_5xx : a.alarm_name])
}

output "origin_5xx_alarm_arn" {
  description = "ARN of the origin-5xx alarm (null without var.origin_5xx)."
  value       = one([for a in aws_cloudwatch_metric_alarm.origin_5xx : a.arn])
}
