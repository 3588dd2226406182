/*
 * jackdaw trace — look into, check, join and convert trace files without an Avro tool.
 *
 *   jackdaw trace cat FILE [--json] [--sorted]  one event per line, in file order (or by time)
 *   jackdaw trace stats FILE [--json]    counts by kind and node, time span, size, end
 *   jackdaw trace verify FILE [--workload W] [--json] [--limit N]
 *                                        is the story complete?
 *                                        (trace/offline/verify); are the blocks intact
 *                                        (their checksums); with W, did every task
 *                                        start after its parents ended?
 *   jackdaw trace merge -o OUT FILE...   the collector's file and spool files as one
 *                                        trace, each event once, in time order
 *   jackdaw trace export --chrome FILE [-o OUT]
 *                                        Chrome trace-event JSON for Perfetto
 *
 * cat prints, per event: the time in seconds since the run start, the node, the per-node
 * sequence number, the kind, the task as job:index ("-" for none), then the fields that
 * kind uses (share/doc/trace-schema.md) as name=value; the names of JOB_SUBMIT and
 * TASK_NAMES are abbreviated to the first few.  With --json each line is an object whose
 * keys are the schema's field names, names in full; "seq" and "time" hold the decoded
 * absolute values (time in ns since the run start), not the deltas stored on disk.
 * Kinds from a newer writer are skipped by cat and counted by stats.
 *
 * verify lists the first --limit problems of each kind (default 10) with the totals;
 * a cut or corrupt file is a problem too (what it lost cannot be checked).  export
 * writes FILE.json unless -o names another file or "-" (standard output).  merge writes
 * OUT whole or not at all (a temporary file renamed at the end), so OUT may be one of
 * the inputs; cut inputs give their whole blocks, with a warning.
 *
 * Reading goes through trace/format/reader (scanner first, libavro only on the whole
 * blocks).  Exit codes: 0 when the whole file, or every whole block of a crash-cut file,
 * was read (a cut is reported on stderr: a node or collector that dies leaves exactly
 * that) and, for verify, no problem was found; EXIT_BAD_INPUT when verify found a problem
 * (the report says which), when a file is not a jackdaw trace, is cut inside its header,
 * has corrupt framing (after printing what the whole blocks before it hold) or a record
 * that does not decode; EXIT_INTERNAL when an output cannot be written; EXIT_USAGE for a
 * bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/model/workload.h"
#include "tools/cmd/cmd.h"
#include "trace/offline/chrome.h"
#include "trace/offline/merge.h"
#include "trace/format/reader.h"
#include "trace/offline/verify.h"

/* The optional fields each kind uses, in print order. */
enum {
    F_PEER = 1 << 0,
    F_STATUS = 1 << 1,
    F_COUNT = 1 << 2,
    F_BYTES = 1 << 3,
    F_DURATION = 1 << 4,
    F_TEXT = 1 << 5,
    F_SAMPLE = 1 << 6,
    F_NAMES = 1 << 7,
    F_ATTEMPT = 1 << 8, /* the attempt, held in duration (trace_kind.h); shown when > 0 */
};

/* Names cat prints of a JOB_SUBMIT or TASK_NAMES before "…(+N)", and bytes of each. */
#define CAT_NAMES 3
#define CAT_NAME_BYTES 40

static const unsigned kind_fields[TRACE_KIND_COUNT] = {
    [TRACE_TASK_PUSHED] = F_PEER,
    [TRACE_TASK_STOLEN_IN] = F_PEER,
    [TRACE_TASK_STOLEN_OUT] = F_PEER,
    [TRACE_TASK_SUBMIT] = F_ATTEMPT,
    [TRACE_TASK_START] = F_ATTEMPT,
    [TRACE_TASK_END] = F_STATUS | F_COUNT | F_ATTEMPT, /* count: the exit code */
    [TRACE_STEAL_REQUEST] = F_PEER | F_COUNT, /* count: tasks asked for, 0: the victim decides */
    [TRACE_STEAL_GRANT] = F_PEER | F_COUNT,
    [TRACE_STEAL_FAIL] = F_PEER | F_STATUS,
    [TRACE_DATA_FETCH] = F_PEER | F_BYTES | F_DURATION,
    [TRACE_CACHE_HIT] = F_BYTES,
    [TRACE_NODE_SAMPLE] = F_SAMPLE,
    [TRACE_NODE_UP] = F_PEER | F_COUNT,
    [TRACE_NODE_DOWN] = F_PEER | F_STATUS,
    [TRACE_POLICY_CHANGE] = F_TEXT,
    [TRACE_DROPPED] = F_COUNT,
    [TRACE_JOB_SUBMIT] = F_COUNT | F_TEXT | F_NAMES, /* tasks, digest, [workload] */
    [TRACE_TASK_NAMES] = F_COUNT | F_NAMES,          /* n, ids of task .. task+n-1 */
    /* status: the new attempt; count: the dead node it was taken from */
    [TRACE_TASK_RESUBMIT] = F_PEER | F_STATUS | F_COUNT,
    [TRACE_OBJECT_RECOMPUTE] = F_PEER | F_STATUS, /* peer: the dead node, status: attempt */
    /* count: the run's exit code; bytes: failed runs so far */
    [TRACE_TASK_RETRY] = F_STATUS | F_COUNT | F_BYTES | F_ATTEMPT,
};

