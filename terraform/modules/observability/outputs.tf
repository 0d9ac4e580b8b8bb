output "dashboard_name" {
  description = "CloudWatch dashboard of the waiting room."
  value       = aws_cloudwatch_dashboard.this.dashboard_name
}

output "alarm_names" {
  description = "Names of every alarm."
  value = concat(
    [for a in aws_cloudwatch_metric_alarm.api_5xx : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.errors : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.throttles : a.alarm_name],
    [aws_cloudwatch_metric_alarm.advancer_not_running.alarm_name],
    [aws_cloudwatch_metric_alarm.advancer_stuck.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.line_stalled : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.worker_not_running : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.notice_failures : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.notice_dlq : a.alarm_name],
  )
}
