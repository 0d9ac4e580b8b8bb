# One vwr Lambda: function (provided.al2023), its own role with exactly the given policy plus
# logging to its own log group, and the log group with retention.

data "aws_partition" "current" {}

locals {
  zip_path    = "${var.dist_dir}/lambda/${var.binary}.zip"
  in_vpc      = length(var.vpc_subnet_ids) > 0
  environment = { for k, v in var.environment : k => v if v != null }
}

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_338:Retention is an operator choice (var.log_retention_days); a year of request logs is rarely worth its cost here.
  #checkov:skip=CKV_AWS_158:Logs hold no secrets; a customer managed key is optional through var.kms_key_arn.
  name              = "/aws/lambda/${var.function_name}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name               = var.function_name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "logs" {
  statement {
    sid       = "OwnLogGroup"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.this.arn}:*"]
  }
}

resource "aws_iam_role_policy" "logs" {
  name   = "logs"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.logs.json
}

resource "aws_iam_role_policy" "code" {
  name   = "code"
  role   = aws_iam_role.this.id
  policy = var.policy_json
}

# With a customer managed key, the function decrypts with it: its environment variables, and
# the secrets and queue messages the modules encrypt with the same key (var.kms_key_arn).
data "aws_iam_policy_document" "kms" {
  count = var.kms_key_arn == null ? 0 : 1

  statement {
    sid       = "CustomerManagedKey"
    actions   = ["kms:Decrypt"]
    resources = [var.kms_key_arn]
  }
}

resource "aws_iam_role_policy" "kms" {
  count  = var.kms_key_arn == null ? 0 : 1
  name   = "kms"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.kms[0].json
}

data "aws_iam_policy_document" "vpc" {
  count = local.in_vpc ? 1 : 0

  statement {
    #checkov:skip=CKV_AWS_111:Lambda manages its own ENIs; these EC2 actions are what AWSLambdaVPCAccessExecutionRole grants and Lambda validates them against "*".
    #checkov:skip=CKV_AWS_356:Same: the ENI actions do not support narrower resources for Lambda's create-time check.
    sid = "LambdaEnis"
    actions = [
      "ec2:CreateNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSubnets",
      "ec2:DeleteNetworkInterface",
      "ec2:AssignPrivateIpAddresses",
      "ec2:UnassignPrivateIpAddresses",
    ]
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "vpc" {
  count  = local.in_vpc ? 1 : 0
  name   = "vpc-enis"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.vpc[0].json
}

resource "aws_lambda_function" "this" {
  #checkov:skip=CKV_AWS_116:Invoked synchronously by API Gateway, or by EventBridge Scheduler with retries off (the next run is a minute away); a DLQ would only collect stale ticks.
  #checkov:skip=CKV_AWS_272:Code signing needs a signing profile and signed zips; the zips are built and hashed by scripts/package.sh.
  #checkov:skip=CKV_AWS_117:Only the tier-2 functions need the VPC (Redis); the others call public AWS endpoints and stay out of it.
  #checkov:skip=CKV_AWS_173:Environment variables hold ids and URLs; secrets come from Secrets Manager (see terraform/README.md for VWR_REDIS_URL). A key can be given through var.kms_key_arn.
  function_name                  = var.function_name
  description                    = var.description
  role                           = aws_iam_role.this.arn
  runtime                        = "provided.al2023"
  handler                        = "bootstrap"
  architectures                  = [var.architecture]
  filename                       = local.zip_path
  source_code_hash               = filebase64sha256(local.zip_path)
  memory_size                    = var.memory_mb
  timeout                        = var.timeout_seconds
  reserved_concurrent_executions = var.reserved_concurrency
  kms_key_arn                    = var.kms_key_arn

  environment {
    variables = local.environment
  }

  tracing_config {
    mode = "PassThrough"
  }

  dynamic "vpc_config" {
    for_each = local.in_vpc ? [1] : []
    content {
      subnet_ids         = var.vpc_subnet_ids
      security_group_ids = var.vpc_security_group_ids
    }
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.this.name
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.logs, aws_iam_role_policy.vpc, aws_iam_role_policy.kms]
}
