#!/usr/bin/env python3
"""Watches the Workloads of a benchmark run and measures the work its evictions threw away: for each
eviction, the CPU the workload held (its admission's resourceUsage) times how long it had held it
(from the first watch event that showed its quota reserved to the first that showed it evicted).
The same watcher, outside either controller, measures rota and Kueue alike.

  lost_work.py KUBECONFIG OUT.json      runs until killed; rewrites OUT.json after each eviction
"""
import json, os, signal, subprocess, sys, time

KUBECTL = os.environ.get("KUBECTL", "kubectl")


def milli(q):
    """A CPU quantity ("2", "500m", "1.5") in milli-units."""
    q = str(q)
    if q.endswith("m"):
        return float(q[:-1])
    return float(q) * 1000


def cpu_of(wl):
    total = 0.0
    for ps in ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []:
        total += milli((ps.get("resourceUsage") or {}).get("cpu", 0))
    return total / 1000


def condition(wl, kind):
    for c in (wl.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c.get("status") == "True"
    return False


def main():
    kubeconfig, out = sys.argv[1], sys.argv[2]
    held = {}  # uid -> (time its quota was first seen reserved, CPUs)
    evicted = set()  # uids seen evicted since their last reservation
    totals = {"evictions": 0, "lostCpuSeconds": 0.0}
    restarts = 0

    def write():
        with open(out + ".tmp", "w") as f:
            json.dump({"evictions": totals["evictions"], "lostCpuSeconds": totals["lostCpuSeconds"],
                       "watchRestarts": restarts}, f)
        os.replace(out + ".tmp", out)

    signal.signal(signal.SIGTERM, lambda *_: (write(), sys.exit(0)))
    write()
    while True:
        p = subprocess.Popen([KUBECTL, "--kubeconfig", kubeconfig, "get", "workloads.kueue.x-k8s.io", "-A", "--watch",
                              "--output-watch-events", "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, bufsize=1 << 16)
        # kubectl prints an event on one line, or indented with a lone "}" as its last line: parse
        # at those points only, so that the watcher keeps up with the stream (a slow reader is
        # cut off by the apiserver).
        lines = []
        for line in p.stdout:
            lines.append(line)
            if len(lines) > 1 and line.rstrip("\n") != "}":
                continue
            try:
                ev = json.loads("".join(lines))
            except ValueError:
                continue
            lines = []
            wl = ev.get("object") or {}
            uid = (wl.get("metadata") or {}).get("uid")
            if not uid:
                continue
            now = time.monotonic()
            reserved = condition(wl, "QuotaReserved") and not condition(wl, "Finished")
            if reserved and uid not in held:
                held[uid] = (now, cpu_of(wl))
                evicted.discard(uid)
            if condition(wl, "Evicted") and uid in held and uid not in evicted:
                since, cpus = held[uid]
                totals["evictions"] += 1
                totals["lostCpuSeconds"] += cpus * (now - since)
                evicted.add(uid)
                write()
            if not reserved:
                held.pop(uid, None)
        restarts += 1
        p.wait()
        time.sleep(1)  # (the watch ended: the apiserver restarted its stream, or went away)


if __name__ == "__main__":
    main()
