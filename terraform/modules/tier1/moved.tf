# Where the APIs' resources went when they became modules/http_api calls (main.tf): a deployment
# made before keeps its APIs, endpoints, routes and log groups (moved in the state, not destroyed
# and created again).

moved {
  from = aws_cloudwatch_log_group.access["public"]
  to   = module.public_api.aws_cloudwatch_log_group.access
}

moved {
  from = aws_apigatewayv2_api.public
  to   = module.public_api.aws_apigatewayv2_api.this
}

moved {
  from = aws_apigatewayv2_integration.public
  to   = module.public_api.module.routes.aws_apigatewayv2_integration.this
}

moved {
  from = aws_apigatewayv2_route.public
  to   = module.public_api.module.routes.aws_apigatewayv2_route.this
}

moved {
  from = aws_apigatewayv2_stage.public
  to   = module.public_api.aws_apigatewayv2_stage.this
}

moved {
  from = aws_lambda_permission.public
  to   = module.public_api.module.routes.aws_lambda_permission.invoke
}

moved {
  from = aws_cloudwatch_log_group.access["admin"]
  to   = module.admin_api.aws_cloudwatch_log_group.access
}

moved {
  from = aws_apigatewayv2_api.admin
  to   = module.admin_api.aws_apigatewayv2_api.this
}

moved {
  from = aws_apigatewayv2_integration.admin
  to   = module.admin_api.module.routes.aws_apigatewayv2_integration.this
}

moved {
  from = aws_apigatewayv2_route.admin
  to   = module.admin_api.module.routes.aws_apigatewayv2_route.this
}

moved {
  from = aws_apigatewayv2_stage.admin
  to   = module.admin_api.aws_apigatewayv2_stage.this
}

moved {
  from = aws_lambda_permission.admin
  to   = module.admin_api.module.routes.aws_lambda_permission.invoke["apigw-admin"]
}
