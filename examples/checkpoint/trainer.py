#!/usr/bin/env python3
"""A toy trainer that takes part in rota's checkpoint handshake (README.md). Standard library only.

It trains one step at a time and saves a checkpoint every --every seconds, when it is asked to,
and when it is told to stop (SIGTERM). It is asked by SIGUSR1 (what `rota checkpoint-agent
--signal SIGUSR1` sends) or, with --request-file, by that file changing. When it starts it resumes
from the newest checkpoint in --checkpoint-dir.

Each checkpoint is written to a hidden temporary file and renamed into place, so whoever watches
the directory (the agent) only ever sees complete checkpoints, and the file's modification time
is the time it was saved.
"""

import argparse
import json
import os
import re
import signal
import sys
import time

CHECKPOINT = re.compile(r"^ckpt-(\d+)\.json$")
KEEP = 3  # checkpoints kept; older ones are removed

asked = False  # set by SIGUSR1: save at the end of this step
stopping = False  # set by SIGTERM: save and exit


def on_checkpoint_request(signum, frame):
    # Only a flag: saving in the middle of a step would save half of it.
    global asked
    asked = True


def on_stop(signum, frame):
    global stopping
    stopping = True


def checkpoints(directory):
    """The checkpoints in `directory` as (step, file name), oldest first."""
    found = []
    for name in os.listdir(directory):
        m = CHECKPOINT.match(name)
        if m:
            found.append((int(m.group(1)), name))
    return sorted(found)


def resume(directory):
    """The step and state of the newest checkpoint, or a fresh start."""
    found = checkpoints(directory)
    if not found:
        return 0, {"loss": 10.0}
    step, name = found[-1]
    with open(os.path.join(directory, name)) as f:
        saved = json.load(f)
    print(f"resuming from {name} (step {step})", flush=True)
    return saved["step"], saved["state"]


def save(directory, step, state):
    name = f"ckpt-{step:08d}.json"
    temporary = os.path.join(directory, f".{name}.tmp")
    with open(temporary, "w") as f:
        json.dump({"step": step, "state": state}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, os.path.join(directory, name))
    for _, old in checkpoints(directory)[:-KEEP]:
        os.remove(os.path.join(directory, old))
    print(f"saved {name}", flush=True)


def read_request(path):
    """The request file's content (the time rota asked), or None while there is none."""
    try:
        with open(path) as f:
            return f.read().strip() or None
    except FileNotFoundError:
        return None


def main():
    global asked
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR", "/checkpoints"))
    p.add_argument("--steps", type=int, default=100000, help="steps to train in all")
    p.add_argument("--step-seconds", type=float, default=1.0, help="how long one step takes")
    p.add_argument("--every", type=float, default=600, help="seconds between periodic checkpoints")
    p.add_argument("--request-file", help="checkpoint when this file changes (instead of on SIGUSR1 only)")
    args = p.parse_args()

    signal.signal(signal.SIGUSR1, on_checkpoint_request)
    signal.signal(signal.SIGTERM, on_stop)
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    step, state = resume(args.checkpoint_dir)
    last_saved = time.monotonic()
    handled_request = None

    while step < args.steps and not stopping:
        time.sleep(args.step_seconds)  # one step of training
        state["loss"] *= 0.999
        step += 1
        if args.request_file:
            request = read_request(args.request_file)
            if request is not None and request != handled_request:
                print(f"checkpoint requested at {request}", flush=True)
                handled_request = request
                asked = True
        if asked or time.monotonic() - last_saved >= args.every:
            save(args.checkpoint_dir, step, state)
            asked = False
            last_saved = time.monotonic()
    save(args.checkpoint_dir, step, state)
    print("stopping" if stopping else "done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