/* Writes s as a JSON string (quotes included); also used for `text` in the columns so
 * that a policy name cannot break a line.  At most `max` bytes of s (cut back to a
 * character boundary, then "…"); SIZE_MAX for all of it. */
static void put_json_string_max(FILE *out, const char *s, size_t max)
{
    size_t len = strlen(s);
    bool cut = len > max;
    if (cut) {
        len = max;
        while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
            len--; /* never split a UTF-8 sequence */
    }
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + len;
         p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            putc(*p, out);
    }
    if (cut)
        fputs("\u2026", out);
    putc('"', out);
}

static void put_json_string(FILE *out, const char *s)
{
    put_json_string_max(out, s, SIZE_MAX);
}

/* names=["a","b","c",…(+97)] in the columns; "names":[…every one…] in JSON. */
static void print_names(FILE *out, const char *const *names, size_t n, bool json)
{
    fputs(json ? ",\"names\":[" : " names=[", out);
    size_t shown = json || n <= CAT_NAMES + 1 ? n : CAT_NAMES;
    for (size_t i = 0; i < shown; i++) {
        if (i)
            putc(',', out);
        put_json_string_max(out, names[i] ? names[i] : "", json ? SIZE_MAX : CAT_NAME_BYTES);
    }
    if (shown < n)
        fprintf(out, ",\u2026(+%zu)", n - shown);
    putc(']', out);
}

static void print_sample(FILE *out, const struct trace_sample *s, bool json)
{
    /* Same names as the schema's Sample record. */
    const struct {
        const char *name;
        int64_t value;
    } f[] = {
        {"busy", s->busy},       {"slots", s->slots},
        {"waitq", s->waitq},     {"lreadyq", s->lreadyq},
        {"sreadyq", s->sreadyq}, {"completeq", s->completeq},
        {"started", s->started}, {"ended", s->ended},
        {"failed", s->failed},   {"stolen_in", s->stolen_in},
        {"stolen_out", s->stolen_out}, {"pushed", s->pushed},
        {"steal_requests", s->steal_requests}, {"steal_fails", s->steal_fails},
        {"fetches", s->fetches}, {"fetch_bytes", s->fetch_bytes},
        {"cache_hits", s->cache_hits}, {"busy_ns", s->busy_ns},
        {"dropped", s->dropped},
        {"bytes_out", s->bytes_out}, {"cancelled", s->cancelled},
        {"info_sent", s->info_sent}, {"info_received", s->info_received},
        {"token_passes", s->token_passes},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (json)
            fprintf(out, "%s\"%s\":%" PRId64, i ? "," : "", f[i].name, f[i].value);
        else
            fprintf(out, " %s=%" PRId64, f[i].name, f[i].value);
    }
}

static void print_text(FILE *out, const struct trace_event *ev)
{
    fprintf(out, "%14.9f %4" PRId32 " %8" PRId64 " %-18s", (double)ev->time_ns / 1e9, ev->node,
            ev->seq, trace_kind_name((int)ev->kind));
    char task[24] = "-";
    if (ev->kind == TRACE_JOB_SUBMIT && ev->task != TRACE_NO_TASK)
        snprintf(task, sizeof task, "%" PRIu32 ":-", (uint32_t)(ev->task >> 32)); /* a job */
    else if (ev->task != TRACE_NO_TASK)
        snprintf(task, sizeof task, "%" PRIu32 ":%" PRIu32, (uint32_t)(ev->task >> 32),
                 (uint32_t)ev->task);
    unsigned f = kind_fields[ev->kind];
    if ((f & F_ATTEMPT) && ev->duration_ns <= 0)
        f &= ~(unsigned)F_ATTEMPT; /* a first run, as every run before attempts existed */
    fprintf(out, f ? " %-12s" : " %s", task); /* no trailing blanks when nothing follows */
    if (f & F_PEER)
        fprintf(out, " peer=%" PRId32, ev->peer);
    if (f & F_STATUS)
        fprintf(out, " status=%" PRId32, ev->status);
    if (f & F_COUNT)
        fprintf(out, " count=%" PRId64, ev->count);
    if (f & F_BYTES)
        fprintf(out, " bytes=%" PRId64, ev->bytes);
    if (f & F_DURATION)
        fprintf(out, " duration=%.6fs", (double)ev->duration_ns / 1e9);
    if (f & F_ATTEMPT)
        fprintf(out, " attempt=%" PRId64, ev->duration_ns);
    if (f & F_TEXT) {
        fputs(" text=", out);
        put_json_string(out, ev->text);
    }
    if (f & F_SAMPLE)
        print_sample(out, &ev->sample, false);
    if (f & F_NAMES)
        print_names(out, ev->names, ev->nnames, false);
    if (ev->usage.measured)
        fprintf(out, " cpu=%.6fs+%.6fs rss=%" PRIu64 " read=%" PRIu64 " written=%" PRIu64,
                (double)ev->usage.user_ns / 1e9, (double)ev->usage.sys_ns / 1e9,
                ev->usage.max_rss, ev->usage.read_bytes, ev->usage.write_bytes);
    putc('\n', out);
}

