#!/usr/bin/env bash
# Prints `name=github-actions-<where>` for $GITHUB_OUTPUT: the name recorded as every request's
# vantage. A GitHub-hosted runner is an Azure machine; its region comes from Azure's instance
# metadata service (2 s at most). Where that does not answer, the runner's own name stands in.
set -u
region=$(curl --silent --max-time 2 -H Metadata:true \
  "http://169.254.169.254/metadata/instance/compute/location?api-version=2021-02-01&format=text" || true)
if [[ ! "$region" =~ ^[a-z0-9]+$ ]]; then
  region=$(printf '%s' "${RUNNER_NAME:-unknown}" | tr -cs 'A-Za-z0-9' '-' | tr 'A-Z' 'a-z')
  region=${region%-}
fi
echo "name=github-actions-${region}"
