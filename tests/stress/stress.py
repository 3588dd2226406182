#!/usr/bin/python3
"""stress.py — the process-level randomized stress harness of jackdaw.

Runs many small random DAG workloads through `jackdaw run` (real daemons on loopback)
over every stealing preset, placement and submission mode, and checks that each run
ends, on its own and in time, with every task ended exactly once, every dependency held,
and failures cancelling exactly their descendants.  A scheduler that sometimes never
finishes a two-task job cannot be trusted with anything; this is the check that it
always does.  Called by `make stress` (for as long as asked) and by `make test` /
`make check` (a bounded slice); tests/stress/README.md says what it covers.

  stress.py [--jackdaw BIN] [--duration D] [--runs N] [--workers N] [--master-seed M]
  stress.py [--jackdaw BIN] --seed S [--repeat N]

A case is fully determined by its seed S and the restriction options (--policy,
--placement, --mode, --nodes): S picks the policy, the node count, the placement and the
submission mode (any 576 consecutive seeds cover every combination, and short runs
spread over all of them: combo_index), then seeds a PRNG that draws the DAG, its task
kinds, data objects, declared outputs and their readers, failing tasks (some with retries,
which still fail), flaky commands
that succeed when retried, the slots, speeds and part overrides.  The
timing is not fixed, so a rare hang needs --repeat.  A run draws seeds M, M+1, ...
from the master seed M (random unless given).  Runs proceed in parallel (--workers).

A run fails when jackdaw exits with a code other than the one expected (0, or 1 when
the DAG has failing commands), when it does not end within --run-timeout (jackdaw's
own --timeout, then timeout(1) outside, then the harness kills the process group), when
check_records.py finds a problem, when `jackdaw trace verify` does (traced runs only),
when a sanitizer report or a WARN/ERROR line appears in a daemon log, or when a process
of the run is left behind.  On failure it prints the seed, the flags, the exact commands
to reproduce, and keeps the workload, outputs, records, logs (and a `jackdaw status`
snapshot of a run that was still going at half its time limit) in --keep-dir.

Processes: every run has a private directory that appears in the command line of each
daemon it starts (cluster file) and is their working directory; jackdaw run is started
in a session of its own.  After a run, anything naming that directory is waited for,
then killed by PID, never by name.  Passing runs' files are removed.

Exit status: 0 when every run passed, 1 when any failed, 2 on usage errors.
Standard library only; run it with /usr/bin/python3.
"""
import argparse
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK_RECORDS = os.path.join(HERE, "..", "integration", "check_records.py")
PY = "/usr/bin/python3"

POLICIES = ["daws", "a2ws", "parsec", "random1", "none", "daws+a2ws", "lw", "ctws"]
NODES = [2, 3, 5]
PLACEMENTS = ["ws", "mlb", "mdl", "rlds", "flds", "auto"]
MODES = ["hashed", "one", "roundrobin", "data"]
SHAPES = ["independent", "chain", "diamonds", "fanin", "fanout", "layered", "random", "forest"]

# Commands stay short-lived shell built-ins or tiny programs: the harness is after the
# scheduler, not the spawn path, and every command costs a fork on the node's loop.
OK_COMMANDS = ["true", "echo hello", "printf 'x%.0s' 1 2 3", "cat inputs/0 >/dev/null 2>&1; true",
               "ls >/dev/null"]
FAILING_COMMANDS = ["exit 3", "echo boom >&2; exit 3", "false", "exit 7"]
# Fails its first run and succeeds when run again (JACKDAW_ATTEMPT counts the runs
# before): with retries it must end done, whichever node runs it again.
FLAKY_COMMAND = '[ "$JACKDAW_ATTEMPT" -ge 1 ] || { echo flaky >&2; exit 5; }'

# Part overrides every preset accepts (preemptive starvation is refused with the
# leader and token victims, so it is drawn only for the others).
OVERRIDES = [["--amount", "single"], ["--amount", "chunk:2"], ["--wait-guard", "on"],
             ["--starvation", "ready+successors"]]
SPEEDS = ["1,0.5", "1,0.25,0.5", "0.5,1"]

# ThreadSanitizer's race reports start "WARNING:", not "ERROR:".
SANITIZER_RE = re.compile(rb"ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|"
                          rb"runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak|Thread)Sanitizer")
LOG_PROBLEM_RE = re.compile(r" (WARN|ERROR) ")

# How many failed runs keep everything, trace included; later ones keep the small files.
KEEP_FULL = 20


def die_usage(msg):
    sys.stderr.write("stress: %s\n" % msg)
    sys.exit(2)


