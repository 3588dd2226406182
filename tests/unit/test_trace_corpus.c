/*
 * The trace corpus (tests/traces/, README.md there): small good and bad trace files, each
 * with the output `jackdaw trace verify` and `jackdaw trace stats` must give, as
 * babeltrace2 keeps its corpora, so that a change of behaviour shows as a diff against a
 * file and not as a surprise.
 *
 * This file is both the corpus's generator and its check, run from the repository root
 * (as `make unit` does):
 *   - every generated trace is made again here, in a private directory, and must equal
 *     the committed file byte for byte: the generator below is what made the files;
 *   - every expected-output file (the *.verify, *.stats and *.cat files of tests/traces) names
 *     its command on its first line; the command runs in this process and its standard output,
 *     standard error and exit code must give the file back exactly;
 *   - every trace of the corpus has both a .verify and a .stats.
 * With TRACE_CORPUS_UPDATE=1 in the environment it writes the traces and the expected
 * outputs into tests/traces/ instead of comparing (after an intended change; review the
 * diff before committing it).
 *
 * The traces are fixture runs (trace_fixture.h: fixed timestamps, no randomness) written
 * with a fixed sync marker; deflate is zlib's, so the byte comparison holds for the zlib
 * the files were made with (CORPUS_ZLIB) and is skipped with another.  The two real
 * traces (v0-no-checksums.avro, v1-checksums.avro) and the flipped copy of the second
 * are kept as they were recorded: the first cannot be written by this jackdaw at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <zlib.h>

#include "tools/cmd/cmd.h"
#include "trace_fixture.h"

#define CORPUS "tests/traces/"
/* The zlib whose deflate made the committed files (Debian 12). */
#define CORPUS_ZLIB "1.2.13"
#define CORPUS_NODES 3
#define CORPUS_TASKS 12
/* Events per block at most: the run's 85 events make 7 blocks, enough to damage one in
 * the middle and keep whole ones on both sides. */
#define CORPUS_CHUNK 16
/* The block the damaged files damage (0 is the first after the header). */
#define DAMAGED_BLOCK 2
/* A node that spools (merge inputs): its events from this time on reach the collector
 * only through its spool file, which starts a little earlier (a resend overlaps). */
#define SPOOL_NODE 1
#define SPOOL_FROM 10600
#define SPOOL_OVERLAP 150
#define SPOOL_HEADER "{\"run\":\"fixture\",\"spool\":{\"node\":1}}"

static const uint8_t corpus_sync[TRACE_SYNC_SIZE] = "jackdaw-corpus-1";

static bool updating;

static int setup(void **state)
{
    (void)state;
    const char *u = getenv("TRACE_CORPUS_UPDATE");
    updating = u && *u && strcmp(u, "0") != 0;
    return tmpdir_make("test_trace_corpus");
}

/* ---- files -------------------------------------------------------------------------- */

static uint8_t *read_file(const char *file, size_t *len)
{
    FILE *fp = fopen(file, "rb");
    if (!fp)
        fail_msg("cannot open '%s': %s", file, strerror(errno));
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long n = ftell(fp);
    assert_true(n >= 0);
    rewind(fp);
    uint8_t *data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    data[n] = '\0'; /* text files read as strings */
    *len = (size_t)n;
    return data;
}

