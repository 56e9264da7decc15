#!/usr/bin/env bash
# Reads `rota simulate` JSON on stdin and prints it as a short table for people.
set -euo pipefail
python3 -c '
import json, sys
d = json.load(sys.stdin)
for a in d["admitted"]:
    ps = ", ".join("%s x%d on %s" % (p["name"], p["count"], "/".join(sorted(set(p["flavors"].values())))) for p in a["podSetAssignments"])
    print("  ADMITTED   %-40s %-15s %s" % (a["workload"], a["clusterQueue"], ps))
for p in d["preempted"]:
    print("  PREEMPTED  %-40s by %s (%s)" % (p["workload"], p["preemptor"], p["reason"]))
for p in d["pending"]:
    print("  PENDING    %-40s %s: %s" % (p["workload"], p["reason"], p["message"]))
'
