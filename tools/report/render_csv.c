/*
 * render_csv — the report as a directory of CSV files, one per table, for scripts and
 * notebooks.  Column names are the JSON keys (share/doc/report.md); numbers are plain
 * (no units, no separators), an undefined figure is an empty field.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/xalloc.h"
#include "tools/report/render.h"
#include "tools/report/render_internal.h"

struct csv_file {
    FILE *f;
    char *path;
};

static int open_csv(struct csv_file *c, const char *dir, const char *name, char **cause)
{
    c->path = xasprintf("%s/%s", dir, name);
    c->f = fopen(c->path, "w");
    if (!c->f) {
        int e = errno;
        *cause = xasprintf("cannot write '%s': %s", c->path, strerror(e));
        free(c->path);
        return -e;
    }
    return 0;
}

static int close_csv(struct csv_file *c, char **cause)
{
    bool bad = ferror(c->f) != 0;
    bad |= fclose(c->f) != 0;
    int rc = 0;
    if (bad) {
        *cause = xasprintf("cannot write '%s': %s", c->path, strerror(EIO));
        rc = -EIO;
    }
    free(c->path);
    return rc;
}

static void figures(FILE *f, const struct report_analysis *a)
{
    fputs("key,label,value\n", f);
    for (int k = 0; k < RF_COUNT; k++) {
        const struct report_figure_info *fi = report_figure_info(k);
        fprintf(f, "%s,", fi->key);
        csv_cell(f, fi->label);
        putc(',', f);
        csv_num(f, a->figures[k]);
        putc('\n', f);
    }
}

static void nodes(FILE *f, const struct report_analysis *a)
{
    fputs("id,slots,speed,tasks_run,tasks_failed,busy_s,utilization,first_start_s,"
          "last_end_s,stolen_in,stolen_out,pushed,steal_requests,steal_grants,steal_fails,"
          "tasks_with_inputs,locality_hits,fetches,fetch_bytes,cache_hits\n", f);
    for (size_t i = 0; i < a->nnodes; i++) {
        const struct report_node *n = &a->nodes[i];
        fprintf(f, "%" PRId32 ",%" PRId32 ",", n->id, n->slots);
        csv_num(f, n->speed);
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", n->tasks_run, n->tasks_failed);
        csv_num(f, n->busy_s);
        putc(',', f);
        csv_num(f, n->utilization);
        putc(',', f);
        csv_num(f, n->first_start_s);
        putc(',', f);
        csv_num(f, n->last_end_s);
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                n->stolen_in, n->stolen_out, n->pushed_out, n->steal_requests, n->steal_grants,
                n->steal_fails, n->tasks_with_inputs, n->locality_hits, n->fetches,
                n->fetch_bytes, n->cache_hits);
    }
}

static void lost(FILE *f, const struct report_analysis *a)
{
    fputs("node", f);
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        fprintf(f, ",%s", report_lost_cause_key(c));
    fputs(",idle\n", f);
    for (size_t i = 0; i < a->nnodes; i++) {
        double idle = 0;
        fprintf(f, "%" PRId32, a->nodes[i].id);
        for (int c = 0; c < REPORT_LOST_COUNT; c++) {
            putc(',', f);
            csv_num(f, a->nodes[i].lost_s[c]);
            idle += a->nodes[i].lost_s[c];
        }
        putc(',', f);
        csv_num(f, idle);
        putc('\n', f);
    }
    fputs("all", f);
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        putc(',', f);
        csv_num(f, a->figures[RF_LOST_RAMP_UP_S + c]);
    }
    putc(',', f);
    csv_num(f, a->figures[RF_IDLE_CORE_S]);
    putc('\n', f);
}

static void series(FILE *f, const struct report_analysis *a)
{
    fputs("t_s,utilization,busy_slots,waitq,lreadyq,sreadyq,potential,imbalance\n", f);
    for (size_t b = 0; b < a->nbins; b++) {
        const struct report_bin *x = &a->bins[b];
        double v[] = {x->t_s,    x->utilization, x->busy_slots, x->waitq,
                      x->lreadyq, x->sreadyq,    x->potential,  x->imbalance};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            if (k)
                putc(',', f);
            csv_num(f, v[k]);
        }
        putc('\n', f);
    }
}

static void node_utilization(FILE *f, const struct report_analysis *a)
{
    fputs("t_s", f);
    for (size_t i = 0; i < a->nnodes; i++)
        fprintf(f, ",node_%" PRId32, a->nodes[i].id);
    putc('\n', f);
    for (size_t b = 0; b < a->nbins; b++) {
        csv_num(f, a->bins[b].t_s);
        for (size_t i = 0; i < a->nnodes; i++) {
            putc(',', f);
            csv_num(f, a->node_utilization[b * a->nnodes + i]);
        }
        putc('\n', f);
    }
}

static void matrix(FILE *f, const struct report_analysis *a, const uint64_t *m)
{
    if (!m) {
        fputs("thief\n", f); /* too many nodes for a matrix (see the warnings) */
        return;
    }
    fputs("thief", f);
    for (size_t v = 0; v < a->nnodes; v++)
        fprintf(f, ",victim_%" PRId32, a->nodes[v].id);
    putc('\n', f);
    for (size_t t = 0; t < a->nnodes; t++) {
        fprintf(f, "%" PRId32, a->nodes[t].id);
        for (size_t v = 0; v < a->nnodes; v++)
            fprintf(f, ",%" PRIu64, m[t * a->nnodes + v]);
        putc('\n', f);
    }
}