static void write_file(const char *file, const void *data, size_t len)
{
    FILE *fp = fopen(file, "wb");
    if (!fp)
        fail_msg("cannot create '%s': %s", file, strerror(errno));
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* ---- the generator ------------------------------------------------------------------ */

/* The run every generated trace starts from; numbered unless the caller changes it
 * before numbering. */
static void corpus_run(struct fixture *f, bool number)
{
    fixture_run(f, CORPUS_NODES, CORPUS_TASKS);
    /* Every third task a command, whose end carries what it used (the usage field). */
    for (size_t i = 0; i < f->n; i++) {
        struct trace_event *ev = &f->e[i].ev;
        uint32_t index = (uint32_t)ev->task;
        if (ev->kind == TRACE_TASK_END && ev->task != TRACE_NO_TASK && index % 3 == 0)
            ev->usage = (struct task_usage){.user_ns = 1000000 * (int64_t)(index + 1),
                                            .sys_ns = 20000, .max_rss = 4096u << index,
                                            .read_bytes = 100 * index, .write_bytes = 7,
                                            .measured = true};
    }
    if (number)
        fixture_number(f);
}

static void write_run(const struct fixture *f, const char *path, fixture_filter keep)
{
    fixture_write_sync(f, path, FIXTURE_HEADER, corpus_sync, CORPUS_CHUNK, keep, NULL, 0);
}

/* The whole blocks of a trace image, [start, end) of each from its count to its sync
 * marker included, and where its payload starts. */
struct block_at {
    size_t start, payload, end;
};

static size_t blocks_of(const uint8_t *data, size_t len, struct block_at *out, size_t max)
{
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(data, len, &fi), 0);
    const uint8_t *b = data + fi.header_end;
    size_t pos = 0, n = 0;
    struct trace_block_view v;
    int rc;
    while ((rc = trace_block_next(b, len - fi.header_end, &pos, &v)) == 1) {
        assert_true(n < max);
        out[n].start = fi.header_end + v.offset;
        out[n].payload = (size_t)(v.payload - data);
        out[n].end = fi.header_end + pos;
        n++;
    }
    assert_int_equal(rc, 0);
    return n;
}

typedef void (*damage_fn)(uint8_t *data, size_t *len, const struct block_at *blocks,
                          size_t nblocks);

static void damage_cut(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)data;
    assert_true(n > DAMAGED_BLOCK + 1);
    /* Half way through the payload of a block: a crash between two writes. */
    *len = b[DAMAGED_BLOCK].payload + (b[DAMAGED_BLOCK].end - b[DAMAGED_BLOCK].payload) / 2;
}

static void damage_cut_in_header(uint8_t *data, size_t *len, const struct block_at *b,
                                 size_t n)
{
    (void)data;
    (void)n;
    /* Inside the schema: a file cut before its first block was flushed. */
    *len = b[0].start / 2;
}

static void damage_sync(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)len;
    assert_true(n > DAMAGED_BLOCK + 1);
    data[b[DAMAGED_BLOCK].end - TRACE_SYNC_SIZE / 2] ^= 0x20;
}

static void damage_count(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)len;
    assert_true(n > DAMAGED_BLOCK + 1);
    /* The count's zigzag varint, one byte for so few records, made to say -1. */
    assert_int_equal(data[b[DAMAGED_BLOCK].start] & 0x80, 0);
    data[b[DAMAGED_BLOCK].start] = 0x01;
}

static void damage_size(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)len;
    assert_true(n > DAMAGED_BLOCK + 1);
    /* The size's zigzag varint follows the one-byte count; 2 less in its low group is
     * one byte less, so the sync marker is looked for one byte early. */
    uint8_t *size = &data[b[DAMAGED_BLOCK].start + 1];
    assert_true((*size & 0x7f) >= 2);
    *size -= 2;
}

static void damage_payload(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)len;
    assert_true(n > DAMAGED_BLOCK + 1);
    size_t at = b[DAMAGED_BLOCK].payload +
                (b[DAMAGED_BLOCK].end - TRACE_SYNC_SIZE - b[DAMAGED_BLOCK].payload) / 3;
    data[at] ^= 0x04;
}

static void damage_header(uint8_t *data, size_t *len, const struct block_at *b, size_t n)
{
    (void)len;
    (void)n;
    /* One bit of the run header's JSON ("fixture" becomes "fixtude"): still JSON, but
     * the header no longer matches its jackdaw.check. */
    uint8_t *p = memmem(data, b[0].start, "\"fixture\"", 9);
    assert_non_null(p);
    p[6] ^= 0x10;
}

