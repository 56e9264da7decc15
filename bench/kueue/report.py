#!/usr/bin/env python3
"""Reads what Kueue's scheduler benchmark runner wrote for each controller (summary.yaml,
<exe>.stats.yaml, wlStates.csv) and lost_work.py (lost-work.json) and prints one table: wall time,
average time to admission per workload class, queue usage, evictions and the work they threw away,
controller CPU seconds and max RSS, for rota, Kueue and their ratio.
Writes the same figures to OUT/kueue-<scenario>.json. With --check, fails unless every workload was
admitted and finished under every controller."""
import argparse, csv, datetime, glob, json, os, sys
import yaml


def packing_floor_seconds(gen):
    """The least wall time any scheduler could need: per cohort, the work (request x run time) over
    the cohort's nominal quota; the slowest cohort bounds the run. `gen`: the generator config."""
    floor = 0.0
    for cohort in gen["cohorts"]:
        work = quota = 0
        for qs in cohort["queuesSets"]:
            quota += qs["count"] * qs["nominalQuota"]
            per_queue = sum(ws["count"] * w["request"] * w["runtimeMs"]
                            for ws in qs["workloadsSets"] for w in ws["workloads"])
            work += qs["count"] * per_queue
        floor = max(floor, work / quota / 1000.0)
    return floor


def class_runtimes_ms(gen):
    """Each workload class's run time, as the generator labels its workloads."""
    return {w["className"]: w["runtimeMs"] for cohort in gen["cohorts"] for qs in cohort["queuesSets"]
            for ws in qs["workloadsSets"] for w in ws["workloads"]}


def runner_finishing(path):
    """With BENCH_RUNNER_TRACE=1 the runner logs each reconcile of its Workload controller: how long
    the reconciles that wrote a workload's Finished condition took on average, and so how many
    workloads a second its workers can finish at most (each worker does one at a time)."""
    if not os.path.exists(path):
        return None
    workers, started, took = None, {}, []
    for line in open(path, errors="replace"):
        f = line.split("\t")
        if len(f) < 5:
            continue
        if workers is None and f[3].startswith("Starting workers") and '"controller": "workload"' in f[4]:
            workers = int(f[4].rsplit('"worker count": ', 1)[1].split("}")[0])
            continue
        rid = f[4].split('"reconcileID": "', 1)
        if len(rid) < 2:
            continue
        rid = rid[1].split('"', 1)[0]
        try:
            t = datetime.datetime.fromisoformat(f[0][:26].rstrip("Z")).timestamp()
        except ValueError:
            continue  # (not one of zap's time stamps)
        if f[3].startswith("Reconciling"):
            started[rid] = t
        elif f[3].startswith("Finish Workload") and rid in started:
            took.append(t - started.pop(rid))
    if not took or not workers:
        return None
    mean = sum(took) / len(took)
    return {"finishes": len(took), "meanMs": 1000.0 * mean, "workers": workers, "ceilingPerSecond": workers / mean}


