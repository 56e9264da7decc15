#!/usr/bin/env bash
# config/prometheus/prometheusrule.yaml is config/prometheus/rota-rules.yaml's groups in a
# PrometheusRule (the Prometheus Operator's kind). Edit the rules file, then:
#
#   hack/prometheusrule.sh           write prometheusrule.yaml
#   hack/prometheusrule.sh --check   exit 1, with a diff, when prometheusrule.yaml is not what it would write
#
# The rules file's text from `groups:` on goes under `spec:` as it is, comments and block scalars
# kept; the result is parsed back to make sure its spec is exactly the rules file's content.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$REPO/config/prometheus
case ${1:-} in
  "" | --check) ;;
  *)
    echo "usage: hack/prometheusrule.sh [--check]" >&2
    exit 2
    ;;
esac
exec python3 - "$DIR/rota-rules.yaml" "$DIR/prometheusrule.yaml" "${1:-}" <<'PY'
import difflib
import sys

import yaml

src, dst, mode = sys.argv[1:]
HEADER = """\
# Made by hack/prometheusrule.sh from rota-rules.yaml: edit that file, then run the script.
# The Prometheus Operator's Prometheus loads the PrometheusRules its ruleSelector matches (often
# a label such as `release: <name>`): add that label in an overlay.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: rota
  namespace: rota-system
  labels:
    app.kubernetes.io/name: rota
spec:
"""

text = open(src).read()
lines = text.splitlines()
# (The rules file's leading comment is about that file; its content starts at `groups:`.)
start = next((i for i, line in enumerate(lines) if line.startswith("groups:")), None)
if start is None:
    sys.exit(f"{src}: no top-level `groups:`")
want = HEADER + "".join(("  " + line if line.strip() else "") + "\n" for line in lines[start:])
if yaml.safe_load(want)["spec"] != yaml.safe_load(text):
    sys.exit(f"{src}: indented under spec:, its text no longer parses as the same groups")

if mode != "--check":
    with open(dst, "w") as f:
        f.write(want)
    sys.exit(0)
try:
    have = open(dst).read()
except FileNotFoundError:
    have = ""
if have != want:
    sys.stderr.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), dst, "(as made now)"))
    sys.exit(f"{dst} is out of date: run hack/prometheusrule.sh")
PY