static void audit(FILE *f, const struct report_analysis *a)
{
    fputs("task,name,victim,thief,stolen_s,started_s,estimate_s,position,victim_rate_tps,"
          "gain_s\n", f);
    for (size_t k = 0; k < a->nworst; k++) {
        const struct report_steal *s = &a->worst[k];
        char buf[FIG_BUF];
        fprintf(f, "%s,", fmt_task(buf, s->task));
        csv_cell(f, s->name);
        fprintf(f, ",%" PRId32 ",%" PRId32 ",", s->victim, s->thief);
        csv_num(f, s->stolen_s);
        putc(',', f);
        csv_num(f, s->started_s);
        putc(',', f);
        csv_num(f, s->estimate_s);
        fprintf(f, ",%" PRIu32 ",", s->position);
        csv_num(f, s->victim_rate_tps);
        putc(',', f);
        csv_num(f, s->gain_s);
        putc('\n', f);
    }
}

int render_csv(const char *dir, const struct report_analysis *a, char **cause)
{
    *cause = NULL;
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        int e = errno;
        *cause = xasprintf("cannot make the directory '%s': %s", dir, strerror(e));
        return -e;
    }
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        *cause = xasprintf("'%s' is not a directory (CSV output is one file per table)", dir);
        return -ENOTDIR;
    }
    static const struct {
        const char *name;
        int which;
    } files[] = {
        {"figures.csv", 0},     {"nodes.csv", 1},       {"lost.csv", 2},
        {"series.csv", 3},      {"node_utilization.csv", 4}, {"steal_tasks.csv", 5},
        {"steal_requests.csv", 6}, {"steal_audit.csv", 7},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct csv_file c;
        int rc = open_csv(&c, dir, files[i].name, cause);
        if (rc < 0)
            return rc;
        switch (files[i].which) {
        case 0: figures(c.f, a); break;
        case 1: nodes(c.f, a); break;
        case 2: lost(c.f, a); break;
        case 3: series(c.f, a); break;
        case 4: node_utilization(c.f, a); break;
        case 5: matrix(c.f, a, a->steal_tasks); break;
        case 6: matrix(c.f, a, a->steal_asks); break;
        default: audit(c.f, a); break;
        }
        rc = close_csv(&c, cause);
        if (rc < 0)
            return rc;
    }
    return 0;
}