static void print_json(FILE *out, const struct trace_event *ev)
{
    fprintf(out, "{\"kind\":\"%s\",\"node\":%" PRId32 ",\"seq\":%" PRId64 ",\"time\":%" PRId64,
            trace_kind_name((int)ev->kind), ev->node, ev->seq, ev->time_ns);
    if (ev->task != TRACE_NO_TASK)
        fprintf(out, ",\"job\":%" PRIu32 ",\"task\":%" PRIu32, (uint32_t)(ev->task >> 32),
                (uint32_t)ev->task);
    unsigned f = kind_fields[ev->kind];
    if (f & F_PEER)
        fprintf(out, ",\"peer\":%" PRId32, ev->peer);
    if (f & F_STATUS)
        fprintf(out, ",\"status\":%" PRId32, ev->status);
    if (f & F_COUNT)
        fprintf(out, ",\"count\":%" PRId64, ev->count);
    if (f & F_BYTES)
        fprintf(out, ",\"bytes\":%" PRId64, ev->bytes);
    if (f & F_DURATION)
        fprintf(out, ",\"duration\":%" PRId64, ev->duration_ns);
    if ((f & F_ATTEMPT) && ev->duration_ns > 0)
        fprintf(out, ",\"attempt\":%" PRId64, ev->duration_ns);
    if (f & F_TEXT) {
        fputs(",\"text\":", out);
        put_json_string(out, ev->text);
    }
    if (f & F_SAMPLE) {
        fputs(",\"sample\":{", out);
        print_sample(out, &ev->sample, true);
        putc('}', out);
    }
    if (f & F_NAMES)
        print_names(out, ev->names, ev->nnames, true);
    if (ev->usage.measured)
        fprintf(out, ",\"usage\":{\"user_ns\":%" PRId64 ",\"sys_ns\":%" PRId64
                ",\"max_rss\":%" PRIu64 ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64 "}",
                ev->usage.user_ns, ev->usage.sys_ns, ev->usage.max_rss, ev->usage.read_bytes,
                ev->usage.write_bytes);
    fputs("}\n", out);
}

static void print_stats(FILE *out, const char *path, const struct trace_reader_info *in,
                        const struct trace_tally *t, bool json)
{
    const char *end = in->tail == TRACE_TAIL_CLEAN ? "clean"
                      : in->tail == TRACE_TAIL_CUT ? "cut" : "corrupt";
    double first = (double)t->first_ns / 1e9, last = (double)t->last_ns / 1e9;
    double per = t->events ? (double)in->file_size / (double)t->events : 0.0;
    if (json) {
        fputs("{\"file\":", out);
        put_json_string(out, path);
        fprintf(out, ",\"records\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"end\":\"%s\""
                ",\"file_bytes\":%" PRIu64 ",\"valid_bytes\":%" PRIu64,
                t->events, in->blocks, end, in->file_size, in->valid_end);
        if (t->events)
            fprintf(out, ",\"bytes_per_event\":%.3f,\"first_s\":%.9f,\"last_s\":%.9f"
                    ",\"span_s\":%.9f", per, first, last, last - first);
        else
            fputs(",\"bytes_per_event\":null,\"first_s\":null,\"last_s\":null,\"span_s\":null",
                  out);
        fputs(",\"by_kind\":{", out);
        int n = 0;
        for (int k = 0; k < TRACE_KIND_COUNT; k++)
            if (t->by_kind[k])
                fprintf(out, "%s\"%s\":%" PRIu64, n++ ? "," : "", trace_kind_name(k),
                        t->by_kind[k]);
        fprintf(out, "},\"unknown_kinds\":%" PRIu64 ",\"by_node\":{", t->unknown_kind);
        for (size_t i = 0; i < t->n_nodes; i++)
            fprintf(out, "%s\"%" PRId32 "\":%" PRIu64, i ? "," : "", t->by_node[i].node,
                    t->by_node[i].events);
        fputs("}}\n", out);
        return;
    }
    fprintf(out, "file        %s\n", path);
    fprintf(out, "end         %s (%" PRIu64 " whole blocks, %" PRIu64 " of %" PRIu64 " bytes)\n",
            end, in->blocks, in->valid_end, in->file_size);
    fprintf(out, "records     %" PRIu64 "\n", t->events);
    if (t->events) {
        fprintf(out, "time        %.6f s .. %.6f s (span %.6f s)\n", first, last, last - first);
        fprintf(out, "bytes/event %.2f\n", per);
    }
    fprintf(out, "by kind\n");
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (t->by_kind[k])
            fprintf(out, "  %-18s %10" PRIu64 "\n", trace_kind_name(k), t->by_kind[k]);
    if (t->unknown_kind)
        fprintf(out, "  %-18s %10" PRIu64 "\n", "(newer kinds)", t->unknown_kind);
    fprintf(out, "by node\n");
    for (size_t i = 0; i < t->n_nodes; i++)
        fprintf(out, "  %-18" PRId32 " %10" PRIu64 "\n", t->by_node[i].node, t->by_node[i].events);
}

