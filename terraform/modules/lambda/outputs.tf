output "function_name" {
  description = "Name of the function."
  value       = aws_lambda_function.this.function_name
}

output "arn" {
  description = "ARN of the function."
  value       = aws_lambda_function.this.arn
}

output "invoke_arn" {
  description = "ARN for API Gateway integrations."
  value       = aws_lambda_function.this.invoke_arn
}

output "role_name" {
  description = "Name of the execution role."
  value       = aws_iam_role.this.name
}

output "role_arn" {
  description = "ARN of the execution role."
  value       = aws_iam_role.this.arn
}

output "log_group_name" {
  description = "CloudWatch Logs group of the function."
  value       = aws_cloudwatch_log_group.this.name
}

output "schedule_name" {
  description = "Name of the every-minute schedule (null without var.every_minute)."
  value       = var.every_minute ? aws_scheduler_schedule.this[0].name : null
}