/* Writes the good run to path, damaged by fn. */
static void write_damaged(const char *path, damage_fn fn)
{
    struct fixture f;
    corpus_run(&f, true);
    write_run(&f, path, NULL);
    fixture_free(&f);
    size_t len;
    uint8_t *data = read_file(path, &len);
    static struct block_at blocks[256];
    size_t n = blocks_of(data, len, blocks, 256);
    fn(data, &len, blocks, n);
    write_file(path, data, len);
    free(data);
}

static void gen_good(const char *path)
{
    struct fixture f;
    corpus_run(&f, true);
    write_run(&f, path, NULL);
    fixture_free(&f);
}

static void gen_empty(const char *path)
{
    struct fixture_file w;
    fixture_file_init_sync(&w, FIXTURE_HEADER, corpus_sync);
    fixture_file_save(&w, path, 0);
}

static void gen_not_a_trace(const char *path)
{
    static const char text[] = "{\"id\":\"t0\"}\n{\"id\":\"t1\",\"parents\":[\"t0\"]}\n";
    write_file(path, text, sizeof text - 1);
}

static void gen_cut(const char *path) { write_damaged(path, damage_cut); }
static void gen_cut_in_header(const char *path) { write_damaged(path, damage_cut_in_header); }
static void gen_bad_sync(const char *path) { write_damaged(path, damage_sync); }
static void gen_bad_count(const char *path) { write_damaged(path, damage_count); }
static void gen_bad_size(const char *path) { write_damaged(path, damage_size); }
static void gen_bad_payload(const char *path) { write_damaged(path, damage_payload); }
static void gen_bad_header(const char *path) { write_damaged(path, damage_header); }

/* A block of node 1's events lost after they were numbered (a spool file deleted by
 * hand, say), and one event of node 2. */
static bool not_lost(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return !(ev->node == 1 && ev->seq >= 10 && ev->seq < 18) && !(ev->node == 2 && ev->seq == 5);
}

static void gen_gaps(const char *path)
{
    struct fixture f;
    corpus_run(&f, true);
    write_run(&f, path, not_lost);
    fixture_free(&f);
}

/*
 * Node 2's ring overflowed while task 2 was queued: its SUBMIT, READY, QUEUED_LOCAL and
 * START were never numbered, and the tracer numbered a DROPPED event saying so before
 * the next event it recorded (trace/tracer/tracer.c, flush_drops).  The sequence has no
 * gap.  The tracer stamps DROPPED with the next event's time; here it is 1 ns earlier, so
 * that numbering by time puts it first, as the tracer does.
 */
static void gen_dropped(const char *path)
{
    struct fixture f;
    corpus_run(&f, false);
    int64_t from = 10200, to = 10260; /* task 2 is submitted at 10200 and starts at 10250 */
    size_t lost = 0;
    int64_t next = INT64_MAX;
    for (size_t i = f.n; i-- > 0;) {
        const struct trace_event *ev = &f.e[i].ev;
        if (ev->node != 2)
            continue;
        if (ev->time_ns >= from && ev->time_ns < to) {
            fixture_remove(&f, i);
            lost++;
        } else if (ev->time_ns >= to && ev->time_ns < next) {
            next = ev->time_ns;
        }
    }
    assert_int_equal(lost, 4);
    assert_true(next < INT64_MAX);
    fixture_push(&f, TRACE_DROPPED, 2, next - 1, TRACE_NO_TASK)->count = (int64_t)lost;
    fixture_number(&f);
    write_run(&f, path, NULL);
    fixture_free(&f);
}

/* One block of node 0 reached the collector twice (a resend after a reconnect that the
 * collector did not cut back). */
static void gen_duplicates(const char *path)
{
    struct fixture f;
    corpus_run(&f, true);
    size_t first = 0;
    while (f.e[first].ev.node != 0 || f.e[first].ev.seq != 4)
        first++;
    for (size_t k = 0; k < 5; k++) {
        fixture_push(&f, TRACE_TASK_READY, 0, 0, 0); /* room for the copy */
        size_t at = first + 2 * k;
        memmove(&f.e[at + 1], &f.e[at], (f.n - 1 - at) * sizeof *f.e);
    }
    /* Each of seq 4..8 of node 0 is now followed by its copy. */
    write_run(&f, path, NULL);
    fixture_free(&f);
}

