#!/usr/bin/python3
"""Runs a command and prints its wall seconds and the peak of the summed resident memory of
the command and every process under it (KiB), sampled every 20 ms from /proc: for programs
that work in worker processes, whose memory GNU time's %M (one process's maximum) misses.

Usage: Benchmarks/peak_tree.py COMMAND [ARGS...]   (the command's output is discarded)
"""
import os
import subprocess
import sys
import time


def children():
    """{parent pid: [child pids]} of every process now."""
    tree = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            tree.setdefault(int(fields[1]), []).append(int(name))
        except OSError:
            pass
    return tree


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    start = time.monotonic()
    process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        tree = children()
        pending, total = [process.pid], 0
        while pending:
            pid = pending.pop()
            total += rss_kib(pid)
            pending.extend(tree.get(pid, []))
        peak = max(peak, total)
        time.sleep(0.02)
    print("%.2f %d %d" % (time.monotonic() - start, peak, process.returncode))


if __name__ == "__main__":
    main()
