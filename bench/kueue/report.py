#!/usr/bin/env python3
"""Reads what Kueue's scheduler benchmark runner wrote for each controller (summary.yaml,
<exe>.stats.yaml, wlStates.csv) and prints one table: wall time, average time to admission per
workload class, queue usage, controller CPU seconds and max RSS, for rota, Kueue and their ratio.
Writes the same figures to OUT/kueue-<scenario>.json. With --check, fails unless every workload was
admitted and finished under every controller."""
import argparse, csv, glob, json, os, sys
import yaml


def packing_floor_seconds(config):
    """The least wall time any scheduler could need: per cohort, the work (request x run time) over
    the cohort's nominal quota; the slowest cohort bounds the run."""
    gen = yaml.safe_load(open(config))
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


def load(out, scenario, controller):
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
    f = os.path.join(d, "apiserver.requests")
    if os.path.exists(f):
        for line in open(f):
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.index("}")].replace('"', "").split(","))
            if labels.get("verb") in ("POST", "PUT", "PATCH", "APPLY", "DELETE") and labels.get("group") == "kueue.x-k8s.io":
                key = labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else "") + " " + labels["verb"]
                writes[key] = writes.get(key, 0) + int(float(line.split()[-1]))
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
        "wallSeconds": stats["wallMs"] / 1000.0,
        "avgTimeToAdmissionSeconds": {c: classes[c]["averageTimeToAdmissionMs"] / 1000.0 for c in ("small", "medium", "large") if c in classes},
        "evictions": sum(v["totalEvictions"] for v in classes.values()),
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
    res = {c: load(a.out, a.scenario, c) for c in a.controllers}
    floor = packing_floor_seconds(a.config)
    report = {"scenario": a.scenario, "packingFloorSeconds": floor, "results": res}

    metrics = [("wall time (s)", lambda r: r["wallSeconds"])]
    for c in ("small", "medium", "large"):
        metrics.append((f"avg time to admission, {c} (s)", lambda r, c=c: r["avgTimeToAdmissionSeconds"].get(c, 0.0)))
    metrics += [("queue usage (%)", lambda r: r["queueUsagePercent"]),
                ("controller CPU, user+sys (s)", lambda r: r["cpuSeconds"]),
                ("controller max RSS (MiB)", lambda r: r["maxRssMiB"]),
                ("  own peak as rota logs it, VmHWM (MiB)", lambda r: r["ownPeakRssMiB"]),
                ("evictions", lambda r: r["evictions"]),
                ("kube-apiserver CPU (s)", lambda r: r["apiserverCpuSeconds"]),
                ("etcd CPU (s)", lambda r: r["etcdCpuSeconds"]),
                ("Kueue's runner CPU (s)", lambda r: r.get("runnerCpuSeconds")),
                ("writes to kueue.x-k8s.io objects", lambda r: sum(r["kueueApiWrites"].values())),
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