/* Opens path for reading, printing the error once; 0 or the exit code. */
static int open_trace(const char *path, bool verified, struct trace_reader **r)
{
    char *cause = NULL;
    int rc = verified ? trace_reader_open_verified(r, path, &cause)
                      : trace_reader_open(r, path, &cause);
    if (rc == 0)
        return 0;
    if (cause)
        fprintf(stderr, "jackdaw trace: %s\n", cause);
    else
        fprintf(stderr, "jackdaw trace: cannot read trace '%s': %s\n", path, strerror(-rc));
    free(cause);
    return rc == -ENOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

/* The names of the event just read, into ev (NULL/0 for kinds without names). */
static int read_names(struct trace_reader *r, struct trace_event *ev)
{
    ev->names = NULL;
    ev->nnames = 0;
    if (ev->kind != TRACE_JOB_SUBMIT && ev->kind != TRACE_TASK_NAMES)
        return 0;
    const char *const *names;
    size_t n;
    int rc = trace_reader_names(r, &names, &n);
    if (rc < 0)
        return rc;
    ev->names = names;
    ev->nnames = (uint32_t)n;
    return 0;
}

/* Stdout must have taken everything: 0, or EXIT_INTERNAL after saying why.  A closed
 * pipe (| head) is not an error. */
static int check_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (errno == EPIPE)
        return 0;
    fprintf(stderr, "jackdaw trace: cannot write output: %s\n", strerror(errno));
    return EXIT_INTERNAL;
}

/* The events `cat --sorted` holds until the end: copies, names included (owned). */
struct held {
    struct trace_event *ev;
    size_t n, cap;
};

static void hold(struct held *h, const struct trace_event *ev)
{
    h->ev = xgrow(h->ev, &h->cap, h->n + 1, sizeof *h->ev);
    struct trace_event *c = &h->ev[h->n++];
    *c = *ev;
    if (ev->nnames) {
        char **names = xcalloc(ev->nnames, sizeof *names);
        for (uint32_t i = 0; i < ev->nnames; i++)
            names[i] = xstrdup(ev->names[i] ? ev->names[i] : "");
        c->names = (const char *const *)names;
    }
}

static void held_fini(struct held *h)
{
    for (size_t i = 0; i < h->n; i++) {
        char **names = (char **)h->ev[i].names;
        for (uint32_t k = 0; k < h->ev[i].nnames; k++)
            free(names[k]);
        free(names);
    }
    free(h->ev);
}

/*
 * cat prints events in file order: each node's in its order, nodes interleaved as their
 * blocks reached the collector (a merged trace, node by node).  sorted prints them by
 * time instead, which holds the whole trace in memory (about 200 bytes an event).
 */
static int cat_stats_main(const char *path, bool stats, bool json, bool sorted)
{
    struct trace_reader *r;
    int rc = open_trace(path, false, &r);
    if (rc)
        return rc;
    const struct trace_reader_info *in = trace_reader_info(r);
    struct trace_tally tally;
    trace_tally_init(&tally);
    int exit_code = 0;
    char *cause = NULL;
    struct trace_event ev;
    struct held held = {0};
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if (stats) {
            if (trace_tally_add(&tally, &ev) < 0) {
                fprintf(stderr, "jackdaw trace: out of memory\n");
                exit_code = EXIT_INTERNAL;
                break;
            }
        } else if ((unsigned)ev.kind < TRACE_KIND_COUNT) {
            if ((rc = read_names(r, &ev)) < 0) {
                cause = strdup("the names of a JOB_SUBMIT or TASK_NAMES do not decode");
                break;
            }
            if (sorted) {
                hold(&held, &ev);
                continue;
            }
            if (json)
                print_json(stdout, &ev);
            else
                print_text(stdout, &ev);
            if (ferror(stdout))
                break; /* a closed pipe (| head): stop reading, say it below */
        }
    }
    if (sorted && held.n) {
        qsort(held.ev, held.n, sizeof *held.ev, trace_event_cmp_time);
        for (size_t i = 0; i < held.n && !ferror(stdout); i++) {
            if (json)
                print_json(stdout, &held.ev[i]);
            else
                print_text(stdout, &held.ev[i]);
        }
    }
    held_fini(&held);
    if (rc < 0) {
        fprintf(stderr, "jackdaw trace: cannot read trace '%s': %s\n", path,
                cause ? cause : strerror(-rc));
        exit_code = EXIT_BAD_INPUT;
    } else if (stats && !exit_code) {
        print_stats(stdout, path, in, &tally, json);
    }
    free(cause);
    if (fflush(stdout) || ferror(stdout)) {
        if (errno != EPIPE) {
            fprintf(stderr, "jackdaw trace: cannot write output: %s\n", strerror(errno));
            exit_code = EXIT_INTERNAL;
        }
    } else if (in->tail == TRACE_TAIL_CUT) {
        fprintf(stderr, "jackdaw trace: %s: cut after %" PRIu64 " whole blocks (%" PRIu64
                " records); the rest is unreadable\n", path, in->blocks, in->records);
    } else if (in->tail == TRACE_TAIL_BAD) {
        fprintf(stderr, "jackdaw trace: %s: corrupt block framing at offset %" PRIu64
                " after %" PRIu64 " whole blocks (%" PRIu64 " records); the rest is "
                "unreadable\n", path, in->valid_end, in->blocks, in->records);
        if (!exit_code)
            exit_code = EXIT_BAD_INPUT;
    }
    trace_tally_fini(&tally);
    trace_reader_destroy(r);
    return exit_code;
}