def parse_duration(text):
    """'90', '90s', '30m', '1h', '1.5m' -> seconds."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smh]?)\s*", text or "")
    if not m:
        raise ValueError("'%s' is not a duration (seconds, or e.g. 30s, 30m, 1h)" % text)
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def parse_list(text, allowed, what, conv=str):
    if text is None:
        return list(allowed)
    out = []
    for x in text.split(","):
        x = x.strip()
        try:
            v = conv(x)
        except ValueError:
            die_usage("--%s: '%s' is not one of %s" % (what, x, ",".join(map(str, allowed))))
        if v not in allowed:
            die_usage("--%s: '%s' is not one of %s" % (what, x, ",".join(map(str, allowed))))
        if v not in out:
            out.append(v)
    if not out:
        die_usage("--%s: empty list" % what)
    return out


# ---------------------------------------------------------------------------------------
# Drawing a case.

def draw_size(rng):
    r = rng.random()
    if r < 0.30:
        return rng.randint(1, 8)
    if r < 0.65:
        return rng.randint(9, 40)
    if r < 0.85:
        return rng.randint(41, 120)
    return rng.randint(121, 300)


def shape_edges(rng, shape, n, base):
    """Parents (lists of indices) of tasks base..base+n-1 for one shape, in topological
    order; the indices are global."""
    par = [[] for _ in range(n)]
    if shape == "independent" or n == 1:
        pass
    elif shape == "chain":
        for i in range(1, n):
            par[i] = [i - 1]
    elif shape == "diamonds":
        # top -> k middles -> bottom, the bottom being the next diamond's top.
        i = 1
        top = 0
        while i < n:
            k = rng.randint(1, 4)
            mids = list(range(i, min(n, i + k)))
            for m in mids:
                par[m] = [top]
            i += len(mids)
            if i < n:
                par[i] = mids
                top = i
                i += 1
    elif shape == "fanin":
        # Leaves reduced level by level, d parents per task, to one sink (d may be as
        # large as the leaf count: a 10-into-1 fan-in).
        d = rng.choice([2, 3, 4, 8, max(2, n - 1)])
        # Grow the levels bottom-up from the sink so that exactly n tasks exist.
        levels = [[n - 1]]
        nxt = n - 2
        while nxt >= 0:
            new = []
            for t in levels[-1]:
                for _ in range(d):
                    if nxt < 0:
                        break
                    par[t].append(nxt)
                    new.append(nxt)
                    nxt -= 1
            if not new:
                break
            levels.append(new)
    elif shape == "fanout":
        d = rng.choice([2, 3, 4, 10])
        for i in range(1, n):
            par[i] = [(i - 1) // d]
    elif shape == "layered":
        width = rng.randint(1, max(1, min(20, n // 2)))
        layers, i = [], 0
        while i < n:
            w = rng.randint(1, width)
            layers.append(list(range(i, min(n, i + w))))
            i += w
        for prev, cur in zip(layers, layers[1:]):
            for t in cur:
                par[t] = sorted(rng.sample(prev, rng.randint(1, min(3, len(prev)))))
    elif shape == "random":
        p = rng.choice([0.05, 0.2, 0.5])
        for i in range(1, n):
            k = sum(1 for _ in range(min(4, i)) if rng.random() < p)
            par[i] = sorted(rng.sample(range(i), k)) if k else []
    else:
        raise AssertionError(shape)
    return [[base + p for p in ps] for ps in par]


def descendants_and_ancestors(parents, i, children):
    seen = {i}
    stack = [i]
    while stack:
        for c in children[stack.pop()]:
            if c not in seen:
                seen.add(c)
                stack.append(c)
    stack = [i]
    while stack:
        for p in parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def draw_dag(rng, nodes, slots=1):
    """Returns (lines: list of dicts in file order, failing ids, description)."""
    n = draw_size(rng)
    shape = rng.choice(SHAPES)
    parents = []
    parts = []
    if shape == "forest" and n >= 2:
        k = rng.randint(2, min(4, n))
        cuts = sorted(rng.sample(range(1, n), k - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        for s in sizes:
            sub = rng.choice(SHAPES[:-1])
            parts.append("%s:%d" % (sub, s))
            parents += shape_edges(rng, sub, s, len(parents))
    else:
        if shape == "forest":
            shape = "independent"
        parents = shape_edges(rng, shape, n, 0)
    children = [[] for _ in range(n)]
    for i, ps in enumerate(parents):
        for p in ps:
            children[p].append(i)

    # Task kinds: a profile per DAG, so some DAGs are all noop (scheduler overhead at its
    # highest), some all sleep, most mixed.
    profile = rng.choice(["noop", "sleep", "mixed", "mixed", "mixed"])
    cmd_frac = rng.choice([0, 0, 0.05, 0.15])
    kinds = []
    n_cmd = 0
    for i in range(n):
        r = rng.random()
        if r < cmd_frac and n_cmd < 30:
            kinds.append("command")
            n_cmd += 1
        elif profile == "noop" or (profile == "mixed" and r < 0.45):
            kinds.append("noop")
        else:
            kinds.append("sleep")

    # Failing commands: an antichain (no failing task descends from another, since a
    # descendant of a failed task is cancelled and never runs).
    failing = set()
    if rng.random() < 0.3:
        want = rng.randint(1, min(3, n))
        blocked = set()
        for i in rng.sample(range(n), min(n, want * 4)):
            if len(failing) >= want:
                break
            if i in blocked:
                continue
            failing.add(i)
            blocked |= descendants_and_ancestors(parents, i, children)

    # Data on some DAGs, so that the data-aware placements and --mode data have
    # something to weigh: output objects, and input objects on given nodes.
    data = rng.random() < 0.4
    objects = []
    if data:
        for k in range(rng.randint(1, 6)):
            o = {"object": "o%d" % k, "bytes": rng.choice([0, 1024, 65536, 262144, 1048576])}
            where = rng.random()
            if where < 0.4:
                o["node"] = "spread"
            elif where < 0.8:
                o["node"] = rng.randrange(nodes)
            objects.append(o)
    pinned = rng.random() < 0.2

    # Wide tasks (cores > 1) on some DAGs: a node runs them only while their cores fit
    # (check_records --slots), and one wider than the node would never be accepted.
    wide = slots > 1 and rng.random() < 0.25

    lines = []
    flaky = 0
    made = []   # declared outputs of the tasks so far (a reader comes after its maker)
    reads = []  # (task, declared output it reads)
    for i in range(n):
        t = {"id": "t%d" % i}
        kind = "command" if i in failing else kinds[i]
        t["kind"] = kind
        if kind == "sleep":
            t["duration_s"] = round(rng.uniform(0, 0.005), 4)
        elif kind == "command" and i in failing:
            t["cmd"] = rng.choice(FAILING_COMMANDS)
            if rng.random() < 0.3:
                t["retries"] = rng.randint(1, 2)  # fails every run: still fails for good
        elif kind == "command" and rng.random() < 0.15:
            t["cmd"] = FLAKY_COMMAND
            t["retries"] = rng.randint(1, 2)
            flaky += 1
        elif kind == "command" and rng.random() < 0.3:
            # Declared outputs: files that become objects of their own, which later
            # tasks (never a failing one: it must not descend from another) read by id.
            k = rng.randint(1, 2)
            t["cmd"] = "; ".join("echo t%d > out/f%d" % (i, j) for j in range(k))
            t["outputs"] = [{"object": "m%d_%d" % (i, j), "file": "out/f%d" % j} for j in range(k)]
            made += [(o["object"], i) for o in t["outputs"]]
        elif kind == "command":
            t["cmd"] = rng.choice(OK_COMMANDS)
        if made and i not in failing and "outputs" not in t and rng.random() < 0.3:
            reads.append((i, t, rng.choice(made)))
        if parents[i]:
            t["parents"] = ["t%d" % p for p in parents[i]]
        if data and rng.random() < 0.6:
            t["output_bytes"] = rng.choice([0, 4096, 65536, 524288])
        if objects and rng.random() < 0.4:
            t["inputs"] = sorted({o["object"] for o in rng.sample(objects, rng.randint(1, min(2, len(objects))))})
        if pinned and rng.random() < 0.1:
            t["stealable"] = False
        if wide and rng.random() < 0.3:
            t["cores"] = rng.randint(2, slots)
        lines.append(t)
    # Reading an output makes its maker a parent: kept only where no failing task would
    # then descend from another (a failing ancestor of the maker and a failing descendant
    # of the reader), the edges so far counted.
    read = 0
    for r, t, (o, p) in reads:
        if failing:
            children = [[] for _ in range(n)]
            for c, ps in enumerate(parents):
                for q in ps:
                    children[q].append(c)
            up = descendants_and_ancestors(parents, p, [[] for _ in range(n)])
            down = descendants_and_ancestors([[] for _ in range(n)], r, children)
            if up & failing and down & failing:
                continue
        t["inputs"] = sorted(set(t.get("inputs", [])) | {o})
        if p not in parents[r]:
            parents[r] = parents[r] + [p]
        read += 1
    # File order: usually topological, sometimes shuffled (a parent may follow its
    # child), objects first, last or among the tasks.
    if rng.random() < 0.2:
        rng.shuffle(lines)
    for o in objects:
        lines.insert(rng.randint(0, len(lines)), o)

    desc = "%d task%s, %s%s" % (n, "" if n == 1 else "s", shape,
                                "(" + ",".join(parts) + ")" if parts else "")
    extras = [profile]
    if n_cmd:
        extras.append("%d command%s" % (n_cmd, "" if n_cmd == 1 else "s"))
    if failing:
        extras.append("%d failing" % len(failing))
    if flaky:
        extras.append("%d retried" % flaky)
    if objects:
        extras.append("%d object%s" % (len(objects), "" if len(objects) == 1 else "s"))
    if made:
        extras.append("%d declared output%s, %d read" % (len(made), "" if len(made) == 1 else "s",
                                                         read))
    if data:
        extras.append("data")
    if pinned:
        extras.append("some unstealable")
    return lines, sorted("t%d" % i for i in failing), desc + "; " + ", ".join(extras)


def combo_index(seed, opts):
    """Which (policy, nodes, placement, mode) a seed runs, as a mixed-radix index.  The
    seed is multiplied by a unit modulo the number of combinations: any that many
    consecutive seeds still cover every combination, and a short slice (make test) is
    spread over all of them instead of sweeping the slowest digit."""
    total = len(opts.policies) * len(opts.nodes_list) * len(opts.placements) * len(opts.modes)
    k = 545 % total if total > 1 else 1  # 545: the unit mod 576 (all of them) that spreads best
    while math.gcd(k, total) != 1:
        k -= 1
    return seed * k % total


class Case:
    """Everything a run needs, drawn from its seed and the restriction lists."""

    def __init__(self, seed, opts):
        self.seed = seed
        c = combo_index(seed, opts)
        self.policy = opts.policies[c % len(opts.policies)]
        c //= len(opts.policies)
        self.nodes = opts.nodes_list[c % len(opts.nodes_list)]
        c //= len(opts.nodes_list)
        self.placement = opts.placements[c % len(opts.placements)]
        c //= len(opts.placements)
        self.mode = opts.modes[c % len(opts.modes)]
        rng = random.Random(seed)
        self.slots = rng.randint(1, 4)
        self.lines, self.failing, self.desc = draw_dag(rng, self.nodes, self.slots)
        self.flags = ["--nodes", str(self.nodes), "--slots", str(self.slots),
                      "--policy", self.policy, "--placement", self.placement, "--mode", self.mode]
        if rng.random() < 0.2:
            self.flags += ["--speeds", rng.choice(SPEEDS)]
        if rng.random() < 0.15:
            choices = OVERRIDES + ([] if self.policy in ("lw", "ctws") else
                                   [["--starvation", "preemptive"]])
            self.flags += rng.choice(choices)
        if rng.random() < 0.3:
            # Replicated metadata changes when an end counts and who hears of it.
            self.flags += ["--replicas", str(rng.choice([2, 2, 3]))]
        self.traced = rng.random() < opts.trace_fraction
        self.expect_rc = 1 if self.failing else 0

    def check_args(self):
        return (["--expect-failed", ",".join(self.failing)] if self.failing else []) + \
            ["--slots", str(self.slots)]


# ---------------------------------------------------------------------------------------
# Processes.

def proc_marks(pid):
    """(cmdline bytes, cwd) of a live non-zombie process, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return None
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmdline = f.read()
    except (OSError, IndexError):
        return None
    try:
        cwd = os.readlink("/proc/%d/cwd" % pid)
    except OSError:
        cwd = ""
    return cmdline, cwd