/* Merge inputs: the collector lost node 1 from SPOOL_FROM on; node 1 spooled. */
static bool at_collector(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return !(ev->node == SPOOL_NODE && ev->time_ns >= SPOOL_FROM);
}

static bool in_spool(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return ev->node == SPOOL_NODE && ev->time_ns >= SPOOL_FROM - SPOOL_OVERLAP;
}

static void gen_merge_collector(const char *path)
{
    struct fixture f;
    corpus_run(&f, true);
    write_run(&f, path, at_collector);
    fixture_free(&f);
}

static void gen_merge_spool(const char *path)
{
    struct fixture f;
    corpus_run(&f, true);
    fixture_write_sync(&f, path, SPOOL_HEADER, corpus_sync, CORPUS_CHUNK, in_spool, NULL, 0);
    fixture_free(&f);
}

/* The image of path with its sync marker replaced by corpus_sync everywhere (header and
 * after every block) and its header checksum made for it: merge draws a fresh marker
 * per output, and nothing else of its output changes from run to run. */
static void resync(const char *path)
{
    size_t len;
    uint8_t *data = read_file(path, &len);
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(data, len, &fi), 0);
    assert_non_null(fi.header_json);
    char *json = strndup((const char *)fi.header_json, fi.header_json_len);
    assert_non_null(json);
    uint8_t *h;
    size_t hlen;
    assert_int_equal(trace_file_header(json, corpus_sync, &h, &hlen), 0);
    free(json);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(h, 1, hlen, fp), hlen);
    free(h);
    static struct block_at blocks[256];
    size_t n = blocks_of(data, len, blocks, 256);
    assert_int_equal(blocks[n - 1].end, len);
    for (size_t i = 0; i < n; i++) {
        size_t body = blocks[i].end - TRACE_SYNC_SIZE - blocks[i].start;
        assert_int_equal(fwrite(data + blocks[i].start, 1, body, fp), body);
        assert_int_equal(fwrite(corpus_sync, 1, TRACE_SYNC_SIZE, fp), TRACE_SYNC_SIZE);
    }
    assert_int_equal(fclose(fp), 0);
    free(data);
}

/* `jackdaw trace merge -o path merge-collector.avro merge-spool.avro`, the inputs made
 * next to path. */
static void gen_merged(const char *path)
{
    char collector[160], spool[160];
    snprintf(collector, sizeof collector, "%s/merge-input-collector.avro", tmpdir);
    snprintf(spool, sizeof spool, "%s/merge-input-spool.avro", tmpdir);
    gen_merge_collector(collector);
    gen_merge_spool(spool);
    char *argv[] = { (char *)"trace", (char *)"merge", (char *)"-o", (char *)path, collector,
                     spool, NULL };
    assert_int_equal(fixture_trace_quiet(argv, 6), 0);
    resync(path);
}

/*
 * Node 2 killed at FAIL_AT: nothing of it after that.  Nodes 0 and 1 declare it dead
 * FAIL_DETECT later (NODE_DOWN, status 1, epoch 1); node 0, the records' primary here,
 * hands each task node 2 held on as attempt 1 (TASK_RESUBMIT), and the new holder runs
 * it: tasks 8 and 10 had started on node 2 (attempt 0), task 11 had only been submitted
 * there.  Variants: node 2 was only stopped and its attempt 0 of task 8 ends late
 * (FAIL_LATE); the resubmissions break their rule (FAIL_UNDECLARED); attempt 1 of task 8
 * never ends while its lost attempt 0 did (FAIL_LOST).
 */
