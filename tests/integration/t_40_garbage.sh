#!/bin/bash
# t_40_garbage: a daemon survives hostile bytes on its port.  Against one node of a
# running 4-node cluster: random bytes (several connections), a well-formed frame
# header announcing a 100 MB body before the handshake, the same after a real
# handshake (the test holds the key), an unknown message type and a truncated SUBMIT
# after a handshake, and a connection that sends nothing (left open while the rest
# runs; the handshake timeout must drop it).  Then a job still completes, the node is
# alive, and its log names each dropped peer (127.0.0.1:PORT) with the reason.
. "$(dirname "$0")/lib.sh"

start_cluster 4 2
target=1
port=$(cluster_field "$CLUSTER_FILE" "c['nodes'][$target]['port']")
pid=$(cluster_field "$CLUSTER_FILE" "c['nodes'][$target]['pid']")
key=$(cluster_field "$CLUSTER_FILE" 'c["key"]')
log="$CLUSTER_WORKDIR/node-$target.log"
note "target node $target: pid $pid port $port"
# The wire version the daemons speak, read from the source so that a bump never
# leaves this test talking an old dialect.
JACKDAW_FRAME_VERSION=$(sed -n 's/^#define FRAME_VERSION \([0-9]*\)u.*/\1/p' "$HERE/../../core/net/frame.h")
[ -n "$JACKDAW_FRAME_VERSION" ] || fail "cannot read FRAME_VERSION from core/net/frame.h"
export JACKDAW_FRAME_VERSION

cat >"$T/wire.py" <<'EOF_PY'
"""Hostile clients for t_40.  Loopback only.  Prints 'CASE PORT' lines (PORT is our
local port, which the daemon's log names) and, for `idle`, the outcome."""
import hashlib, hmac, os, socket, struct, sys, time

HOST = "127.0.0.1"
MAGIC, VERSION = 0x4A44, int(os.environ["JACKDAW_FRAME_VERSION"])  # core/net/frame.h
CHALLENGE, RESPONSE, ACCEPT = 1, 2, 3
ROLE_CLIENT = 2


def header(body_len, count):
    return struct.pack("<IHBBI", body_len, MAGIC, VERSION, 0, count)


def frame(msgs):
    body = b"".join(struct.pack("<HI", t, len(p)) + p for t, p in msgs)
    return header(len(body), len(msgs)) + body


def connect(port):
    s = socket.create_connection((HOST, port), timeout=10)
    return s, s.getsockname()[1]


def read_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def read_frame(s):
    body_len, magic, version, flags, count = struct.unpack("<IHBBI", read_exact(s, 12))
    assert magic == MAGIC and version == VERSION, "bad frame from the daemon"
    body = read_exact(s, body_len)
    msgs, off = [], 0
    for _ in range(count):
        t, n = struct.unpack_from("<HI", body, off)
        msgs.append((t, body[off + 6:off + 6 + n]))
        off += 6 + n
    return msgs


def handshake(port, key):
    s, local = connect(port)
    (t, server_nonce), = read_frame(s)
    assert t == CHALLENGE and len(server_nonce) == 32, "no CHALLENGE"
    client_nonce = os.urandom(32)
    ident = 4242
    mac = hmac.new(key, b"jackdaw-c" + server_nonce + client_nonce + bytes([ROLE_CLIENT])
                   + struct.pack("<I", ident), hashlib.sha256).digest()
    s.sendall(frame([(RESPONSE, client_nonce + bytes([ROLE_CLIENT]) + struct.pack("<I", ident) + mac)]))
    (t, their), = read_frame(s)
    want = hmac.new(key, b"jackdaw-s" + client_nonce + server_nonce, hashlib.sha256).digest()
    assert t == ACCEPT and hmac.compare_digest(their, want), "bad ACCEPT"
    return s, local


