# LocalStack ready hook: creates vwr's resources and deploys the functions from /opt/vwr/dist
# (mounted from the repository's dist/, built by scripts/package.sh). Runs inside LocalStack's
# own Python, which has boto3. The state file (URLs and the tier-1 keys for the local edge
# proxy) goes to /opt/vwr/state, mounted from localstack/.state/.
import os
import sys

sys.path.insert(0, "/opt/vwr/localstack")
import bootstrap  # noqa: E402

args = [
    "--endpoint-url", "http://localhost:4566",
    "--region", os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
    "--dist", "/opt/vwr/dist",
    "--redis-url", os.environ.get("VWR_LOCALSTACK_REDIS_URL", "redis://redis:6379"),
    "--state-file", "/opt/vwr/state/state.json",
]
if not os.path.exists("/opt/vwr/dist/manifest.json"):
    print("vwr: /opt/vwr/dist has no manifest.json (run scripts/package.sh, then restart): data and keys only")
    args.append("--no-lambdas")
bootstrap.main(args)
