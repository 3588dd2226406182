#!/bin/bash
# t_56_private_files: what a run leaves on disk is its owner's only (issue 13 i).  Under
# umask 022, a `jackdaw run --keep DIR` of commands that read a data object and their
# parents' outputs (objects spilled to files with --store-mem 0) leaves:
#   - every directory under DIR (work directory, node directories, task directories,
#     staged inputs, the object store) mode 0700;
#   - every file under DIR (daemon logs, task outputs, staged inputs, job files) with no
#     permission for group or others;
#   - the trace file with no permission for group or others.
# A file the task's command makes itself (made-here) follows the command's own umask, as
# from a terminal; the 0700 task directory around it is what keeps it private.
. "$(dirname "$0")/lib.sh"

umask 022
wl="$T/private.jsonl"
cat >"$wl" <<'EOF_WL'
{"object":"in0","bytes":1000}
{"id":"a","kind":"command","cmd":"echo hi; wc -c inputs/0","inputs":["in0"],"stealable":false}
{"id":"b","kind":"sleep","duration_s":0.01,"output_bytes":5000,"parents":["a"]}
{"id":"c","kind":"command","cmd":"wc -c inputs/*","parents":["a","b"]}
{"id":"d","kind":"command","cmd":"echo x > made-here; echo y","output_bytes":100}
EOF_WL

jd_run private "$wl" --nodes 2 --slots 2 --store-mem 0 --trace "$T/private.avro" --records "$T/records"
expect_code 0 "$RUN_RC" "jackdaw run: $(cat "$T/private.out" "$T/private.err")"
check_records "$wl" "$T/records"
[ -f "$T/private.avro" ] || fail "no trace file at $T/private.avro"
ls "$T"/private/work/node-*/task-*/output >/dev/null 2>&1 || fail "the run left no task output under $T/private"

"$PY" - "$T/private" "$T/private.avro" <<'EOF_PY' || fail "files or directories readable by others"
import os, stat, sys
keep, trace = sys.argv[1], sys.argv[2]
bad, dirs, files = [], 0, 0
def check(path):
    global dirs, files
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        dirs += 1
        if mode != 0o700:
            bad.append("%04o %s/" % (mode, path))
    elif stat.S_ISREG(st.st_mode) and os.path.basename(path) != "made-here":
        files += 1
        if mode & 0o077:
            bad.append("%04o %s" % (mode, path))
check(keep)
for root, ds, fs in os.walk(keep):
    for name in ds + fs:
        check(os.path.join(root, name))
check(trace)
for b in bad:
    print("not private:", b)
print("%d directories and %d files checked, %d not private" % (dirs, files, len(bad)))
sys.exit(1 if bad else 0)
EOF_PY
no_daemons_left "after the run"
