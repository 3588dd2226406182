/*
 * jackdaw trace — look into a trace file without an Avro tool.
 *
 *   jackdaw trace cat FILE [--json]    one event per line, in file order
 *   jackdaw trace stats FILE [--json]  counts by kind and node, time span, size, end
 *
 * cat prints, per event: the time in seconds since the run start, the node, the per-node
 * sequence number, the kind, the task as job:index ("-" for none), then the fields that
 * kind uses (share/doc/trace-schema.md) as name=value.  With --json each line is an
 * object whose keys are the schema's field names; "seq" and "time" hold the decoded
 * absolute values (time in ns since the run start), not the deltas stored on disk.
 * Kinds from a newer writer are skipped by cat and counted by stats.
 *
 * Reading goes through trace/reader (scanner first, libavro only on the whole blocks).
 * Exit codes: 0 when the whole file, or every whole block of a crash-cut file, was read
 * (a cut is reported on stderr: a node or collector that dies leaves exactly that);
 * EXIT_BAD_INPUT when the file is not a jackdaw trace, is cut inside its header, has
 * corrupt framing (after printing what the whole blocks before it hold) or a record that
 * does not decode; EXIT_USAGE for a bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd.h"
#include "trace/reader.h"

/* The optional fields each kind uses, in print order. */
enum {
    F_PEER = 1 << 0,
    F_STATUS = 1 << 1,
    F_COUNT = 1 << 2,
    F_BYTES = 1 << 3,
    F_DURATION = 1 << 4,
    F_TEXT = 1 << 5,
    F_SAMPLE = 1 << 6,
};

static const unsigned kind_fields[TRACE_KIND_COUNT] = {
    [TRACE_TASK_PUSHED] = F_PEER,
    [TRACE_TASK_STOLEN_IN] = F_PEER,
    [TRACE_TASK_STOLEN_OUT] = F_PEER,
    [TRACE_TASK_END] = F_STATUS,
    [TRACE_STEAL_REQUEST] = F_PEER,
    [TRACE_STEAL_GRANT] = F_PEER | F_COUNT,
    [TRACE_STEAL_FAIL] = F_PEER | F_STATUS,
    [TRACE_DATA_FETCH] = F_PEER | F_BYTES | F_DURATION,
    [TRACE_CACHE_HIT] = F_BYTES,
    [TRACE_NODE_SAMPLE] = F_SAMPLE,
    [TRACE_NODE_UP] = F_PEER | F_COUNT,
    [TRACE_NODE_DOWN] = F_PEER | F_STATUS,
    [TRACE_POLICY_CHANGE] = F_TEXT,
    [TRACE_DROPPED] = F_COUNT,
};

/* Writes s as a JSON string (quotes included); also used for `text` in the columns so
 * that a policy name cannot break a line. */
static void put_json_string(FILE *out, const char *s)
{
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            putc(*p, out);
    }
    putc('"', out);
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
    if (ev->task != TRACE_NO_TASK)
        snprintf(task, sizeof task, "%" PRIu32 ":%" PRIu32, (uint32_t)(ev->task >> 32),
                 (uint32_t)ev->task);
    unsigned f = kind_fields[ev->kind];
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
    if (f & F_TEXT) {
        fputs(" text=", out);
        put_json_string(out, ev->text);
    }
    if (f & F_SAMPLE)
        print_sample(out, &ev->sample, false);
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
    if (f & F_TEXT) {
        fputs(",\"text\":", out);
        put_json_string(out, ev->text);
    }
    if (f & F_SAMPLE) {
        fputs(",\"sample\":{", out);
        print_sample(out, &ev->sample, true);
        putc('}', out);
    }
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

static int trace_main(int argc, char **argv)
{
    bool json = false;
    struct opt opts[] = {
        {"json", OPT_FLAG, &json, "      one JSON object per line (cat) or one object (stats)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[2];
    int npos;
    int rc = cmd_parse(&cmd_trace, argc, argv, opts, pos, 2, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    bool cat = npos == 2 && strcmp(pos[0], "cat") == 0;
    bool stats = npos == 2 && strcmp(pos[0], "stats") == 0;
    if (!cat && !stats) {
        if (npos == 0)
            fprintf(stderr, "jackdaw trace: missing subcommand (cat or stats)\n");
        else if (strcmp(pos[0], "cat") && strcmp(pos[0], "stats"))
            fprintf(stderr, "jackdaw trace: unknown subcommand '%s'\n", pos[0]);
        else
            fprintf(stderr, "jackdaw trace: missing FILE\n");
        fprintf(stderr, "usage: jackdaw trace %s\n", cmd_trace.usage);
        return EXIT_USAGE;
    }
    const char *path = pos[1];

    char *cause = NULL;
    struct trace_reader *r;
    rc = trace_reader_open(&r, path, &cause);
    if (rc < 0) {
        if (cause)
            fprintf(stderr, "jackdaw trace: %s\n", cause);
        else
            fprintf(stderr, "jackdaw trace: cannot read trace '%s': %s\n", path, strerror(-rc));
        free(cause);
        return rc == -ENOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT;
    }
    const struct trace_reader_info *in = trace_reader_info(r);
    struct trace_tally tally;
    trace_tally_init(&tally);
    int exit_code = 0;
    struct trace_event ev;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if (stats) {
            if (trace_tally_add(&tally, &ev) < 0) {
                fprintf(stderr, "jackdaw trace: out of memory\n");
                exit_code = EXIT_INTERNAL;
                break;
            }
        } else if ((unsigned)ev.kind < TRACE_KIND_COUNT) {
            if (json)
                print_json(stdout, &ev);
            else
                print_text(stdout, &ev);
            if (ferror(stdout))
                break; /* a closed pipe (| head): stop reading, say it below */
        }
    }
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

const struct cmd cmd_trace = {
    .name = "trace",
    .usage = "cat|stats FILE [--json]",
    .summary = "print a trace's events, or count them",
    .main = trace_main,
};
