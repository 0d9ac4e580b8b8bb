# Optional every-minute schedule (var.every_minute): EventBridge Scheduler's finest rate. The
# function ticks inside each run until shortly before its deadline.

resource "aws_lambda_function_event_invoke_config" "schedule" {
  count         = var.every_minute ? 1 : 0
  function_name = aws_lambda_function.this.function_name
  # A failed or late tick is replaced by the next one a minute later; never retry.
  maximum_retry_attempts       = 0
  maximum_event_age_in_seconds = 60
}

data "aws_caller_identity" "current" {}

data "aws_iam_policy_document" "scheduler_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_iam_role" "scheduler" {
  count              = var.every_minute ? 1 : 0
  name               = "${var.function_name}-schedule"
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "scheduler" {
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.this.arn]
  }
}

resource "aws_iam_role_policy" "scheduler" {
  count  = var.every_minute ? 1 : 0
  name   = "invoke-function"
  role   = aws_iam_role.scheduler[0].id
  policy = data.aws_iam_policy_document.scheduler.json
}

resource "aws_scheduler_schedule" "this" {
  #checkov:skip=CKV_AWS_297:The schedule's only data is a constant input; it uses var.kms_key_arn when given.
  count               = var.every_minute ? 1 : 0
  name                = var.function_name
  description         = "${var.description} (every minute)"
  schedule_expression = "rate(1 minute)"
  state               = "ENABLED"
  kms_key_arn         = var.kms_key_arn

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.this.arn
    role_arn = aws_iam_role.scheduler[0].arn
    input    = jsonencode({ source = "vwr.schedule" })

    retry_policy {
      maximum_retry_attempts       = 0
      maximum_event_age_in_seconds = 60
    }
  }
}
