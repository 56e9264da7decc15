#!/usr/bin/env python3
"""Asks a live Prometheus, which scrapes rota, every query of rota's dashboard and rules.

  check_queries.py --prometheus http://127.0.0.1:9090 \
      --dashboard config/grafana/rota-dashboard.json --rules config/prometheus/rota-rules.yaml \
      [--wait SECONDS] [--var NAME=VALUE ...]

What passes:
- a dashboard query (each panel target and each `label_values` variable) returns at least one
  series, once Grafana's variables are replaced ($cluster_queue -> .*, $__rate_interval -> 1m,
  $__interval -> 30s; --var overrides). A 1m rate window needs a scrape interval of 30s or less;
- a recording rule's expression returns at least one series;
- an alerting rule's expression evaluates without error (it is empty while all is well), and every
  series selector in it (a name of Kueue's or rota's, or `up`, with its label matchers) selects at
  least one series: an alert on a series that does not exist would never fire.

Prints one line per query (ok, EMPTY or ERROR, with the panel or rule) and exits 1 if any fails.
With --wait, asks again every few seconds until all pass or the time is up: a freshly scraped
rota's series appear as the Jobs it schedules make them. Standard library and PyYAML only.
"""
import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

DEFAULT_VARS = {
    "cluster_queue": ".*",
    "__rate_interval": "1m",
    "__interval": "30s",
    "__range": "1h",
    "datasource": "",
}
# Grafana's variable forms: $name, ${name}, ${name:format}, [[name]].
VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)")
# A series selector in PromQL: a metric name of Kueue's or rota's, or `up`, that is a whole
# identifier and not a function's name, with its label matchers if it has any (the name is queried
# as written: a histogram's `_bucket` series is checked as such). Searched for in the expression
# with its quoted strings blanked.
SELECTOR = re.compile(r"(?<![\w:])((?:kueue|rota)_\w+|up)(?![\w:(])(\{[^{}]*\})?")
STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`[^`]*`")
MATCHERS = re.compile(r"\{[^{}]*\}")


class Check:
    """One query and what counts as passing: "series" (at least one) or "valid" (no error)."""

    def __init__(self, where, expr, want):
        self.where, self.expr, self.want = where, expr, want


def substitute(expr, values):
    """The expression with Grafana's variables replaced; raises KeyError for an unknown one."""

    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise KeyError(f"unknown Grafana variable ${name}")
        return values[name]

    return VARIABLE.sub(one, expr)


def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))  # (a collapsed row keeps its panels inside)


def dashboard_checks(path, values):
    with open(path) as f:
        dashboard = json.load(f)
    checks = []
    for p in walk_panels(dashboard.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" not in t or t.get("hide"):
                continue
            where = f'panel "{p.get("title", "")}" [{t.get("refId", "?")}]'
            try:
                checks.append(Check(where, substitute(t["expr"], values), "series"))
            except KeyError as e:
                checks.append(Check(where, t["expr"], f"error: {e.args[0]}"))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else q or ""
        m = re.fullmatch(r"\s*label_values\((.+),\s*(\w+)\s*\)\s*", q)
        if m:  # (its values: the label's, on the series the selector selects)
            sel, label = m.group(1).strip(), m.group(2)
            expr = f'{sel}{{{label}!=""}}' if "{" not in sel else sel
            checks.append(Check(f"variable ${v['name']}", expr, "series"))
    return checks


def selectors(expr):
    """The distinct series selectors in a PromQL expression, in order."""
    # (Blanking strings keeps their length, so the matchers are then read from the original.)
    blanked = STRING.sub(lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', expr)
    inside = [(m.start(), m.end()) for m in MATCHERS.finditer(blanked)]  # (label names are no selectors)
    seen = []
    for m in SELECTOR.finditer(blanked):
        if any(a < m.start() < b for a, b in inside):
            continue
        sel = expr[m.start():m.end()]
        if sel not in seen:
            seen.append(sel)
    return seen


def rule_checks(path):
    with open(path) as f:
        rules = yaml.safe_load(f)
    checks = []
    for g in rules.get("groups", []):
        for r in g.get("rules", []):
            if "record" in r:
                checks.append(Check(f"record {r['record']}", r["expr"], "series"))
                continue
            where = f"alert {r['alert']}"
            checks.append(Check(where, r["expr"], "valid"))
            for sel in selectors(r["expr"]):
                checks.append(Check(f"{where} selects", sel, "series"))
    return checks


def query(prometheus, expr):
    """The result of an instant query, or raises RuntimeError with Prometheus's error."""
    data = urllib.parse.urlencode({"query": expr}).encode()
    req = urllib.request.Request(prometheus.rstrip("/") + "/api/v1/query", data=data)
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:  # (a bad query is a 400 with the usual JSON body)
        try:
            body = json.load(e)
        except ValueError:
            raise RuntimeError(f"HTTP {e.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise RuntimeError(str(e)) from None
    if body.get("status") != "success":
        raise RuntimeError(f"{body.get('errorType', 'error')}: {body.get('error', 'query failed')}")
    return body["data"]


def run(prometheus, checks):
    """(status, check, detail) per check; status is ok, EMPTY or ERROR."""
    out = []
    for c in checks:
        if c.want.startswith("error: "):
            out.append(("ERROR", c, c.want[len("error: "):]))
            continue
        try:
            data = query(prometheus, c.expr)
        except RuntimeError as e:
            out.append(("ERROR", c, str(e)))
            continue
        result = data.get("result")
        if data.get("resultType") in ("scalar", "string"):
            n = 1
        else:
            n = len(result or [])
        if c.want == "valid":
            out.append(("ok", c, f"firing now: {n} series" if n else "not firing"))
        else:
            out.append(("ok", c, f"{n} series") if n else ("EMPTY", c, "no series"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prometheus", required=True, help="Prometheus's base URL, e.g. http://127.0.0.1:9090")
    ap.add_argument("--dashboard", required=True, help="a Grafana dashboard's JSON")
    ap.add_argument("--rules", required=True, help="a Prometheus rules file")
    ap.add_argument("--wait", type=float, default=0, metavar="SECONDS",
                    help="ask again until all pass or this many seconds have passed")
    ap.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="a Grafana variable's value (default: " +
                    ", ".join(f"{k}={v!r}" for k, v in DEFAULT_VARS.items()) + ")")
    a = ap.parse_args()
    values = dict(DEFAULT_VARS)
    for kv in a.var:
        name, sep, value = kv.partition("=")
        if not sep:
            ap.error(f"--var {kv}: want NAME=VALUE")
        values[name.lstrip("$")] = value

    checks = dashboard_checks(a.dashboard, values) + rule_checks(a.rules)
    deadline = time.monotonic() + a.wait
    while True:
        results = run(a.prometheus, checks)
        failed = sum(status != "ok" for status, _, _ in results)
        if not failed or time.monotonic() >= deadline:
            break
        print(f"check_queries: {failed} of {len(results)} queries fail; asking again", file=sys.stderr)
        time.sleep(min(5, max(0.0, deadline - time.monotonic())))
    for status, c, detail in results:
        print(f"{status:<5}  {c.where}: {' '.join(c.expr.split())}  ({detail})")
    print(f"check_queries: {len(results) - failed} of {len(results)} queries pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