#define FAIL_NODE 2
#define FAIL_AT 11100
#define FAIL_DETECT 200
enum fail_variant { FAIL_KILLED, FAIL_LATE, FAIL_UNDECLARED, FAIL_LOST };

static void gen_failure(const char *path, enum fail_variant variant)
{
    struct fixture f;
    corpus_run(&f, false);
    for (size_t i = f.n; i-- > 0;)
        if (f.e[i].ev.node == FAIL_NODE && f.e[i].ev.time_ns > FAIL_AT)
            fixture_remove(&f, i);
    int64_t down = FAIL_AT + FAIL_DETECT;
    for (int32_t n = 0; n < CORPUS_NODES; n++) {
        if (n == FAIL_NODE)
            continue;
        struct trace_event *ev = fixture_push(&f, TRACE_NODE_DOWN, n, down + n, TRACE_NO_TASK);
        ev->peer = FAIL_NODE;
        ev->status = TRACE_DOWN_DECLARED;
        ev->count = 1;
        if (variant == FAIL_UNDECLARED && n == 0)
            ev->time_ns = down + 1000; /* after its resubmissions */
    }
    static const struct { uint32_t task; int32_t to; } moved[] = {{8, 1}, {10, 0}, {11, 1}};
    for (size_t k = 0; k < sizeof moved / sizeof moved[0]; k++) {
        uint64_t key = fixture_key(moved[k].task);
        int64_t t = down + 10 + (int64_t)k * 5;
        struct trace_event *ev = fixture_push(&f, TRACE_TASK_RESUBMIT, 0, t, key);
        ev->peer = moved[k].to;
        ev->status = 1;
        ev->count = variant == FAIL_UNDECLARED && k == 2 ? 1 : FAIL_NODE; /* 1 is alive */
        int32_t to = moved[k].to;
        fixture_push(&f, TRACE_TASK_SUBMIT, to, t + 20, key)->duration_ns = 1;
        fixture_push(&f, TRACE_TASK_READY, to, t + 25, key);
        fixture_push(&f, TRACE_TASK_QUEUED_LOCAL, to, t + 30, key);
        fixture_push(&f, TRACE_TASK_START, to, t + 40, key)->duration_ns = 1;
        if (variant == FAIL_LOST && moved[k].task == 8)
            continue;
        ev = fixture_push(&f, TRACE_TASK_END, to, t + 400, key);
        ev->status = TASK_DONE;
        ev->duration_ns = 1;
    }
    if (variant == FAIL_LATE || variant == FAIL_LOST) {
        /* Stopped, not killed: its run of task 8 ends after the hand-on, and is refused. */
        struct trace_event *ev = fixture_push(&f, TRACE_TASK_END, FAIL_NODE, down + 300,
                                              fixture_key(8));
        ev->status = TASK_DONE;
    }
    fixture_number(&f);
    write_run(&f, path, NULL);
    fixture_free(&f);
}

static void gen_resubmit(const char *path) { gen_failure(path, FAIL_KILLED); }
static void gen_resubmit_late(const char *path) { gen_failure(path, FAIL_LATE); }
static void gen_resubmit_undeclared(const char *path) { gen_failure(path, FAIL_UNDECLARED); }
static void gen_resubmit_lost(const char *path) { gen_failure(path, FAIL_LOST); }

static const struct {
    const char *name;
    void (*make)(const char *path);
} generated[] = {
    {"good.avro", gen_good},
    {"empty.avro", gen_empty},
    {"not-a-trace.avro", gen_not_a_trace},
    {"cut.avro", gen_cut},
    {"cut-in-header.avro", gen_cut_in_header},
    {"bad-header.avro", gen_bad_header},
    {"bad-sync.avro", gen_bad_sync},
    {"bad-count.avro", gen_bad_count},
    {"bad-size.avro", gen_bad_size},
    {"bad-payload.avro", gen_bad_payload},
    {"gaps.avro", gen_gaps},
    {"dropped.avro", gen_dropped},
    {"duplicates.avro", gen_duplicates},
    {"merge-collector.avro", gen_merge_collector},
    {"merge-spool.avro", gen_merge_spool},
    {"merged.avro", gen_merged},
    {"resubmit.avro", gen_resubmit},
    {"resubmit-late.avro", gen_resubmit_late},
    {"resubmit-undeclared.avro", gen_resubmit_undeclared},
    {"resubmit-lost.avro", gen_resubmit_lost},
};
#define NGENERATED (sizeof generated / sizeof generated[0])