static const char *checksums_name(enum trace_checksums c)
{
    switch (c) {
    case TRACE_CHECKSUMS_CRC32: return "crc32";
    case TRACE_CHECKSUMS_NONE: return "none";
    case TRACE_CHECKSUMS_BAD: return "bad";
    default: return "unknown";
    }
}

static void print_verify(FILE *out, const char *path, const struct trace_verify_report *rep,
                         const struct trace_reader_info *in, bool json)
{
    if (json) {
        fputs("{\"file\":", out);
        put_json_string(out, path);
        fprintf(out, ",\"ok\":%s,\"events\":%" PRIu64 ",\"nodes\":%" PRIu64 ",\"tasks\":%"
                PRIu64 ",\"jobs\":%" PRIu64 ",\"done\":%" PRIu64 ",\"failed\":%" PRIu64
                ",\"cancelled\":%" PRIu64 ",\"missing_events\":%" PRIu64
                ",\"duplicate_events\":%" PRIu64 ",\"unknown_kinds\":%" PRIu64
                ",\"problems\":%" PRIu64,
                rep->problems ? "false" : "true", rep->events, rep->nodes, rep->tasks,
                rep->jobs, rep->tasks_done, rep->tasks_failed, rep->tasks_cancelled,
                rep->missing_events, rep->duplicate_events, rep->unknown_kinds, rep->problems);
        fprintf(out, ",\"checksums\":\"%s\",\"blocks_checked\":%" PRIu64
                ",\"blocks_failed\":%" PRIu64 ",\"dependency_jobs\":%" PRIu64
                ",\"dependency_edges\":%" PRIu64 ",\"resubmissions\":%" PRIu64
                ",\"recomputations\":%" PRIu64 ",\"tasks_rerun\":%" PRIu64
                ",\"lost_ends\":%" PRIu64 ",\"retries\":%" PRIu64 ",\"by_kind\":{",
                checksums_name(in->checksums), in->blocks_checked, in->blocks_failed,
                rep->dag_jobs, rep->dag_edges, rep->resubmissions, rep->recomputations,
                rep->tasks_rerun, rep->lost_ends, rep->retries);
        int n = 0;
        for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++)
            if (rep->by_kind[k])
                fprintf(out, "%s\"%s\":%" PRIu64, n++ ? "," : "",
                        trace_problem_kind_name((enum trace_problem_kind)k), rep->by_kind[k]);
        fputs("},\"listed\":[", out);
        for (size_t i = 0; i < rep->nlisted; i++) {
            fprintf(out, "%s{\"kind\":\"%s\",\"text\":", i ? "," : "",
                    trace_problem_kind_name(rep->listed[i].kind));
            put_json_string(out, rep->listed[i].text);
            putc('}', out);
        }
        fputs("],\"notes\":[", out);
        for (size_t i = 0; i < rep->nnotes; i++) {
            fputs(i ? "," : "", out);
            put_json_string(out, rep->notes[i]);
        }
        fputs("]}\n", out);
        return;
    }
    fprintf(out, "%s: %s\n", path, rep->problems ? "INCOMPLETE" : "ok");
    fprintf(out, "  events %" PRIu64 ", nodes %" PRIu64 ", jobs %" PRIu64 ", tasks %" PRIu64
            " (%" PRIu64 " done, %" PRIu64 " failed, %" PRIu64 " cancelled)\n", rep->events,
            rep->nodes, rep->jobs, rep->tasks, rep->tasks_done, rep->tasks_failed,
            rep->tasks_cancelled);
    if (in->checksums == TRACE_CHECKSUMS_CRC32)
        fprintf(out, "  blocks %" PRIu64 ", checksums (crc32): %" PRIu64 " match, %" PRIu64
                " fail\n", in->blocks_checked + in->blocks_failed, in->blocks_checked,
                in->blocks_failed);
    else if (in->checksums == TRACE_CHECKSUMS_NONE)
        fprintf(out, "  blocks %" PRIu64 ", no checksums (written before jackdaw recorded "
                "them): damage inside a block cannot be told\n", in->blocks);
    else
        fprintf(out, "  blocks %" PRIu64 ", checksums of a scheme this jackdaw does not know: "
                "not checked\n", in->blocks);
    if (rep->dag_jobs == 1)
        fprintf(out, "  dependencies: job %" PRIu32 ", %" PRIu64 " edges checked\n",
                rep->dag_job, rep->dag_edges);
    else if (rep->dag_jobs)
        fprintf(out, "  dependencies: %" PRIu64 " jobs, %" PRIu64 " edges checked\n",
                rep->dag_jobs, rep->dag_edges);
    if (rep->retries)
        fprintf(out, "  retries: %" PRIu64 " failed run%s of tasks with retries left, run "
                "again\n", rep->retries, rep->retries == 1 ? "" : "s");
    /* Said only when a node died: a failure-free trace reads as it always did. */
    if (rep->resubmissions || rep->recomputations || rep->tasks_rerun || rep->lost_ends) {
        fprintf(out, "  failures: %" PRIu64 " resubmission%s (%" PRIu64 " task%s run again), %"
                PRIu64 " recomputation%s, %" PRIu64 " end%s of lost attempts (not counted)\n",
                rep->resubmissions, rep->resubmissions == 1 ? "" : "s", rep->tasks_rerun,
                rep->tasks_rerun == 1 ? "" : "s", rep->recomputations,
                rep->recomputations == 1 ? "" : "s", rep->lost_ends,
                rep->lost_ends == 1 ? "" : "s");
        for (size_t i = 0; i < rep->nnotes; i++)
            fprintf(out, "    %s\n", rep->notes[i]);
        if (rep->nnotes < rep->lost_ends)
            fprintf(out, "    (%" PRIu64 " more)\n", rep->lost_ends - rep->nnotes);
    }
    if (!rep->problems)
        return;
    fprintf(out, "  %" PRIu64 " problem%s", rep->problems, rep->problems == 1 ? "" : "s");
    if (rep->missing_events || rep->duplicate_events)
        fprintf(out, "; %" PRIu64 " events missing, %" PRIu64 " duplicate records",
                rep->missing_events, rep->duplicate_events);
    putc('\n', out);
    size_t i = 0;
    for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++) {
        if (!rep->by_kind[k])
            continue;
        size_t listed = 0;
        for (size_t j = i; j < rep->nlisted && rep->listed[j].kind == (enum trace_problem_kind)k;
             j++)
            listed++;
        fprintf(out, "  %s: %" PRIu64, trace_problem_kind_name((enum trace_problem_kind)k),
                rep->by_kind[k]);
        if (listed < rep->by_kind[k])
            fprintf(out, " (the first %zu:)", listed);
        putc('\n', out);
        for (; listed > 0; listed--, i++)
            fprintf(out, "    %s\n", rep->listed[i].text);
    }
}

