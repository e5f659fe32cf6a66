#!/bin/bash
# Vendored from dbt-labs/ade-bench: shared/scripts/setup-dbt-test.sh (Apache-2.0, see NOTICE.txt).
# Change: the upstream "apt-get update; apt-get install -y curl" lines (container provisioning,
# no effect on grading) are left out so a local emulation never touches the host's packages.

# Check if we're in a valid working directory
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi
