#!/usr/bin/python3
"""check_records.py WORKLOAD RECORDS [--expect-failed ID,...] [--expect-cancelled-closure]
                  [--expect-removed ID,...] [--expect-timed-out ID,...] [--slots N]

Checks the per-task completion records of a jackdaw run (`--records FILE`: one JSON
line per task end) against the workload (JSON Lines, keys id and parents; its data
object lines, {"object": ...} without an id, are not tasks and are skipped; a task that
lists in its inputs an object another task declares in its outputs depends on that
task as on a parent):

  - every record names a task of the workload, with that task's index (its 0-based
    position in the workload);
  - every task of the workload has exactly one record;
  - statuses: without options, every task is "done".  With --expect-failed, exactly the
    named tasks are "failed" with a non-zero exit (or a signal), exactly their
    descendants are "cancelled", every other task is "done".  With
    --expect-cancelled-closure alone, whichever tasks failed (with a non-zero exit or
    a signal), the cancelled tasks are exactly their descendants and all others are
    done.  --expect-removed names tasks removed by `jackdaw cancel` before they
    finished: each is "cancelled", and so is every descendant (combines with the
    options above).  A removed task may have been running when it was removed, so its
    record may carry a start time (then end_ns >= start_ns); its descendants never
    started.  --expect-timed-out names tasks that passed their time limit: each is
    "timed out" (a failure: exit or signal not required, a sleep has neither), and
    every descendant is "cancelled" (combines with the options above; with
    --expect-cancelled-closure, "timed out" tasks count as failed);
  - dependencies: a task that ran (done or failed) started no earlier than every
    parent ended (start_ns >= parent end_ns), and every parent of it is done; a child
    of a failed or cancelled task is cancelled, never started (a cancelled record has
    start_ns 0);
  - with --slots N (every node has N slots): on each node, the runs that overlap in
    time ask for at most N cores together (a task's `cores`, default 1), unless one run
    is alone there (a task wider than its node runs alone).  Only the last run of a
    retried task has a record, so its earlier runs are not counted.

Prints one summary line and exits 0, or prints every problem (the first 20) and exits
1.  Exit 2 on usage errors or unreadable input.  Standard library only.
"""
import json
import sys

USAGE = ("usage: check_records.py WORKLOAD RECORDS [--expect-failed ID,...] [--expect-cancelled-closure]"
         " [--expect-removed ID,...] [--expect-timed-out ID,...] [--slots N]")
MAX_SHOWN = 20


def usage(msg):
    sys.stderr.write("check_records: %s\n%s\n" % (msg, USAGE))
    sys.exit(2)


def read_jsonl(path, what):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    usage("%s %s:%d: not JSON: %s" % (what, path, lineno, e))
                if not isinstance(obj, dict):
                    usage("%s %s:%d: not a JSON object" % (what, path, lineno))
                rows.append((lineno, obj))
    except OSError as e:
        usage("cannot read %s '%s': %s" % (what, path, e))
    return rows


