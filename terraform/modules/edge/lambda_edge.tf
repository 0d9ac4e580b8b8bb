# Lambda@Edge variant of the verifier (var.verifier = "lambda-edge"): us-east-1, Node.js 22,
# viewer request. Lambda@Edge has no environment, so config.json (configuration + tier-1 edge keys)
# is bundled next to index.js here; the zip holds secrets and is written under .terraform/.

locals {
  lambda_edge_config = jsonencode(merge(local.edge_config, { keys = var.tier1_edge_keys_text }))
}

data "archive_file" "lambda_edge" {
  count       = local.lambda_edge ? 1 : 0
  type        = "zip"
  output_path = "${path.root}/.terraform/vwr/${var.name}-lambda-edge.zip"

  source {
    filename = "index.js"
    content  = replace(file("${var.dist_dir}/edge/lambda-edge/index.js"), "__VWR_FAIL_MODE__", var.fail_mode)
  }

  source {
    filename = "config.json"
    content  = local.lambda_edge_config
  }
}

data "aws_iam_policy_document" "lambda_edge_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com", "edgelambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "lambda_edge" {
  count              = local.lambda_edge ? 1 : 0
  name               = "${var.name}-edge-verifier"
  assume_role_policy = data.aws_iam_policy_document.lambda_edge_assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "lambda_edge_logs" {
  statement {
    sid = "RegionalLogGroups"
    # Lambda@Edge logs in the Region of each edge location, to /aws/lambda/us-east-1.<name>.
    actions   = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["arn:aws:logs:*:*:log-group:/aws/lambda/us-east-1.${var.name}-edge-verifier:*"]
  }
}

resource "aws_iam_role_policy" "lambda_edge_logs" {
  count  = local.lambda_edge ? 1 : 0
  name   = "logs"
  role   = aws_iam_role.lambda_edge[0].id
  policy = data.aws_iam_policy_document.lambda_edge_logs.json
}

resource "aws_lambda_function" "lambda_edge" {
  #checkov:skip=CKV_AWS_116:Viewer-request functions are invoked synchronously by CloudFront; Lambda@Edge has no DLQ.
  #checkov:skip=CKV_AWS_117:Lambda@Edge cannot run in a VPC.
  #checkov:skip=CKV_AWS_115:Lambda@Edge does not support reserved concurrency.
  #checkov:skip=CKV_AWS_173:Lambda@Edge has no environment variables.
  #checkov:skip=CKV_AWS_272:Code signing is not supported for Lambda@Edge.
  #checkov:skip=CKV_AWS_50:X-Ray is not available for Lambda@Edge.
  count            = local.lambda_edge ? 1 : 0
  provider         = aws.us_east_1
  function_name    = "${var.name}-edge-verifier"
  description      = "vwr edge verifier (tier-1 token), CloudFront viewer request"
  role             = aws_iam_role.lambda_edge[0].arn
  runtime          = "nodejs22.x"
  handler          = "index.handler"
  filename         = data.archive_file.lambda_edge[0].output_path
  source_code_hash = data.archive_file.lambda_edge[0].output_base64sha256
  memory_size      = 128
  timeout          = 5
  publish          = true
  tags             = var.tags

  depends_on = [aws_iam_role_policy.lambda_edge_logs]
}