/* The generator makes the committed files (or, updating, the files committed next). */
static void test_generated_traces_match(void **state)
{
    (void)state;
    if (!updating && strcmp(zlibVersion(), CORPUS_ZLIB) != 0) {
        print_message("zlib %s, not %s: its deflate may differ; byte comparison skipped\n",
                      zlibVersion(), CORPUS_ZLIB);
        skip();
    }
    size_t differ = 0;
    for (size_t i = 0; i < NGENERATED; i++) {
        char made[160], committed[160];
        snprintf(committed, sizeof committed, CORPUS "%s", generated[i].name);
        if (updating)
            snprintf(made, sizeof made, "%s", committed);
        else
            snprintf(made, sizeof made, "%s/%s", tmpdir, generated[i].name);
        generated[i].make(made);
        if (updating)
            continue;
        size_t a, b;
        uint8_t *x = read_file(made, &a), *y = read_file(committed, &b);
        if (a != b || memcmp(x, y, a) != 0) {
            size_t at = 0;
            while (at < a && at < b && x[at] == y[at])
                at++;
            print_error("%s: the generator makes %zu bytes, the corpus holds %zu; first "
                        "difference at byte %zu\n", committed, a, b, at);
            differ++;
        }
        free(x);
        free(y);
    }
    if (differ)
        fail_msg("%zu generated traces differ from tests/traces/ (TRACE_CORPUS_UPDATE=1 "
                 "regenerates them; see tests/traces/README.md)", differ);
}

/* ---- expected outputs --------------------------------------------------------------- */

/* Runs `jackdaw ARGS` (argv[0] is "trace") in this process; *out gets what the corpus
 * files hold: the command line, its standard output, its standard error under "[stderr]"
 * when it wrote any, and "[exit N]". */
static void run_case(char **argv, int argc, char **out)
{
    char out_name[160], err_name[160];
    snprintf(out_name, sizeof out_name, "%s/stdout", tmpdir);
    snprintf(err_name, sizeof err_name, "%s/stderr", tmpdir);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fo = open(out_name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err_name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    int rc = cmd_trace.main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);

    size_t olen, elen;
    char *o = (char *)read_file(out_name, &olen), *e = (char *)read_file(err_name, &elen);
    size_t cap = olen + elen + 1024;
    *out = malloc(cap);
    assert_non_null(*out);
    size_t n = (size_t)snprintf(*out, cap, "$ jackdaw");
    for (int i = 0; i < argc; i++)
        n += (size_t)snprintf(*out + n, cap - n, " %s", argv[i]);
    n += (size_t)snprintf(*out + n, cap - n, "\n%s", o);
    if (elen)
        n += (size_t)snprintf(*out + n, cap - n, "[stderr]\n%s", e);
    snprintf(*out + n, cap - n, "[exit %d]\n", rc);
    free(o);
    free(e);
}

/* Splits the expected file's first line, "$ jackdaw trace …", into argv (pointing into
 * line, which it changes); returns argc. */
static int parse_command(const char *file, char *line, char **argv, int max)
{
    static const char prompt[] = "$ jackdaw ";
    if (strncmp(line, prompt, sizeof prompt - 1) != 0)
        fail_msg("%s:1: does not start with '%s'", file, prompt);
    char *p = line + sizeof prompt - 1;
    char *nl = strchr(p, '\n');
    if (nl)
        *nl = '\0';
    int argc = 0;
    for (char *tok = strtok(p, " "); tok; tok = strtok(NULL, " ")) {
        if (argc == max)
            fail_msg("%s:1: more than %d arguments", file, max);
        argv[argc++] = tok;
    }
    if (argc < 2 || strcmp(argv[0], "trace") != 0)
        fail_msg("%s:1: not a 'jackdaw trace' command", file);
    return argc;
}