def main(argv):
    positional = []
    expect_failed = None
    closure = False
    expect_removed = []
    expect_timed_out = []
    slots = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--slots":
            if i + 1 >= len(argv) or not argv[i + 1].isdigit() or int(argv[i + 1]) < 1:
                usage("--slots needs a whole number of slots, at least 1")
            slots = int(argv[i + 1])
            i += 2
            continue
        if a == "--expect-timed-out" or a.startswith("--expect-timed-out="):
            if "=" in a:
                value = a.split("=", 1)[1]
                i += 1
            elif i + 1 < len(argv):
                value = argv[i + 1]
                i += 2
            else:
                usage("--expect-timed-out needs a comma-separated list of ids")
            expect_timed_out = [x for x in value.split(",") if x]
            if not expect_timed_out:
                usage("--expect-timed-out needs at least one id")
            continue
        if a == "--expect-failed":
            if i + 1 >= len(argv):
                usage("--expect-failed needs a comma-separated list of ids")
            expect_failed = [x for x in argv[i + 1].split(",") if x]
            if not expect_failed:
                usage("--expect-failed needs at least one id")
            i += 2
            continue
        if a.startswith("--expect-failed="):
            expect_failed = [x for x in a.split("=", 1)[1].split(",") if x]
            i += 1
            continue
        if a == "--expect-removed":
            if i + 1 >= len(argv):
                usage("--expect-removed needs a comma-separated list of ids")
            expect_removed = [x for x in argv[i + 1].split(",") if x]
            if not expect_removed:
                usage("--expect-removed needs at least one id")
            i += 2
            continue
        if a.startswith("--expect-removed="):
            expect_removed = [x for x in a.split("=", 1)[1].split(",") if x]
            if not expect_removed:
                usage("--expect-removed needs at least one id")
            i += 1
            continue
        if a == "--expect-cancelled-closure":
            closure = True
            i += 1
            continue
        if a.startswith("-"):
            usage("unknown option '%s'" % a)
        positional.append(a)
        i += 1
    if len(positional) != 2:
        usage("need WORKLOAD and RECORDS")
    wl_path, rec_path = positional

    # The workload.
    ids = []
    index_of = {}
    parents = {}
    cores = {}
    producer = {}  # a declared output's object id -> the task that writes it
    reads = {}     # task id -> the object ids it lists in inputs
    for lineno, t in read_jsonl(wl_path, "workload"):
        if "object" in t and "id" not in t:
            continue  # a data object line, not a task
        tid = t.get("id")
        if not isinstance(tid, str):
            usage("workload %s:%d: no string id" % (wl_path, lineno))
        if tid in index_of:
            usage("workload %s:%d: duplicate id '%s'" % (wl_path, lineno, tid))
        index_of[tid] = len(ids)
        ids.append(tid)
        parents[tid] = list(t.get("parents") or [])
        cores[tid] = t.get("cores", 1)
        for o in t.get("outputs") or []:
            producer[o["object"]] = tid
        reads[tid] = [i["object"] if isinstance(i, dict) else i for i in t.get("inputs") or []]
    for tid in ids:
        for o in reads[tid]:
            if o in producer and producer[o] not in parents[tid]:
                parents[tid].append(producer[o])
    children = {tid: [] for tid in ids}
    for tid in ids:
        for p in parents[tid]:
            if p not in children:
                usage("workload %s: task '%s' has unknown parent '%s'" % (wl_path, tid, p))
            children[p].append(tid)
    if expect_failed is not None:
        for f in expect_failed:
            if f not in index_of:
                usage("--expect-failed: '%s' is not a task of %s" % (f, wl_path))
    for f in expect_removed:
        if f not in index_of:
            usage("--expect-removed: '%s' is not a task of %s" % (f, wl_path))
    for f in expect_timed_out:
        if f not in index_of:
            usage("--expect-timed-out: '%s' is not a task of %s" % (f, wl_path))
    removed_set = set(expect_removed)
    timed_out_set = set(expect_timed_out)
    if timed_out_set & (removed_set | set(expect_failed or [])):
        usage("a task is expected timed out and also failed or removed: %s"
              % ", ".join(sorted(timed_out_set & (removed_set | set(expect_failed or [])))))
    if expect_failed is not None and removed_set & set(expect_failed):
        usage("a task is both expected failed and removed: %s"
              % ", ".join(sorted(removed_set & set(expect_failed))))

    problems = []

    def problem(msg):
        problems.append(msg)

    # The records: exactly one per task.
    rec = {}
    counts = {}
    for lineno, r in read_jsonl(rec_path, "records"):
        where = "%s:%d" % (rec_path, lineno)
        tid = r.get("id")
        if tid not in index_of:
            problem("%s: record for unknown task %r" % (where, tid))
            continue
        counts[tid] = counts.get(tid, 0) + 1
        if counts[tid] > 1:
            problem("%s: task '%s' reported %d times (statuses so far: %s, then %s)"
                    % (where, tid, counts[tid], rec[tid].get("status"), r.get("status")))
            continue
        if r.get("index") != index_of[tid]:
            problem("%s: task '%s' has index %r, but it is task %d of the workload"
                    % (where, tid, r.get("index"), index_of[tid]))
        status = r.get("status")
        if status not in ("done", "failed", "timed out", "cancelled"):
            problem("%s: task '%s' has status %r (done, failed, timed out or cancelled)"
                    % (where, tid, status))
        for key in ("node", "ready_ns", "start_ns", "end_ns", "exit"):
            if not isinstance(r.get(key), int):
                problem("%s: task '%s': %s is %r, not an integer" % (where, tid, key, r.get(key)))
        if status in ("done", "failed", "timed out") and isinstance(r.get("start_ns"), int) \
                and isinstance(r.get("end_ns"), int) and r["end_ns"] < r["start_ns"]:
            problem("%s: task '%s' ends (%d) before it starts (%d)"
                    % (where, tid, r["end_ns"], r["start_ns"]))
        r["_where"] = where
        rec[tid] = r
    missing = [tid for tid in ids if tid not in rec]
    if missing:
        shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
        problem("%d of %d tasks have no record: %s" % (len(missing), len(ids), shown))

    def status_of(tid):
        return rec[tid].get("status") if tid in rec else None

    # Which tasks should have failed, and so which must be cancelled.
    if expect_failed is not None:
        failed_set = set(expect_failed)
    elif closure:
        failed_set = {tid for tid in ids if status_of(tid) == "failed"}
    else:
        failed_set = set()
    if closure and not expect_timed_out:
        timed_out_set = {tid for tid in ids if status_of(tid) == "timed out"}
    descendants = set()
    stack = list(failed_set | removed_set | timed_out_set)
    while stack:
        for c in children[stack.pop()]:
            if c not in descendants:
                descendants.add(c)
                stack.append(c)
    if descendants & (failed_set | timed_out_set):
        usage("an expected-failed or timed-out task descends from another: %s"
              % ", ".join(sorted(descendants & (failed_set | timed_out_set))))
    if descendants & removed_set:
        usage("a removed task descends from a failed or removed task: %s"
              % ", ".join(sorted(descendants & removed_set)))

    for tid in ids:
        st = status_of(tid)
        if st is None:
            continue
        r = rec[tid]
        where = r["_where"]
        if tid in failed_set:
            want = "failed"
        elif tid in timed_out_set:
            want = "timed out"
        elif tid in removed_set:
            want = "cancelled"
        elif tid in descendants:
            want = "cancelled"
        else:
            want = "done"
        if st != want:
            extra = ""
            if st == "failed":
                extra = " (exit %r%s)" % (r.get("exit"),
                                          ", signal %r" % r["signal"] if "signal" in r else "")
            why = ""
            if tid in removed_set:
                why = ": it was removed by jackdaw cancel"
            elif want == "cancelled" and removed_set:
                why = ": it descends from failed, timed-out or removed task(s) %s" \
                      % ", ".join(sorted(failed_set | removed_set | timed_out_set))
            elif want == "cancelled":
                why = ": it descends from failed or timed-out task(s) %s" \
                      % ", ".join(sorted(failed_set | timed_out_set))
            problem("%s: task '%s' is %s%s, expected %s%s" % (where, tid, st, extra, want, why))
        if st == "failed" and not (r.get("exit") or r.get("signal")):
            problem("%s: task '%s' failed with exit %r and no signal" % (where, tid, r.get("exit")))
        if st == "cancelled" and tid in removed_set:
            if isinstance(r.get("start_ns"), int) and r["start_ns"] != 0 \
                    and isinstance(r.get("end_ns"), int) and r["end_ns"] < r["start_ns"]:
                problem("%s: removed task '%s' ends (%d) before it starts (%d)"
                        % (where, tid, r["end_ns"], r["start_ns"]))
        elif st == "cancelled" and isinstance(r.get("start_ns"), int) and r["start_ns"] != 0:
            problem("%s: task '%s' is cancelled but has a start time (%d): it ran"
                    % (where, tid, r["start_ns"]))
        if st == "done" and r.get("exit") not in (0, None):
            problem("%s: task '%s' is done with exit %r" % (where, tid, r.get("exit")))

    # Dependencies.
    edges = 0
    for tid in ids:
        st = status_of(tid)
        if st is None:
            continue
        r = rec[tid]
        for p in parents[tid]:
            edges += 1
            pst = status_of(p)
            if pst is None:
                continue
            if st in ("done", "failed", "timed out"):
                if pst != "done":
                    problem("%s: task '%s' ran (%s) although its parent '%s' is %s"
                            % (r["_where"], tid, st, p, pst))
                    continue
                ps, pe = rec[p].get("end_ns"), r.get("start_ns")
                if isinstance(ps, int) and isinstance(pe, int) and pe < ps:
                    problem("%s: task '%s' started at %d, %d ns before its parent '%s' ended "
                            "at %d (%s)" % (r["_where"], tid, pe, ps - pe, p, ps, rec[p]["_where"]))
            elif pst in ("failed", "timed out", "cancelled") and st != "cancelled":
                problem("%s: task '%s' is %s although its parent '%s' is %s"
                        % (r["_where"], tid, st, p, pst))

    # Slots: a sweep over each node's runs, ends before starts at one instant (a slot
    # freed at t may be taken at t).
    if slots is not None:
        runs = {}
        for tid in ids:
            r = rec.get(tid)
            if not r or not isinstance(r.get("start_ns"), int) or not isinstance(r.get("end_ns"), int):
                continue
            if r["start_ns"] == 0 or r["end_ns"] <= r["start_ns"]:
                continue  # never started, or a noop's instant
            runs.setdefault(r.get("node"), []).append((r["start_ns"], r["end_ns"], tid))
        for node, rs in sorted(runs.items(), key=lambda x: str(x[0])):
            marks = sorted([(s0, 1, t) for s0, _, t in rs] + [(e0, 0, t) for _, e0, t in rs])
            held, running = 0, set()
            for at, is_start, tid in marks:
                if is_start:
                    held += cores[tid]
                    running.add(tid)
                    if held > slots and len(running) > 1:
                        problem("node %s: at %d the runs of %s take %d cores, more than its %d slots"
                                % (node, at, ", ".join(sorted(running)), held, slots))
                        break
                else:
                    held -= cores[tid]
                    running.discard(tid)

    if problems:
        for msg in problems[:MAX_SHOWN]:
            sys.stdout.write("check_records: %s\n" % msg)
        if len(problems) > MAX_SHOWN:
            sys.stdout.write("check_records: … and %d more problems\n" % (len(problems) - MAX_SHOWN))
        sys.stdout.write("check_records: FAILED: %d problem%s in %s against %s\n"
                         % (len(problems), "" if len(problems) == 1 else "s", rec_path, wl_path))
        return 1

    by_status = {"done": 0, "failed": 0, "timed out": 0, "cancelled": 0}
    nodes = {}
    for tid in ids:
        by_status[status_of(tid)] += 1
        if status_of(tid) != "cancelled":
            n = rec[tid].get("node")
            nodes[n] = nodes.get(n, 0) + 1
    per_node = " ".join("%s:%d" % (n, nodes[n]) for n in sorted(nodes))
    timed_out_text = ", %d timed out" % by_status["timed out"] if by_status["timed out"] else ""
    sys.stdout.write("check_records: OK: %d tasks, %d done, %d failed%s, %d cancelled, "
                     "%d dependencies respected; tasks per node %s\n"
                     % (len(ids), by_status["done"], by_status["failed"], timed_out_text,
                        by_status["cancelled"], edges, per_node or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