def load(out, scenario, controller, runtimes_ms):
    d = os.path.join(out, "kueue", scenario, controller)
    summary = yaml.safe_load(open(os.path.join(d, "summary.yaml")))
    stats = yaml.safe_load(open(glob.glob(os.path.join(d, "*.stats.yaml"))[0]))
    rows = list(csv.DictReader(open(os.path.join(d, "wlStates.csv"))))
    unfinished = sum(1 for r in rows if int(r["ms to finish"]) == 0)
    cq = summary["clusterQueueClasses"]["cq"]
    classes = summary["workloadClasses"]
    cpu = {}
    for name in ("kube-apiserver", "etcd", "runner"):
        f = os.path.join(d, name + ".cpu")
        if os.path.exists(f):
            cpu[name] = float(open(f).read().split()[1])
    writes = {}
    # Workload status writes (the runner's finishes and evictions, the controller's admissions and
    # conditions): the apiserver's total and count of their latencies.
    status_latency = {"sum": 0.0, "count": 0.0}
    f = os.path.join(d, "apiserver.requests")
    if os.path.exists(f):
        for line in open(f):
            metric = line[:line.index("{")]
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.index("}")].replace('"', "").split(","))
            if labels.get("verb") not in ("POST", "PUT", "PATCH", "APPLY", "DELETE") or labels.get("group") != "kueue.x-k8s.io":
                continue
            value = float(line.split()[-1])
            if metric == "apiserver_request_total":
                key = labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else "") + " " + labels["verb"]
                writes[key] = writes.get(key, 0) + int(value)
            elif labels.get("resource") == "workloads" and labels.get("subresource") == "status":
                status_latency[metric.rsplit("_", 1)[1]] += value
    # How long after seeing a workload admitted the runner saw it finished, beyond its run time:
    # the time its quota stayed held waiting for the runner's finish write (its reconcilers'
    # queue, the write's round trip and the watch).
    lags = {}
    for r in rows:
        # (Both times seen: when the runner's recorder dropped an event, its time reads 0.)
        if int(r["ms to admitted"]) > 0 and int(r["ms to finish"]) > 0 and int(r["num evictions"]) == 0:
            lag = int(r["ms to finish"]) - int(r["ms to admitted"]) - runtimes_ms.get(r["class name"], 0)
            lags.setdefault(r["class name"], []).append(lag / 1000.0)
    lost = None  # kueue/lost_work.py: the CPU time evictions threw away
    f = os.path.join(d, "lost-work.json")
    if os.path.exists(f):
        lost = json.load(open(f))
    own_peak = None  # rota logs its own VmHWM when it stops
    log = os.path.join(d, "rota.log")
    if os.path.exists(log):
        for line in open(log, errors="replace"):
            if "peak resident memory (VmHWM): " in line:
                own_peak = float(line.rsplit(": ", 1)[1].split()[0]) / 1024.0
    return {
        "ownPeakRssMiB": own_peak,
        "apiserverCpuSeconds": cpu.get("kube-apiserver", 0.0),
        "etcdCpuSeconds": cpu.get("etcd", 0.0),
        "runnerCpuSeconds": cpu.get("runner"),
        "kueueApiWrites": writes,
        "workloadStatusWriteLatencyMs": 1000.0 * status_latency["sum"] / status_latency["count"] if status_latency["count"] else None,
        "finishLagSeconds": {c: sum(v) / len(v) for c, v in lags.items()},
        "runnerFinishing": runner_finishing(os.path.join(d, "runner.log")),
        "wallSeconds": stats["wallMs"] / 1000.0,
        "avgTimeToAdmissionSeconds": {c: classes[c]["averageTimeToAdmissionMs"] / 1000.0 for c in ("small", "medium", "large") if c in classes},
        "evictions": sum(v["totalEvictions"] for v in classes.values()),
        "lostCpuSeconds": lost["lostCpuSeconds"] if lost else None,
        "queueUsagePercent": 100.0 * cq["cpuAverageUsage"] / cq["nominalQuota"] if cq["nominalQuota"] else 0.0,
        "cpuSeconds": (stats["userMs"] + stats["sysMs"]) / 1000.0,
        "maxRssMiB": stats["maxrss"] / 1024.0,
        "workloads": len(rows),
        "unfinished": unfinished,
        # Workload events the runner's recorder dropped (its channel was full): its per-workload
        # figures (admission times, finishes) then miss them.
        "runnerDroppedWorkloadEvents": summary.get("droppedWorkloadEvents", 0),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("controllers", nargs="+")
    a = ap.parse_args()
    gen = yaml.safe_load(open(a.config))
    runtimes = class_runtimes_ms(gen)
    res = {c: load(a.out, a.scenario, c, runtimes) for c in a.controllers}
    floor = packing_floor_seconds(gen)
    report = {"scenario": a.scenario, "packingFloorSeconds": floor, "results": res}

    metrics = [("wall time (s)", lambda r: r["wallSeconds"])]
    for c in ("small", "medium", "large"):
        metrics.append((f"avg time to admission, {c} (s)", lambda r, c=c: r["avgTimeToAdmissionSeconds"].get(c, 0.0)))
    metrics += [("queue usage (%)", lambda r: r["queueUsagePercent"]),
                ("controller CPU, user+sys (s)", lambda r: r["cpuSeconds"]),
                ("controller max RSS (MiB)", lambda r: r["maxRssMiB"]),
                ("  own peak as rota logs it, VmHWM (MiB)", lambda r: r["ownPeakRssMiB"]),
                ("evictions", lambda r: r["evictions"]),
                ("  work they threw away: CPU held x time held (CPU-s)", lambda r: r.get("lostCpuSeconds")),
                ("kube-apiserver CPU (s)", lambda r: r["apiserverCpuSeconds"]),
                ("etcd CPU (s)", lambda r: r["etcdCpuSeconds"]),
                ("Kueue's runner CPU (s)", lambda r: r.get("runnerCpuSeconds")),
                ("writes to kueue.x-k8s.io objects", lambda r: sum(r["kueueApiWrites"].values())),
                ("Workload status write at the apiserver, mean (ms)", lambda r: r.get("workloadStatusWriteLatencyMs"))]
    for c in ("small", "medium", "large"):
        metrics.append((f"runner's finish after the run time, {c} (s)", lambda r, c=c: r["finishLagSeconds"].get(c)))
    metrics += [("runner's finishing reconcile, mean (ms; BENCH_RUNNER_TRACE=1)", lambda r: (r["runnerFinishing"] or {}).get("meanMs")),
                ("runner's finishing ceiling (workloads/s; BENCH_RUNNER_TRACE=1)", lambda r: (r["runnerFinishing"] or {}).get("ceilingPerSecond")),
                ("workloads not finished (as the runner recorded them)", lambda r: r["unfinished"]),
                ("workload events the runner's recorder dropped", lambda r: r["runnerDroppedWorkloadEvents"])]
    cols = list(a.controllers)
    ratio = "rota" in res and "kueue" in res
    header = f"| {a.scenario} ({res[cols[0]]['workloads']} workloads; packing floor {floor:.0f} s) | " + " | ".join(cols) + (" | rota/kueue |" if ratio else " |")
    print(header)
    print("|" + "---|" * (len(cols) + 1 + (1 if ratio else 0)))
    table = {}
    for name, f in metrics:
        vals = [f(res[c]) for c in cols]
        line = f"| {name} | " + " | ".join("-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v) for v in vals)
        if ratio:
            k, r = f(res["kueue"]), f(res["rota"])
            if k and r is not None:
                table[name] = r / k
                line += f" | {r / k:.2f}"
            else:
                line += " | -"
        print(line + " |")
    if ratio:
        report["ratios"] = table
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"kueue-{a.scenario}.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    if a.check:
        bad = [c for c in cols if res[c]["unfinished"] or not res[c]["workloads"]]
        if bad:
            print(f"check failed: workloads left unfinished under {', '.join(bad)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
