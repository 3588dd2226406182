#!/bin/bash
# bed.sh — a many-host test bed on one machine: network namespaces joined by a bridge,
# one veth pair each, links shaped with tc tbf.  Real kernel network stacks between the
# daemons, not the daemons' in-process emulation (issue 16).
#
#   bed.sh check                    0 when a bed can be made here, else 77 and why
#   bed.sh up STATE N [RATE]        N namespaces; RATE (tc syntax: 1gbit, 100mbit) shapes
#                                   every link both ways (none: unshaped); writes
#                                   STATE/hostfile (one line per namespace, its address),
#                                   STATE/root-addr (the root namespace's address on the
#                                   bridge: client and collector reach the daemons from it)
#                                   and STATE/created (what down removes)
#   bed.sh down STATE               stops every process in the bed's namespaces (by PID,
#                                   from `ip netns pids`), removes the namespaces, links and
#                                   bridge it made; safe after a failed or partial up
#
# Names carry a random tag (jdTAG-I, bridge jdbTAG), and the subnet 10.250.K.0/24 is
# one no route uses yet, so beds of concurrent runs never meet.  The remote shell that
# reaches a namespace is tests/netns/rsh.
set -eu

die() {
    echo "bed.sh: $*" >&2
    exit 1
}

check() {
    [ "$(id -u)" -eq 0 ] || { echo "network namespaces need root"; return 77; }
    command -v ip >/dev/null || { echo "no 'ip' (iproute2)"; return 77; }
    command -v tc >/dev/null || { echo "no 'tc' (iproute2)"; return 77; }
    local probe="jdprobe$$"
    if ! ip netns add "$probe" 2>/dev/null; then
        echo "cannot create a network namespace here (a container without CAP_SYS_ADMIN?)"
        return 77
    fi
    ip netns del "$probe"
    if ! ip link add "jdpb$$" type bridge 2>/dev/null; then
        echo "cannot create a bridge here"
        return 77
    fi
    ip link del "jdpb$$"
    return 0
}

# A /24 under 10.250 that no route of this machine covers.
free_subnet() {
    local k tries
    for ((tries = 0; tries < 64; tries++)); do
        k=$((RANDOM % 254 + 1))
        if [ -z "$(ip -4 route show to match "10.250.$k.1" | grep -v '^default')" ]; then
            echo "$k"
            return 0
        fi
    done
    return 1
}

shape() { # shape DEV RATE [NETNS]
    local ns=()
    [ $# -ge 3 ] && ns=(-n "$3")
    # burst must hold a timer tick's worth of bytes at the rate, or tbf cannot reach it.
    tc "${ns[@]}" qdisc add dev "$1" root tbf rate "$2" burst 1mb latency 20ms
}

up() {
    local state=$1 n=$2 rate=${3:-none} tag k i ns veth
    [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "N must be 1..64"
    mkdir -p "$state"
    : >"$state/created"
    tag=$(printf '%04x' $((RANDOM % 65536)))
    k=$(free_subnet) || die "no free 10.250.K.0/24 subnet"
    local br="jdb$tag"
    ip link add "$br" type bridge
    echo "link $br" >>"$state/created"
    ip addr add "10.250.$k.1/24" dev "$br"
    ip link set "$br" up
    : >"$state/hostfile"
    for ((i = 0; i < n; i++)); do
        ns="jd$tag-$i"
        veth="jdv$tag$i"
        ip netns add "$ns"
        echo "netns $ns" >>"$state/created"
        ip link add "$veth" type veth peer name eth0 netns "$ns"
        echo "link $veth" >>"$state/created"
        ip link set "$veth" master "$br"
        ip link set "$veth" up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "10.250.$k.$((i + 2))/24" dev eth0
        ip -n "$ns" link set eth0 up
        if [ "$rate" != none ]; then
            shape "$veth" "$rate"
            shape eth0 "$rate" "$ns"
        fi
        echo "$ns addr=10.250.$k.$((i + 2))" >>"$state/hostfile"
    done
    echo "10.250.$k.1" >"$state/root-addr"
    # A link that came up is not yet a link that forwards: wait (bounded) until the
    # first namespace answers on the bridge.
    local tries
    for ((tries = 0; tries < 50; tries++)); do
        if ip netns exec "jd$tag-0" bash -c "exec 3<>/dev/tcp/10.250.$k.1/9" 2>&1 | grep -q refused; then
            return 0
        fi
        sleep 0.1
    done
    die "the bridge did not forward within 5 s"
}

down() {
    local state=$1 kind name pid rc=0
    [ -f "$state/created" ] || return 0
    # Processes first (a namespace with processes in it outlives `ip netns del`).
    while read -r kind name; do
        [ "$kind" = netns ] || continue
        for pid in $(ip netns pids "$name" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
    done <"$state/created"
    local tries left
    for ((tries = 0; tries < 50; tries++)); do
        left=0
        while read -r kind name; do
            [ "$kind" = netns ] || continue
            [ -n "$(ip netns pids "$name" 2>/dev/null)" ] && left=1
        done <"$state/created"
        [ $left -eq 0 ] && break
        sleep 0.1
    done
    while read -r kind name; do
        [ "$kind" = netns ] || continue
        for pid in $(ip netns pids "$name" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    done <"$state/created"
    while read -r kind name; do
        case "$kind" in
        netns) ip netns del "$name" 2>/dev/null || rc=1 ;;
        link) ip link del "$name" 2>/dev/null || true ;; # veths go with their namespace
        esac
    done <"$state/created"
    rm -f "$state/created"
    return $rc
}

case "${1:-}" in
check) check ;;
up) [ $# -ge 3 ] || die "usage: bed.sh up STATE N [RATE]"; up "$2" "$3" "${4:-none}" ;;
down) [ $# -ge 2 ] || die "usage: bed.sh down STATE"; down "$2" ;;
*) die "usage: bed.sh check | up STATE N [RATE] | down STATE" ;;
esac
