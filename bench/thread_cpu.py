#!/usr/bin/env python3
"""thread_cpu.py PID OUT - the CPU time of each thread of a process that
PID started (PID is /usr/bin/time, its first child the measured program).

Samples /proc/CHILD/task/*/stat every 20 ms until the child is gone and
writes to OUT the last CPU seconds (user + system) seen for each thread,
largest first, one per line. A thread that ends is counted as of its last
sample (at most 20 ms short). Used by bench.sh: on a shared machine the
busiest thread's CPU time says how long the import would take with a core
of its own, whatever else runs.
"""
import os
import sys
import time

tp, out = sys.argv[1], sys.argv[2]
tick = os.sysconf("SC_CLK_TCK")


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return kids[0] if kids else None
    except OSError:
        return None


child = None
while child is None:
    if not os.path.exists(f"/proc/{tp}"):
        break
    child = child_of(tp)
    if child is None:
        time.sleep(0.005)

cpu = {}
while child is not None:
    try:
        tids = os.listdir(f"/proc/{child}/task")
    except OSError:
        break
    for tid in tids:
        try:
            with open(f"/proc/{child}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu[tid] = max(cpu.get(tid, 0.0), (int(fields[11]) + int(fields[12])) / tick)
    time.sleep(0.02)

with open(out, "w") as f:
    for v in sorted(cpu.values(), reverse=True):
        f.write(f"{v:.2f}\n")