static size_t expected_files(glob_t *g)
{
    memset(g, 0, sizeof *g);
    int rc = glob(CORPUS "*.verify", 0, NULL, g);
    assert_true(rc == 0 || rc == GLOB_NOMATCH);
    rc = glob(CORPUS "*.stats", GLOB_APPEND, NULL, g);
    assert_true(rc == 0 || rc == GLOB_NOMATCH);
    rc = glob(CORPUS "*.cat", GLOB_APPEND, NULL, g);
    assert_true(rc == 0 || rc == GLOB_NOMATCH);
    return g->gl_pathc;
}

static void test_expected_outputs(void **state)
{
    (void)state;
    glob_t g;
    size_t n = expected_files(&g);
    assert_true(n >= 2 * NGENERATED);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        const char *file = g.gl_pathv[i];
        size_t len;
        char *want = (char *)read_file(file, &len);
        char *line = strdup(want);
        assert_non_null(line);
        char *argv[16];
        int argc = parse_command(file, line, argv, 16);
        char *got = NULL;
        run_case(argv, argc, &got);
        if (updating) {
            if (strcmp(got, want) != 0) {
                write_file(file, got, strlen(got));
                print_message("updated %s\n", file);
            }
        } else if (strcmp(got, want) != 0) {
            char got_file[160], cmd[512];
            snprintf(got_file, sizeof got_file, "%s/got", tmpdir);
            write_file(got_file, got, strlen(got));
            print_error("%s: the output differs (- expected, + got):\n", file);
            fflush(stderr);
            snprintf(cmd, sizeof cmd, "diff -u '%s' '%s' >&2", file, got_file);
            if (system(cmd) == -1)
                print_error("(cannot run diff)\n--- got:\n%s", got);
            differ++;
        }
        free(got);
        free(line);
        free(want);
    }
    globfree(&g);
    if (differ)
        fail_msg("%zu of %zu expected outputs differ", differ, n);
}

/* Every trace of the corpus is checked by both commands, as the README promises;
 * updating, the missing expected files of a new trace are started with their command. */
static void test_every_trace_has_both_outputs(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    assert_int_equal(glob(CORPUS "*.avro", 0, NULL, &g), 0);
    size_t missing = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *trace = g.gl_pathv[i];
        size_t stem = strlen(trace) - strlen(".avro");
        static const char *const cmds[] = {"verify", "stats"};
        for (size_t c = 0; c < 2; c++) {
            char expected[256], first[256], line[256];
            snprintf(expected, sizeof expected, "%.*s.%s", (int)stem, trace, cmds[c]);
            snprintf(first, sizeof first, "$ jackdaw trace %s %s\n", cmds[c], trace);
            FILE *fp = fopen(expected, "r");
            if (!fp && updating) {
                /* A new trace: its outputs are filled in by test_expected_outputs. */
                write_file(expected, first, strlen(first));
                print_message("created %s\n", expected);
                continue;
            }
            if (!fp || !fgets(line, sizeof line, fp) || strcmp(line, first) != 0) {
                print_error("%s: missing, or its first line is not '%.*s'\n", expected,
                            (int)strlen(first) - 1, first);
                missing++;
            }
            if (fp)
                fclose(fp);
        }
    }
    assert_true(g.gl_pathc >= NGENERATED);
    globfree(&g);
    assert_int_equal(missing, 0);
}

int main(void)
{
    /* In this order: updating makes the traces, then their expected files, then fills
     * them in. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_traces_match),
        cmocka_unit_test(test_every_trace_has_both_outputs),
        cmocka_unit_test(test_expected_outputs),
    };
    return cmocka_run_group_tests(tests, setup, remove_dir);
}
