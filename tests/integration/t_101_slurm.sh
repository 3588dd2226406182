#!/bin/bash
# t_101_slurm: a cluster launched inside a Slurm allocation.  A private single-node
# Slurm (tests/slurm/bed.sh: its own munged, slurmctld and slurmd, state and ports)
# grants `salloc -n 4`; inside it `jackdaw launch --slurm --per-task` starts one daemon
# per Slurm task with one srun step (4 daemons, 1 slot each from the tasks' CPUs), a
# fan-out DAG runs to the end (each task once, every dependency held), `stop` ends the
# daemons, and the step ends with them.  Skipped, saying why, where no Slurm can be run
# (not root, or slurm-wlm/munge not installed).
. "$(dirname "$0")/lib.sh"

BED="$HERE/../slurm/bed.sh"
why=$("$BED" check) || skip "$why"
at_exit "$BED" down "$T/slurm"
# munged refuses a socket below a directory others cannot search (mktemp made 0700).
chmod 0711 "$T"
exports=$("$BED" up "$T/slurm") || fail "bed.sh up failed"
eval "$exports"
[ -n "${SLURM_CONF:-}" ] || fail "bed.sh up gave no SLURM_CONF"

"$JACKDAW" gen fanout --tasks 200 --degree 3 --duration 0.001-0.004 --seed 5 -o "$T/fo.jsonl" ||
    fail "gen fanout failed"
CL="$T/cluster/cluster.json"
# The allocation's shell: launch, run, stop; each step's exit code on its own line.
cat >"$T/inside.sh" <<EOF_SH
"$JACKDAW" launch --slurm --per-task --cluster "$CL" --start-timeout 30 >"$T/launch.out" 2>&1
echo "launch \$?"
"$JACKDAW" submit "$T/fo.jsonl" --cluster "$CL" --wait --json --quiet --timeout 60 \
    --records "$T/fo.records" >"$T/submit.out" 2>"$T/submit.err"
echo "submit \$?"
"$JACKDAW" status --cluster "$CL" >"$T/status.out" 2>&1
echo "status \$?"
"$JACKDAW" stop --cluster "$CL" >"$T/stop.out" 2>&1
echo "stop \$?"
EOF_SH
timeout -k 5 150 salloc -n 4 --time=3 bash "$T/inside.sh" >"$T/salloc.out" 2>"$T/salloc.err" ||
    { cat "$T/salloc.err" "$T/launch.out" >&2; fail "salloc -n 4 failed"; }
for step in launch submit status stop; do
    grep -qx "$step 0" "$T/salloc.out" || {
        cat "$T/salloc.out" "$T/launch.out" "$T/submit.err" "$T/stop.out" >&2
        fail "$step inside the allocation did not exit 0"
    }
done
grep -q "launched 4 nodes" "$T/launch.out" || { cat "$T/launch.out" >&2; fail "not 4 daemons"; }
[ "$(grep -cE '^[0-3] +1 ' "$T/status.out")" -eq 4 ] || { cat "$T/status.out" >&2; fail "status does not show 4 nodes of 1 slot"; }
check_records "$T/fo.jsonl" "$T/fo.records"
# The step (srun and its daemons) ends with them: nothing of this cluster still runs.
gone() { [ -z "$(pids_matching "$T/cluster")" ]; }
wait_until 20 gone || fail "still running after stop: $(pids_matching "$T/cluster" | tr '\n' ' ')"
grep -q "stopped 4 nodes" "$T/stop.out" || { cat "$T/stop.out" >&2; fail "stop did not stop 4 nodes"; }
note "4 daemons in one srun step, 200 tasks, stopped: $(head -1 "$T/stop.out")"
