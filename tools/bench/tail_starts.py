#!/usr/bin/python3
# tail_starts.py — what stealing could still have done at the end of a run: from a
# trace, each node's last end, the spread between the first node to go idle for good
# and the makespan, and how many tasks started anywhere after that first node went idle
# (with the latest such start).  When no task starts after it, every task was already
# running when the first slot ran dry for good, so no policy that moves tasks which have
# not started (a steal, FLDS's spill) can shorten the run: its tail is the spread of the
# running tasks' ends.  Used by netns.sh and allpairs.sh for the FLDS-against-MDL
# question of issues 16 and 19.
#
#   tools/bench/tail_starts.py JACKDAW TRACE
#
# Prints one line: "node ends within X ms; K tasks started after the first node's
# last end (latest Y ms after)".
import json
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: tail_starts.py JACKDAW TRACE", file=sys.stderr)
        return 2
    jackdaw, trace = sys.argv[1], sys.argv[2]
    cat = subprocess.run([jackdaw, "trace", "cat", "--json", trace], capture_output=True,
                         text=True)
    if cat.returncode != 0:
        print(f"tail_starts: {trace}: {cat.stderr.strip()}", file=sys.stderr)
        return 1
    starts, last_end = [], {}
    for line in cat.stdout.splitlines():
        # Cheap filter first: most records are not starts or ends.
        if '"TASK_START"' not in line and '"TASK_END"' not in line:
            continue
        e = json.loads(line)
        if e["kind"] == "TASK_START":
            starts.append(e["time"])
        else:
            last_end[e["node"]] = max(last_end.get(e["node"], 0), e["time"])
    if not last_end:
        print(f"tail_starts: {trace}: no task ended", file=sys.stderr)
        return 1
    first_idle, makespan = min(last_end.values()), max(last_end.values())
    late = [s - first_idle for s in starts if s > first_idle]
    print(f"node ends within {(makespan - first_idle) / 1e6:.1f} ms; {len(late)} tasks started "
          f"after the first node's last end (latest {max(late, default=0) / 1e6:.1f} ms after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