def send_and_wait_close(s, data, limit=10.0):
    """Sends data (the peer may cut us off half-way) and waits for the daemon to close."""
    try:
        s.sendall(data)
    except OSError:
        pass
    s.settimeout(limit)
    end = time.time() + limit
    try:
        while time.time() < end:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    finally:
        s.close()
    return False


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "idle":
        # Send nothing; expect the CHALLENGE, then the daemon's close.
        out = sys.argv[3]
        s, local = connect(port)
        with open(out + ".port", "w") as f:
            f.write("%d\n" % local)
        start = time.time()
        s.settimeout(20)
        got, result = 0, "not dropped within 20 s"
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    result = "dropped after %.1f s" % (time.time() - start)
                    break
                got += len(chunk)
        except ConnectionResetError:
            result = "reset after %.1f s" % (time.time() - start)
        except socket.timeout:
            pass
        with open(out + ".tmp", "w") as f:
            f.write("%s (received %d bytes first)\n" % (result, got))
        os.rename(out + ".tmp", out)
        return 0
    key = bytes.fromhex(open(sys.argv[3]).read().strip())
    failures = 0
    cases = []
    for i in range(4):
        s, local = connect(port)
        cases.append(("random%d" % i, local, send_and_wait_close(s, os.urandom(65536))))
    s, local = connect(port)
    cases.append(("preauth-100MB", local, send_and_wait_close(s, header(100 << 20, 1) + os.urandom(4096))))
    s, local = handshake(port, key)
    cases.append(("auth-100MB", local, send_and_wait_close(s, header(100 << 20, 1) + os.urandom(4096))))
    s, local = handshake(port, key)
    cases.append(("auth-unknown-type", local, send_and_wait_close(s, frame([(0x7F7F, b"\x01\x02")]))))
    s, local = handshake(port, key)
    cases.append(("auth-truncated-submit", local,
                  send_and_wait_close(s, frame([(0x0302, struct.pack("<I", 1000))]))))
    s, local = handshake(port, key)
    cases.append(("auth-count-mismatch", local,
                  send_and_wait_close(s, header(6, 3) + struct.pack("<HI", 0x0306, 0))))
    for name, local, closed in cases:
        print("%s %d %s" % (name, local, "closed" if closed else "OPEN"))
        if not closed:
            failures += 1
    return 1 if failures else 0


sys.exit(main())
EOF_PY

# The silent connection first, so its 5 s handshake timeout runs during the rest.
bg timeout -k 2 30 "$PY" "$T/wire.py" idle "$port" "$T/idle.result"
wait_until 5 test -s "$T/idle.result.port" || fail "the idle connection did not connect"

rc=0
timeout -k 5 60 "$PY" "$T/wire.py" hostile "$port" "$key" >"$T/hostile.out" 2>&1 || rc=$?
cat "$T/hostile.out"
[ $rc -eq 0 ] || fail "hostile clients: exit $rc (a connection the daemon should have closed stayed open?)"

pid_alive "$pid" || fail "node $target (pid $pid) died from the garbage; log tail: $(tail -5 "$log")"

# The cluster still works, including the node that took the garbage.
wl="$T/pipeline.jsonl"
"$JACKDAW" gen pipeline --tasks 80 --pipe-size 4 --duration 0.001-0.003 --seed 9 -o "$wl" || fail "gen failed"
rc=0
timeout -k 5 90 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 60 \
    --records "$T/records" >"$T/submit.out" 2>"$T/submit.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/submit.out" "$T/submit.err"; fail "submit after the garbage exited $rc"; }
check_records "$wl" "$T/records"
if ! kill -0 "$pid" 2>/dev/null || ! pid_alive "$pid"; then
    fail "node $target (pid $pid) is gone after the job"
fi
for p in "${CLUSTER_PIDS[@]}"; do pid_alive "$p" || fail "daemon $p died"; done

# Every dropped peer is named in the log, with a reason that fits what it sent.
log_names() { # CASE PORT REGEX
    grep -F "127.0.0.1:$2:" "$log" | grep -E "$3" >/dev/null ||
        fail "$log does not report dropping the $1 peer 127.0.0.1:$2 (want /$3/); log: $(grep -F "127.0.0.1:$2" "$log")"
}
while read -r name local state; do
    case $name in
    random*) log_names "$name" "$local" 'dropping' ;;
    preauth-100MB) log_names "$name" "$local" 'dropping.*104857600.*before the handshake' ;;
    auth-100MB) log_names "$name" "$local" 'dropping.*104857600.*over limit' ;;
    auth-unknown-type) log_names "$name" "$local" 'dropping.*7f7f' ;;
    auth-truncated-submit) log_names "$name" "$local" 'dropping.*0x0302' ;;
    auth-count-mismatch) log_names "$name" "$local" 'dropping.*announces 3 messages' ;;
    *) fail "unexpected line from wire.py: $name $local $state" ;;
    esac
done <"$T/hostile.out"

# Only the target node may warn, and only about our hostile peers.
ports=$(awk '{print $2}' "$T/hostile.out" | tr '\n' '|')$(cat "$T/idle.result.port")
LOG_ALLOW="node$target [^ ]+ dropping 127\.0\.0\.1:($ports): "

# The silent peer: dropped by the handshake timeout (about 5 s after it connected).
wait_until 15 test -s "$T/idle.result" || fail "the silent connection was not dropped about 5 s after it connected"
idle_port=$(cat "$T/idle.result.port")
note "silent peer 127.0.0.1:$idle_port: $(cat "$T/idle.result")"
grep -qE '^(dropped|reset) after' "$T/idle.result" || fail "silent peer: $(cat "$T/idle.result")"
log_names silent "$idle_port" 'handshake timeout'
note "log lines for dropped peers: $(grep -c dropping "$log")"
stop_cluster