static int verify_main(const char *path, const char *workload, bool json, unsigned long limit)
{
    struct workload wl = {0};
    char digest[33] = "";
    if (workload) {
        char *why = NULL;
        if (workload_load(&wl, workload, &why) < 0) {
            fprintf(stderr, "jackdaw trace: %s\n", why ? why : "cannot read the workload");
            free(why);
            return EXIT_BAD_INPUT;
        }
        /* The digest JOB_SUBMIT records is the file's; a pipe has none, and then the
         * jobs are matched by their size. */
        if (job_workload_digest(workload, digest) < 0)
            digest[0] = '\0';
    }
    struct trace_reader *r;
    int rc = open_trace(path, true, &r);
    if (rc) {
        workload_fini(&wl);
        return rc;
    }
    const struct trace_reader_info *in = trace_reader_info(r);
    struct trace_verify *v;
    trace_verify_create(&v, limit);
    if (workload)
        trace_verify_workload(v, &wl, digest);
    char *cause = NULL;
    struct trace_event ev;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if ((unsigned)ev.kind < TRACE_KIND_COUNT && (rc = read_names(r, &ev)) < 0)
            break;
        trace_verify_add(v, &ev);
    }
    int exit_code = 0;
    if (rc < 0) {
        /* A record that does not decode ends the check: what follows is unknown. */
        fprintf(stderr, "jackdaw trace: cannot read trace '%s': %s\n", path,
                cause ? cause : strerror(-rc));
        exit_code = EXIT_BAD_INPUT;
    } else {
        char note[256];
        if (in->checksums == TRACE_CHECKSUMS_UNKNOWN)
            trace_verify_note(v, "the header declares block checksums of a scheme this "
                                 "jackdaw does not know: the blocks were not checked");
        if (in->blocks_failed) {
            snprintf(note, sizeof note, "block %" PRIu64 " at offset %" PRIu64 " is corrupt: "
                     "%s (%" PRIu64 " of %" PRIu64 " blocks fail their check); the events "
                     "from that block on are not read", in->failed_index, in->failed_offset,
                     in->failed_why, in->blocks_failed, in->blocks_checked + in->blocks_failed);
            trace_verify_note(v, note);
        }
        if (in->tail == TRACE_TAIL_CUT) {
            snprintf(note, sizeof note, "the file is cut after %" PRIu64 " whole blocks (%"
                     PRIu64 " records, %" PRIu64 " of %" PRIu64 " bytes): the events after "
                     "that are lost", in->blocks, in->records, in->valid_end, in->file_size);
            trace_verify_note(v, note);
        } else if (in->tail == TRACE_TAIL_BAD) {
            snprintf(note, sizeof note, "corrupt block framing at offset %" PRIu64 " after %"
                     PRIu64 " whole blocks (%" PRIu64 " records): the rest is unreadable",
                     in->valid_end, in->blocks, in->records);
            trace_verify_note(v, note);
        }
        const struct trace_verify_report *rep = trace_verify_finish(v);
        print_verify(stdout, path, rep, in, json);
        if (rep->problems)
            exit_code = EXIT_BAD_INPUT;
        int out = check_stdout();
        if (out)
            exit_code = out;
    }
    free(cause);
    trace_verify_destroy(v);
    trace_reader_destroy(r);
    workload_fini(&wl);
    return exit_code;
}

