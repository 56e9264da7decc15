#!/usr/bin/env python3
"""Watches the Workloads of a benchmark run and measures the work its evictions threw away: for each
eviction, the CPU the workload held (its admission's resourceUsage) times how long it had held it
(from the first watch event that showed its quota reserved to the first that showed it evicted).
The same watcher, outside either controller, measures rota and Kueue alike.

  lost_work.py KUBECONFIG OUT.json      runs until killed; rewrites OUT.json after each eviction,
                                        with the totals and the totals by workload class
                                        (the name's first part: small, medium, large)
"""
import json, os, signal, subprocess, sys, time

KUBECTL = os.environ.get("KUBECTL", "kubectl")


def milli(q):
    """A CPU quantity ("2", "500m", "1.5") in milli-units."""
    q = str(q)
    if q.endswith("m"):
        return float(q[:-1])
    return float(q) * 1000


def main():
    kubeconfig, out = sys.argv[1], sys.argv[2]
    held = {}  # uid -> (time its quota was first seen reserved, CPUs)
    evicted = set()  # uids seen evicted since their last reservation
    totals = {"evictions": 0, "lostCpuSeconds": 0.0}
    by_class = {}  # the scenario's class (the name's first part: small, medium, large) -> totals
    restarts = 0

    def write():
        with open(out + ".tmp", "w") as f:
            json.dump({"evictions": totals["evictions"], "lostCpuSeconds": totals["lostCpuSeconds"],
                       "watchRestarts": restarts, "byClass": by_class}, f)
        os.replace(out + ".tmp", out)

    signal.signal(signal.SIGTERM, lambda *_: (write(), sys.exit(0)))
    write()

    def seen(uid, name, reserved, evicted_now, cpus):
        now = time.monotonic()
        if reserved and uid not in held:
            held[uid] = (now, cpus)
            evicted.discard(uid)
        if evicted_now and uid in held and uid not in evicted:
            since, cpus = held[uid]
            totals["evictions"] += 1
            totals["lostCpuSeconds"] += cpus * (now - since)
            c = by_class.setdefault(name.split("-")[0], {"evictions": 0, "lostCpuSeconds": 0.0})
            c["evictions"] += 1
            c["lostCpuSeconds"] += cpus * (now - since)
            evicted.add(uid)
            write()
        if not reserved:
            held.pop(uid, None)

    # kubectl decodes the events and prints a short line for each (the fields below, separated by
    # "|": kubectl's printer turns tabs into spaces),
    # so that the watcher keeps up with the stream on a busy machine (a slow reader is cut off by
    # the apiserver); when the watch ends, it lists and watches again.
    fields = ['{.metadata.uid}', '{.metadata.name}', '{.status.conditions[?(@.type=="QuotaReserved")].status}',
              '{.status.conditions[?(@.type=="Finished")].status}',
              '{.status.conditions[?(@.type=="Evicted")].status}',
              '{.status.admission.podSetAssignments[*].resourceUsage.cpu}']
    template = '{"|"}'.join(fields) + '{"\\n"}'
    while True:
        p = subprocess.Popen([KUBECTL, "--kubeconfig", kubeconfig, "get", "workloads.kueue.x-k8s.io", "-A", "--watch",
                              "-o", "jsonpath=" + template], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, bufsize=1 << 16)
        for line in p.stdout:
            parts = line.rstrip("\n").split("|")
            if len(parts) != len(fields) or not parts[0]:
                continue
            uid, name, qr, fin, ev, cpu = parts
            seen(uid, name, qr == "True" and fin != "True", ev == "True", sum(milli(q) for q in cpu.split()) / 1000)
        restarts += 1
        p.wait()
        time.sleep(1)  # (the watch ended: the apiserver cut it, restarted, or went away)

if __name__ == "__main__":
    main()