def pids_of(rundir):
    """Live processes whose command line names rundir or whose working directory is
    inside it: the run's daemons and the commands they spawned."""
    mark = rundir.encode()
    me = os.getpid()
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) == me:
            continue
        m = proc_marks(int(e))
        if m and (mark in m[0] or m[1] == rundir or m[1].startswith(rundir + "/")):
            out.append(int(e))
    return out


def still_ours(pid, rundir):
    m = proc_marks(pid)
    return bool(m) and (rundir.encode() in m[0] or m[1] == rundir or m[1].startswith(rundir + "/"))


def kill_pids(pids, rundir):
    """TERM, a bounded wait, then KILL; each PID re-checked against rundir first so a
    recycled PID is never signalled."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
        live = [p for p in pids if still_ours(p, rundir)]
        if not live:
            return
        for p in live:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        end = time.monotonic() + wait
        while time.monotonic() < end and any(still_ours(p, rundir) for p in live):
            time.sleep(0.05)


def kill_group(proc):
    """Ends the run's own session (jackdaw run, and timeout(1) around it)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        try:
            proc.wait(timeout=3)
            return
        except subprocess.TimeoutExpired:
            pass


# ---------------------------------------------------------------------------------------
# One run.

class Result:
    def __init__(self, case):
        self.case = case
        self.problems = []       # (kind, message)
        self.seconds = 0.0
        self.rc = None
        self.kept = None
        self.aborted = False

    @property
    def ok(self):
        return not self.problems

    @property
    def kind(self):
        return self.problems[0][0] if self.problems else "pass"


