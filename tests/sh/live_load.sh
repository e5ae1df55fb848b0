#!/usr/bin/env bash
# live_load.sh - a bounded load test of `tailtriage serve` on loopback over
# OTLP/HTTP JSON, OTLP/HTTP protobuf and OTLP/gRPC
# (several concurrent keep-alive senders for 2 s per configuration) through
# bench/receiver_load.sh, which fails when serve does not stop cleanly or
# when any request answered 200 is not fully in the database.
set -euo pipefail
bash "${TT_SRC:?}/bench/receiver_load.sh" --seconds 2 4:1 16:20
echo "live_load: ok"