static int merge_main(const char *out, const char *const *files, size_t n)
{
    struct trace_merge_result res;
    char *cause = NULL;
    int rc = trace_merge(out, files, n, NULL, &res, &cause);
    for (size_t i = 0; i < res.ninputs; i++) {
        const struct trace_merge_input *in = &res.inputs[i];
        if (!in->path || in->tail == TRACE_TAIL_CLEAN)
            continue;
        fprintf(stderr, "jackdaw trace: warning: '%s' is %s after %" PRIu64 " whole blocks; "
                "merged its %" PRIu64 " records, the rest is unreadable\n", in->path,
                in->tail == TRACE_TAIL_CUT ? "cut" : "corrupt", in->blocks, in->records);
    }
    int exit_code = 0;
    if (rc < 0) {
        fprintf(stderr, "jackdaw trace: merge into '%s' failed: %s\n", out,
                cause ? cause : strerror(-rc));
        exit_code = res.bad_input ? EXIT_BAD_INPUT : EXIT_INTERNAL;
    } else {
        printf("%s: %" PRIu64 " events from %zu files, %" PRIu64 " duplicates dropped",
               out, res.events_out, n, res.duplicates);
        if (res.unknown_kinds)
            printf(", %" PRIu64 " of newer kinds dropped", res.unknown_kinds);
        printf("; header from %s\n", res.header_from ? res.header_from : "none (empty)");
        exit_code = check_stdout();
    }
    free(cause);
    trace_merge_result_fini(&res);
    return exit_code;
}

static int export_main(const char *path, const char *output)
{
    struct trace_reader *r;
    int rc = open_trace(path, false, &r);
    if (rc)
        return rc;
    const struct trace_reader_info *in = trace_reader_info(r);
    char *target = output ? strdup(output) : NULL;
    if (!output && asprintf(&target, "%s.json", path) < 0)
        target = NULL;
    if (!target) {
        trace_reader_destroy(r);
        fprintf(stderr, "jackdaw trace: out of memory\n");
        return EXIT_INTERNAL;
    }
    bool to_file = strcmp(target, "-") != 0;
    FILE *out = to_file ? fopen(target, "w") : stdout;
    if (!out) {
        fprintf(stderr, "jackdaw trace: cannot open '%s' for writing: %s\n", target,
                strerror(errno));
        free(target);
        trace_reader_destroy(r);
        return EXIT_INTERNAL;
    }
    struct trace_chrome *c;
    trace_chrome_create(&c, out, in->header_json);
    char *cause = NULL;
    struct trace_event ev;
    int wrc = 0, werr = 0; /* werr: errno of the write that failed */
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if ((unsigned)ev.kind < TRACE_KIND_COUNT && (rc = read_names(r, &ev)) < 0)
            break;
        if ((wrc = trace_chrome_add(c, &ev)) < 0) {
            werr = errno;
            break;
        }
    }
    struct trace_chrome_stats st;
    if (!wrc && (wrc = trace_chrome_finish(c, &st)) < 0)
        werr = errno;
    trace_chrome_destroy(c);
    if (to_file && fclose(out) != 0 && !wrc) {
        wrc = -EIO;
        werr = errno;
    }
    int exit_code = 0;
    if (wrc < 0 && !to_file && werr == EPIPE) {
        exit_code = 0; /* a closed pipe (| head): the reader wanted no more */
    } else if (wrc < 0) {
        fprintf(stderr, "jackdaw trace: cannot write '%s': %s\n", to_file ? target :
                "standard output", strerror(werr ? werr : EIO));
        exit_code = EXIT_INTERNAL;
        struct stat sb;
        if (to_file && stat(target, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(target); /* half a document is no use; never remove a device or pipe */
    } else if (rc < 0) {
        fprintf(stderr, "jackdaw trace: cannot read trace '%s': %s; '%s' holds the events "
                "before it\n", path, cause ? cause : strerror(-rc), target);
        exit_code = EXIT_BAD_INPUT;
    } else {
        if (in->tail != TRACE_TAIL_CLEAN)
            fprintf(stderr, "jackdaw trace: %s: %s after %" PRIu64 " whole blocks (%" PRIu64
                    " records); exported those\n", path,
                    in->tail == TRACE_TAIL_CUT ? "cut" : "corrupt block framing",
                    in->blocks, in->records);
        if (in->tail == TRACE_TAIL_BAD)
            exit_code = EXIT_BAD_INPUT;
        if (to_file)
            printf("%s: %" PRIu64 " task slices (%" PRIu64 " unfinished), %" PRIu64
                   " transfers, %" PRIu64 " steals, %" PRIu64 " counter samples\n", target,
                   st.task_slices, st.unfinished, st.transfers, st.steal_starts, st.counters);
    }
    free(cause);
    free(target);
    trace_reader_destroy(r);
    return exit_code;
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "jackdaw trace: %s\nusage: jackdaw trace %s\n", msg, cmd_trace.usage);
    return EXIT_USAGE;
}

