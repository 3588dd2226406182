#!/bin/bash
# bed.sh — a private single-node Slurm (munged + slurmctld + slurmd) for integration tests.
#
#   bed.sh check      exit 0 if a bed can be made here, else say why and exit 77 (skip)
#   bed.sh up DIR     start the bed with ALL its state under DIR (absolute, new or empty);
#                     on success print the lines to source, e.g. eval "$(bed.sh up DIR)"
#   bed.sh down DIR   stop exactly the daemons `up` started (by recorded pid) and remove DIR;
#                     safe after a failed or half-finished `up`, and when DIR is gone
#
# Nothing shared is touched: own munge key and socket, own slurm.conf with ports picked
# at run time (never 6817/6818), and every daemon runs with DIR in its command line.
# Written against Slurm 22.05 (Debian 12).  Needs root: slurmd must run as root.
set -eu

MARK=.slurm-bed   # a file in DIR saying "made by bed.sh": down only removes such a DIR

die() { echo "bed.sh: $*" >&2; exit 1; }

# Show the end of each daemon's stderr (why it did not come up), to stderr.  In the
# foreground (-D) the slurm daemons copy their log file there, plus any early error.
logs() {
    local f
    for f in "$D"/log/*.out; do
        [ -s "$f" ] || continue
        echo "---- tail $f" >&2
        tail -n 15 "$f" >&2
    done
}
fail() { echo "bed.sh: up $D: $*" >&2; logs; echo "bed.sh: clean up with: $0 down $D" >&2; exit 1; }

# A pid is ours only while it is alive (zombies do not count: PID 1 here may not reap)
# and its command line still names DIR, so a recycled pid is never signalled.
ours() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $st in Z*) return 1 ;; esac
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$D/"
}

# A TCP port nobody uses in any state; below 32768 to stay out of the ephemeral range.
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((10000 + RANDOM % 22000))
        [ "$p" != "${1:-}" ] || continue
        [ -z "$(ss -Htan "( sport = :$p or dport = :$p )")" ] && { echo "$p"; return 0; }
    done
    return 1
}

# start NAME CMD...: run a daemon in the foreground of its own session, detached from
# our stdio (so $(bed.sh up) returns), and record its pid before anything else can fail.
start() {
    local name=$1; shift
    setsid "$@" </dev/null >>"$D/log/$name.out" 2>&1 &
    echo "$name $!" >>"$D/pids"
}

check() {
    local why="" b
    [ "$(id -u)" = 0 ] || why="not root (slurmd must run as root)"
    for b in munged slurmctld slurmd srun salloc sinfo scancel squeue ss setsid; do
        command -v "$b" >/dev/null 2>&1 || why="${why:+$why; }$b not found"
    done
    [ -z "$why" ] && return 0
    echo "bed.sh: no Slurm test bed here: $why" >&2
    exit 77
}

up() {
    local host cport dport end name pid state=""
    case $D in /?*) ;; *) die "up: DIR must be an absolute path (got '$D')" ;; esac
    [ -e "$D" ] && [ -n "$(ls -A "$D")" ] && die "up: $D exists and is not empty"
    # Unix socket paths (munge socket, slurmstepd sockets in the spool) must fit 108 bytes.
    [ ${#D} -le 60 ] || die "up: DIR path too long for unix sockets (${#D} > 60 chars): $D"
    mkdir -p "$D"
    # munged wants every directory above its socket searchable by all and writable by
    # no one else (its key file itself is 0600).
    chmod 755 "$D"
    : >"$D/$MARK"
    : >"$D/pids"
    mkdir "$D/munge" "$D/log" "$D/run" "$D/state" "$D/spool"

    # munge: own key, socket, pid and seed file.  In the foreground it logs to stderr
    # (log/munged.out) and ignores --log-file, which only keeps it off /var/log.  Slurm
    # finds the socket through AuthInfo=socket=... (auth/munge and cred/munge in 22.05).
    mungekey --create --keyfile="$D/munge/munge.key" 2>>"$D/log/mungekey.out" \
        || dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none \
        || fail "cannot create munge key"
    chmod 600 "$D/munge/munge.key"
    start munged munged --foreground --socket="$D/munge/munge.socket" \
        --key-file="$D/munge/munge.key" --pid-file="$D/run/munged.pid" \
        --log-file="$D/log/munged.log" --seed-file="$D/munge/munged.seed"
    for _ in $(seq 50); do   # up to ~5 s
        [ -S "$D/munge/munge.socket" ] && break
        ours "$(awk '$1 == "munged" {print $2}' "$D/pids")" || fail "munged exited"
        sleep 0.1
    done
    [ -S "$D/munge/munge.socket" ] || fail "munged made no socket in 5 s"

    host=$(hostname -s)
    cport=$(free_port) || fail "no free TCP port for slurmctld"
    dport=$(free_port "$cport") || fail "no free TCP port for slurmd"
    cat >"$D/slurm.conf" <<EOF
# Written by tests/slurm/bed.sh: a private one-node cluster; everything under $D.
ClusterName=bed
# The controller must recognise itself by hostname; talk over loopback only.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: plain /proc process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
# Short kill grace so cancelled jobs and 'down' do not linger.
KillWait=5
# CPUs=4 on a smaller machine: without config_overrides slurmd reports the real count
# and slurmctld drains the node as "Low CPUs".
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=bed Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$D/slurm.conf"

    start slurmctld slurmctld -D -f "$SLURM_CONF"
    start slurmd slurmd -D -f "$SLURM_CONF"

    end=$((SECONDS + 30))
    for _ in $(seq 60); do   # at most 60 polls and ~30 s (each sinfo bounded too)
        state=$(timeout 5 sinfo -h -N -n "$host" -o %t 2>/dev/null || true)
        [ "$state" = idle ] && break
        case $state in inval* | drain*)   # slurmctld rejected the node: no use waiting
            fail "node $host is '$state': $(timeout 5 sinfo -h -R -o %E 2>/dev/null || true)" ;;
        esac
        while read -r name pid; do
            ours "$pid" || fail "$name (pid $pid) exited"
        done <"$D/pids"
        [ "$SECONDS" -lt "$end" ] || break
        sleep 0.5
    done
    [ "$state" = idle ] || fail "node $host not idle after 30 s (sinfo says '${state:-nothing}')"
    echo "export SLURM_CONF=$SLURM_CONF"
}

# Print those of the given pids that are still ours.
alive() {
    local pid
    for pid in "$@"; do
        if ours "$pid"; then echo "$pid"; fi
    done
}

down() {
    local pids=() name pid ids left=""
    case $D in /?*) ;; *) die "down: DIR must be an absolute path (got '$D')" ;; esac
    [ -e "$D" ] || return 0
    [ -e "$D/$MARK" ] || die "down: $D was not made by bed.sh (no $MARK); not touching it"
    [ -f "$D/pids" ] || : >"$D/pids"
    # Cancel jobs first: a stopping slurmd leaves its slurmstepd processes (and so the
    # tasks) running.  Only possible while our slurmctld is still up.
    if [ -f "$D/slurm.conf" ] && ours "$(awk '$1 == "slurmctld" {print $2}' "$D/pids")"; then
        export SLURM_CONF="$D/slurm.conf"
        ids=$(timeout 5 squeue -h -o %i 2>/dev/null || true)
        # shellcheck disable=SC2086  # one argument per job id
        if [ -n "$ids" ] && timeout 5 scancel $ids; then
            for _ in $(seq 30); do   # up to ~15 s: KillWait=5, then the steps are gone
                ids=$(timeout 5 squeue -h -o %i 2>/dev/null || echo busy)
                [ -z "$ids" ] && break
                sleep 0.5
            done
            [ -z "$ids" ] || echo "bed.sh: down: jobs $ids still listed after 15 s" >&2
        fi
    fi
    # Stop in reverse start order (slurmd, slurmctld, munged) so none loses its peer early.
    while read -r name pid; do
        pids=("$pid" "${pids[@]}")
    done <"$D/pids"
    for pid in $(alive "${pids[@]}"); do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 100); do   # up to ~10 s, then KILL
        left=$(alive "${pids[@]}")
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        echo "bed.sh: down: pids ${left//$'\n'/ } ignored TERM for 10 s; sending KILL" >&2
        # shellcheck disable=SC2086  # one argument per pid
        kill -KILL $left 2>/dev/null || true
        for _ in $(seq 50); do   # up to ~5 s
            left=$(alive "${pids[@]}")
            [ -z "$left" ] && break
            sleep 0.1
        done
        [ -z "$left" ] || die "down: pids ${left//$'\n'/ } survive KILL; leaving $D in place"
    fi
    rm -rf "$D"
}

export PATH="$PATH:/usr/sbin:/sbin"   # the daemons live in sbin, not always on PATH
case ${1:-} in
check) check ;;
up | down)
    [ $# = 2 ] || die "usage: $0 $1 DIR"
    D=${2%/}
    "$1"
    ;;
*) die "usage: $0 check | up DIR | down DIR" ;;
esac