def tail(path, n=400):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-n:].decode("utf-8", "replace").strip()


def jackdaw_cmd(opts, case, wl, records, trace):
    cmd = [opts.jackdaw, "run", wl] + case.flags + [
        "--records", records, "--timeout", "%g" % opts.run_timeout, "--quiet"]
    cmd += ["--trace", trace] if case.traced else ["--no-trace"]
    return cmd


def run_case(case, opts, abort):
    res = Result(case)
    d = tempfile.mkdtemp(prefix="jackdaw-stress-%d-" % case.seed, dir=opts.tmp)
    wl = os.path.join(d, "workload.jsonl")
    with open(wl, "w") as f:
        for line in case.lines:
            f.write(json.dumps(line) + "\n")
    records = os.path.join(d, "records.jsonl")
    trace = os.path.join(d, "trace.avro")
    keep = os.path.join(d, "cluster")
    cmd = jackdaw_cmd(opts, case, wl, records, trace) + ["--keep", keep]
    env = dict(os.environ)
    env.update({
        "TMPDIR": d, "JACKDAW_TRACE_DIR": d,
        "JACKDAW_CLUSTER": os.path.join(d, "default-cluster", "cluster.json"),
        # A sanitizer report must not look like an ordinary exit code.
        "ASAN_OPTIONS": (env.get("ASAN_OPTIONS", "") + ":exitcode=99").lstrip(":"),
        "UBSAN_OPTIONS": (env.get("UBSAN_OPTIONS", "") + ":print_stacktrace=1:exitcode=99").lstrip(":"),
        "TSAN_OPTIONS": (env.get("TSAN_OPTIONS", "") + ":exitcode=99").lstrip(":"),
    })
    # jackdaw's own --timeout first, timeout(1) a little later, and the harness's kill
    # of the whole session last: a hang is caught even if one layer hangs too.
    outer = opts.run_timeout * 1.5 + 5
    full = ["timeout", "-k", "5", "%g" % outer] + cmd
    out_path, err_path = os.path.join(d, "stdout"), os.path.join(d, "stderr")
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=d,
                                env=env, start_new_session=True)
    status_at = start + opts.run_timeout / 2
    hard_end = start + outer + 10
    snapped = False
    killed = False
    while True:
        try:
            proc.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if abort.is_set():
            kill_group(proc)
            res.aborted = True
            break
        if not snapped and now >= status_at:
            # The run is far past what any case needs: keep the cluster's own view of
            # itself (queues, steal counts) as evidence before the timeout stops it.
            snapped = True
            cf = os.path.join(keep, "cluster.json")
            with open(os.path.join(d, "status-at-half-timeout"), "wb") as s:
                try:
                    subprocess.run([opts.jackdaw, "status", "--cluster", cf], stdin=subprocess.DEVNULL,
                                   stdout=s, stderr=subprocess.STDOUT, timeout=10, env=env, cwd=d)
                except subprocess.TimeoutExpired:
                    s.write(b"(jackdaw status did not answer in 10 s)\n")
        if now >= hard_end:
            kill_group(proc)
            killed = True
            break
    res.seconds = time.monotonic() - start
    res.rc = proc.returncode

    # Anything of this run still alive: daemons should be gone when jackdaw run
    # returns, so wait a little, then kill by PID and report the leak.
    left = pids_of(d)
    end = time.monotonic() + 5
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = pids_of(d)
    if left:
        desc = []
        for p in left:
            m = proc_marks(p)
            if m:
                desc.append("%d: %s" % (p, m[0].replace(b"\0", b" ").decode("utf-8", "replace")[:160]))
        kill_pids(left, d)
        if not res.aborted:
            res.problems.append(("leak", "processes left running after the run (killed): "
                                 + "; ".join(desc)))
    if res.aborted:
        shutil.rmtree(d, ignore_errors=True)
        return res

    err_tail = tail(err_path)
    rc = res.rc
    if killed or rc in (124, 137, -signal.SIGKILL, -signal.SIGTERM):
        res.problems.insert(0, ("hang", "jackdaw run did not end within %gs (exit %s): %s"
                                % (outer, rc, err_tail or "no output")))
    elif rc == 6 or (rc == 4 and "timed out" in err_tail):
        # 6: the job outlived --timeout; before exit code 6 existed, run said so with 4.
        res.problems.insert(0, ("hang", "jackdaw run timed out after %gs: %s"
                                % (opts.run_timeout, err_tail.splitlines()[-1])))
    else:
        if rc != case.expect_rc:
            res.problems.insert(0, ("exit", "jackdaw run exited %s, expected %d: %s"
                                    % (rc, case.expect_rc, err_tail or tail(out_path) or "no output")))
        # The records say which task went wrong even when the exit code already did.
        # Relative names, run in d: the messages then name the files as they are kept.
        p = subprocess.run([PY, CHECK_RECORDS, "workload.jsonl", "records.jsonl"] + case.check_args(),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120, cwd=d)
        if p.returncode != 0:
            res.problems.append(("records", p.stdout.decode("utf-8", "replace").strip()))
        if case.traced and rc in (0, 1):
            try:
                p = subprocess.run([opts.jackdaw, "trace", "verify", "trace.avro"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, cwd=d)
                if p.returncode != 0:
                    res.problems.append(("trace", p.stdout.decode("utf-8", "replace").strip()[:2000]))
            except subprocess.TimeoutExpired:
                res.problems.append(("trace", "jackdaw trace verify did not end in 120 s"))

    # Sanitizer reports anywhere (client output, daemon logs, task outputs), and WARN or
    # ERROR lines in daemon logs: healthy daemons running a valid workload never warn.
    # A hung run's logs say what its timeout did, which is not a problem of its own.
    hung = res.kind == "hang"
    for root, _dirs, files in os.walk(d):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(".avro"):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read(8 << 20)
            except OSError:
                continue
            if SANITIZER_RE.search(data):
                res.problems.append(("sanitizer", "report in %s:\n%s" % (
                    os.path.relpath(path, d), data.decode("utf-8", "replace")[:3000])))
            if name.endswith(".log") and not hung:
                bad = [ln for ln in data.decode("utf-8", "replace").splitlines()
                       if LOG_PROBLEM_RE.search(ln) and not (opts.log_allow and opts.log_allow.search(ln))]
                if bad:
                    res.problems.append(("log", "%s: %s" % (os.path.relpath(path, d), " | ".join(bad[:5]))))

    if res.problems:
        res.kept = keep_failure(case, opts, d, res)
    shutil.rmtree(d, ignore_errors=True)
    return res


def keep_failure(case, opts, d, res):
    """Copies what a failure needs to be understood out of the run's directory (which
    may sit in memory, /dev/shm): the workload, outputs, records, status snapshot, daemon
    logs and, for the first failures, the trace."""
    with opts.lock:
        opts.kept_count += 1
        full = opts.kept_count <= KEEP_FULL
    dst = os.path.join(opts.keep_dir, "seed-%d" % case.seed)
    n = 1
    while os.path.exists(dst):
        n += 1
        dst = os.path.join(opts.keep_dir, "seed-%d.%d" % (case.seed, n))
    os.makedirs(dst)
    for name in ("workload.jsonl", "stdout", "stderr", "records.jsonl", "status-at-half-timeout"):
        if os.path.exists(os.path.join(d, name)):
            shutil.copy(os.path.join(d, name), dst)
    if full and os.path.exists(os.path.join(d, "trace.avro")):
        shutil.copy(os.path.join(d, "trace.avro"), dst)
    work = os.path.join(d, "cluster", "work")
    if os.path.isdir(work):
        for name in sorted(os.listdir(work)):
            if name.endswith(".log"):
                shutil.copy(os.path.join(work, name), dst)
    with open(os.path.join(dst, "problems.txt"), "w") as f:
        f.write(describe(case, opts, res, dst))
    return dst


def repro_commands(case, opts, kept):
    restrict = []
    for flag, lst, full in (("--policy", opts.policies, POLICIES), ("--nodes", opts.nodes_list, NODES),
                            ("--placement", opts.placements, PLACEMENTS), ("--mode", opts.modes, MODES)):
        if lst != full:
            restrict += [flag, ",".join(map(str, lst))]
    harness = [PY, os.path.abspath(__file__), "--jackdaw", opts.tested, "--seed", str(case.seed),
               "--repeat", "20", "--run-timeout", "%g" % opts.run_timeout,
               "--trace-fraction", "%g" % opts.trace_fraction] + restrict
    wl = os.path.join(kept, "workload.jsonl") if kept else "WORKLOAD"
    by_hand = jackdaw_cmd(opts, case, wl, "records.jsonl", "trace.avro")
    by_hand[0] = opts.tested
    check = [PY, os.path.abspath(CHECK_RECORDS), wl, "records.jsonl"] + case.check_args()
    return (" ".join(shlex.quote(x) for x in harness),
            " ".join(shlex.quote(x) for x in by_hand) + " ; " + " ".join(shlex.quote(x) for x in check))


def describe(case, opts, res, kept):
    harness, by_hand = repro_commands(case, opts, kept)
    lines = ["stress: FAIL seed %d (%s) after %.1fs" % (case.seed, res.kind, res.seconds),
             "  case:      %s" % case.desc,
             "  flags:     %s%s" % (" ".join(case.flags), "  (traced)" if case.traced else ""),
             "  expected:  exit %d%s" % (case.expect_rc, ", failing " + ",".join(case.failing)
                                         if case.failing else "")]
    for kind, msg in res.problems:
        msg = msg.replace("\n", "\n             ")
        lines.append("  %-9s  %s" % (kind + ":", msg))
    if kept:
        lines.append("  kept:      %s" % kept)
    lines.append("  reproduce: %s" % harness)
    lines.append("  by hand:   %s" % by_hand)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# The driver.

def summary(results, elapsed, opts, master):
    done = [r for r in results if not r.aborted]
    failed = [r for r in done if not r.ok]
    out = ["", "stress: %d runs in %.0f s (%.0f runs/min, %d workers, %s), %d passed, %d failed"
           % (len(done), elapsed, 60.0 * len(done) / elapsed if elapsed > 0 else 0, opts.workers,
              "seed %d" % opts.seed if opts.seed is not None else "master seed %d" % master,
              len(done) - len(failed), len(failed))]
    aborted = sum(1 for r in results if r.aborted)
    if aborted:
        out.append("  interrupted: %d run%s in flight not counted" % (aborted, "" if aborted == 1 else "s"))
    if opts.max_failures and len(failed) >= opts.max_failures:
        out.append("  stopped starting runs after %d failures (--max-failures)" % opts.max_failures)
    kinds = sorted({r.kind for r in failed})

    def table(title, key, values):
        out.append("  %-11s %6s %6s %6s %s" % (title, "runs", "passed", "failed",
                                               " ".join("%6s" % k for k in kinds)))
        for v in values:
            rs = [r for r in done if key(r.case) == v]
            if not rs:
                continue
            bad = [r for r in rs if not r.ok]
            out.append("  %-11s %6d %6d %6d %s" % (v, len(rs), len(rs) - len(bad), len(bad),
                                                   " ".join("%6d" % sum(1 for r in bad if r.kind == k)
                                                            for k in kinds)))

    if done:
        table("policy", lambda c: c.policy, POLICIES)
        table("nodes", lambda c: c.nodes, NODES)
        table("placement", lambda c: c.placement, PLACEMENTS)
        table("mode", lambda c: c.mode, MODES)
        table("slots", lambda c: c.slots, [1, 2, 3, 4])
        ok = sorted(r.seconds for r in done if r.ok)
        if ok:
            out.append("  passing runs: median %.2f s, 99th percentile %.2f s, longest %.2f s"
                       % (ok[len(ok) // 2], ok[min(len(ok) - 1, int(len(ok) * 0.99))], ok[-1]))
    if failed:
        out.append("  failed seeds: " + " ".join("%d(%s)" % (r.case.seed, r.kind) for r in failed[:60])
                   + (" …" if len(failed) > 60 else ""))
        out.append("  kept in: %s" % opts.keep_dir)
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(prog="stress.py", description=__doc__.split("\n")[2])
    ap.add_argument("--jackdaw", default=os.environ.get("JACKDAW"),
                    help="the jackdaw binary (default $JACKDAW)")
    ap.add_argument("--duration", help="stop starting runs after this long (90, 90s, 30m, 1h)")
    ap.add_argument("--runs", type=int, help="stop after this many runs")
    ap.add_argument("--workers", type=int, default=2, help="runs at a time (default 2)")
    ap.add_argument("--master-seed", type=int, help="first case seed (default: random)")
    ap.add_argument("--seed", type=int, help="run only the case of this seed (with --repeat N)")
    ap.add_argument("--repeat", type=int, default=1, help="with --seed: run it N times")
    ap.add_argument("--run-timeout", type=float, default=30,
                    help="seconds a run may take before it counts as hung (default 30)")
    ap.add_argument("--max-failures", type=int, default=0,
                    help="stop starting runs after this many failures (default 0: never)")
    ap.add_argument("--policy", help="comma-separated presets to draw from (default all)")
    ap.add_argument("--placement", help="comma-separated placements (default all)")
    ap.add_argument("--mode", help="comma-separated submission modes (default all)")
    ap.add_argument("--nodes", help="comma-separated node counts among 2,3,5 (default all)")
    ap.add_argument("--trace-fraction", type=float, default=0.1,
                    help="share of runs traced and checked with jackdaw trace verify (0.1)")
    ap.add_argument("--keep-dir", help="where failed runs are kept (default $TMPDIR/jackdaw-stress-failed-*)")
    ap.add_argument("--tmp", help="where runs' private directories go (default $TMPDIR, /dev/shm, /tmp)")
    ap.add_argument("--log-allow", help="regex of daemon WARN/ERROR lines not to count as failures")
    ap.add_argument("--results", help="write one JSON line per run here")
    ap.add_argument("--progress", type=float, default=30, help="seconds between progress lines (30)")
    opts = ap.parse_args(argv)

    if not opts.jackdaw:
        die_usage("give --jackdaw BIN or set JACKDAW")
    opts.jackdaw = os.path.abspath(opts.jackdaw)
    if not os.access(opts.jackdaw, os.X_OK):
        die_usage("'%s' is not an executable file" % opts.jackdaw)
    if opts.seed is None and opts.duration is None and opts.runs is None:
        die_usage("give --duration, --runs or --seed")
    try:
        opts.duration_s = parse_duration(opts.duration) if opts.duration is not None else None
    except ValueError as e:
        die_usage("--duration: %s" % e)
    if opts.workers < 1 or opts.repeat < 1 or opts.run_timeout <= 0:
        die_usage("--workers, --repeat and --run-timeout must be positive")
    if not 0 <= opts.trace_fraction <= 1:
        die_usage("--trace-fraction must be within 0..1")
    opts.policies = parse_list(opts.policy, POLICIES, "policy")
    opts.placements = parse_list(opts.placement, PLACEMENTS, "placement")
    opts.modes = parse_list(opts.mode, MODES, "mode")
    opts.nodes_list = parse_list(opts.nodes, NODES, "nodes", int)
    try:
        opts.log_allow = re.compile(opts.log_allow) if opts.log_allow else None
    except re.error as e:
        die_usage("--log-allow: %s" % e)
    if not opts.tmp:
        opts.tmp = os.environ.get("TMPDIR") or ("/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK)
                                                else "/tmp")
    opts.tmp = os.path.abspath(opts.tmp)
    if not opts.keep_dir:
        opts.keep_dir = tempfile.mkdtemp(prefix="jackdaw-stress-failed-",
                                         dir=os.environ.get("TMPDIR") or "/tmp")
    opts.keep_dir = os.path.abspath(opts.keep_dir)
    os.makedirs(opts.keep_dir, exist_ok=True)
    opts.lock = threading.Lock()
    opts.kept_count = 0

    # A rebuild during a long stress run must not swap the binary under it: run a copy.
    snapdir = tempfile.mkdtemp(prefix="jackdaw-stress-bin-", dir=opts.tmp)
    tested = opts.tested = opts.jackdaw
    shutil.copy(opts.jackdaw, os.path.join(snapdir, "jackdaw"))
    opts.jackdaw = os.path.join(snapdir, "jackdaw")

    if opts.seed is not None:
        master = opts.seed
        seeds = lambda i: opts.seed if i < opts.repeat else None  # noqa: E731
    else:
        master = opts.master_seed if opts.master_seed is not None else \
            int.from_bytes(os.urandom(4), "little") & 0x7fffffff
        seeds = lambda i: master + i if opts.runs is None or i < opts.runs else None  # noqa: E731
    print("stress: %s on %s; %s; %d worker%s; run timeout %gs; failures kept in %s"
          % ("seed %d x%d" % (opts.seed, opts.repeat) if opts.seed is not None
             else "master seed %d" % master, tested,
             "for %gs" % opts.duration_s if opts.duration_s else "%s runs" % (opts.runs or opts.repeat),
             opts.workers, "" if opts.workers == 1 else "s", opts.run_timeout, opts.keep_dir),
          flush=True)

    start = time.monotonic()
    deadline = start + opts.duration_s if opts.duration_s is not None else None
    abort = threading.Event()
    state = {"next": 0, "failed": 0}
    results = []
    results_file = open(opts.results, "w") if opts.results else None

    def take():
        with opts.lock:
            if abort.is_set():
                return None
            if deadline is not None and time.monotonic() >= deadline:
                return None
            if opts.max_failures and state["failed"] >= opts.max_failures:
                return None
            s = seeds(state["next"])
            if s is None:
                return None
            state["next"] += 1
            return s

    def worker():
        while True:
            s = take()
            if s is None:
                return
            try:
                res = run_case(Case(s, opts), opts, abort)
            except Exception as e:  # a harness bug must not pass for a clean run
                res = Result(Case(s, opts))
                res.problems.append(("harness", "%s: %s" % (type(e).__name__, e)))
            with opts.lock:
                results.append(res)
                if not res.ok and not res.aborted:
                    state["failed"] += 1
                    sys.stdout.write(describe(res.case, opts, res, res.kept))
                    sys.stdout.flush()
                if results_file and not res.aborted:
                    results_file.write(json.dumps({
                        "seed": s, "result": res.kind, "seconds": round(res.seconds, 3), "rc": res.rc,
                        "policy": res.case.policy, "nodes": res.case.nodes, "slots": res.case.slots,
                        "placement": res.case.placement, "mode": res.case.mode,
                        "flags": res.case.flags, "dag": res.case.desc}) + "\n")
                    results_file.flush()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(opts.workers)]
    for t in threads:
        t.start()
    last = start
    interrupted = False
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.5)
            now = time.monotonic()
            if opts.progress > 0 and now - last >= opts.progress:
                last = now
                with opts.lock:
                    n = len(results)
                    f = state["failed"]
                print("stress: %d runs, %d failed, %.0f s" % (n, f, now - start), flush=True)
    except KeyboardInterrupt:
        interrupted = True
        abort.set()
        for t in threads:
            t.join(timeout=opts.run_timeout + 40)
    if results_file:
        results_file.close()
    shutil.rmtree(snapdir, ignore_errors=True)
    print(summary(results, time.monotonic() - start, opts, master), flush=True)
    failed = sum(1 for r in results if not r.ok and not r.aborted)
    if not failed and not os.listdir(opts.keep_dir):
        try:
            os.rmdir(opts.keep_dir)
        except OSError:
            pass
    if interrupted:
        return 130
    return 1 if failed else 0


def on_sigterm(_signum, _frame):
    # make's or CI's TERM ends the runs in flight and still prints the summary.
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    sys.exit(main(sys.argv[1:]))