static int trace_main(int argc, char **argv)
{
    bool json = false, chrome = false, sorted = false;
    const char *output = NULL;
    unsigned long limit = 10;
    const char *workload = NULL;
    struct opt opts[] = {
        {"json", OPT_FLAG, &json, "      cat: one JSON object per line; stats, verify: one object"},
        {"sorted", OPT_FLAG, &sorted, "      cat: by time across nodes (reads the whole trace into "
                                      "memory; default: file order, each node's events in order)"},
        {"output", OPT_STRING, &output, "FILE  merge, export: write here (also -o; export: - "
                                        "for stdout)"},
        {"chrome", OPT_FLAG, &chrome, "      export: Chrome trace-event JSON (Perfetto)"},
        {"limit", OPT_UINT, &limit, "N  verify: problems listed per kind, >= 1 (default 10)"},
        {"workload", OPT_STRING, &workload, "FILE  verify: no task started before its parents "
                                            "ended, per this workload"},
        {NULL, 0, NULL, NULL},
    };
    /* "-o X" is the short form of "--output X" (the command lines in the docs use it). */
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc, argv, opts, shorts, 1);
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!args || !pos) {
        free(args);
        free(pos);
        fprintf(stderr, "jackdaw trace: out of memory\n");
        return EXIT_INTERNAL;
    }
    int npos;
    int rc = cmd_parse(&cmd_trace, argc, args, opts, pos, argc, &npos);
    int exit_code;
    const char *sub = npos > 0 ? pos[0] : NULL;
    bool one_file = npos == 2;
    if (rc) {
        exit_code = rc < 0 ? 0 : rc;
    } else if (!sub) {
        exit_code = usage_error("missing subcommand (cat, stats, verify, merge or export)");
    } else if (!strcmp(sub, "cat") || !strcmp(sub, "stats") || !strcmp(sub, "verify")) {
        if (!one_file)
            exit_code = usage_error(npos < 2 ? "missing FILE" : "one FILE at a time");
        else if (output || chrome)
            exit_code = usage_error("--output and --chrome are for merge and export");
        else if (!strcmp(sub, "verify") && limit == 0)
            exit_code = usage_error("--limit must be at least 1");
        else if (workload && strcmp(sub, "verify"))
            exit_code = usage_error("--workload is for verify");
        else if (sorted && strcmp(sub, "cat"))
            exit_code = usage_error("--sorted is for cat");
        else if (!strcmp(sub, "verify"))
            exit_code = verify_main(pos[1], workload, json, limit);
        else
            exit_code = cat_stats_main(pos[1], !strcmp(sub, "stats"), json, sorted);
    } else if (!strcmp(sub, "merge")) {
        if (!output)
            exit_code = usage_error("merge needs -o OUT");
        else if (npos < 2)
            exit_code = usage_error("missing FILE to merge");
        else if (json || chrome)
            exit_code = usage_error("merge takes no --json or --chrome");
        else
            exit_code = merge_main(output, pos + 1, (size_t)npos - 1);
    } else if (!strcmp(sub, "export")) {
        if (!chrome)
            exit_code = usage_error("export needs a format: --chrome");
        else if (!one_file)
            exit_code = usage_error(npos < 2 ? "missing FILE" : "one FILE at a time");
        else if (json)
            exit_code = usage_error("export takes no --json");
        else
            exit_code = export_main(pos[1], output);
    } else {
        fprintf(stderr, "jackdaw trace: unknown subcommand '%s'\n", sub);
        fprintf(stderr, "usage: jackdaw trace %s\n", cmd_trace.usage);
        exit_code = EXIT_USAGE;
    }
    free(args);
    free(pos);
    return exit_code;
}

const struct cmd cmd_trace = {
    .name = "trace",
    .usage = "cat FILE [--json] [--sorted] | stats FILE [--json] | verify FILE [--workload W] [--json] | "
             "merge -o OUT FILE... | export --chrome FILE [-o OUT]",
    .summary = "print, count, verify, merge or export a trace's events",
    .main = trace_main,
};
