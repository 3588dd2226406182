/*
 * draw_panes — the lower panes of the view (see draw.h): utilization over time for the
 * cluster and the selected node, steal activity (a thief x victim matrix while it fits,
 * else the largest flows), the event log, the selected node's detail, and the jobs.
 */
#include "tui/draw_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/model/trace_kind.h"

/* ---- charts ---------------------------------------------------------------------------- */

void draw_chart(int y, int x, int h, int w, const struct model_hist *hist, double max,
                enum draw_style s)
{
    if (h <= 0 || w <= 0)
        return;
    uint32_t len = hist->len;
    uint32_t from = len > (uint32_t)w ? len - (uint32_t)w : 0;
    attrset(draw_attr(s));
    for (uint32_t i = from; i < len; i++) {
        double v = model_hist_get(hist, i);
        if (max > 0)
            v /= max;
        if (!(v > 0))
            v = 0;
        if (v > 1)
            v = 1;
        int col = x + (int)(i - from);
        /* Whole rows from the bottom, then the remainder as a partial glyph. */
        double cells = v * h;
        for (int row = 0; row < h; row++) {
            double part = cells - row;
            const char *g = part >= 1 ? draw_levels[8] : draw_level_glyph(part > 0 ? part : 0);
            mvaddstr(y + h - 1 - row, col, g);
        }
    }
    attrset(A_NORMAL);
}

void draw_sparkline(int y, int x, int w, const struct model_hist *hist)
{
    if (w <= 0)
        return;
    uint32_t len = hist->len;
    uint32_t from = len > (uint32_t)w ? len - (uint32_t)w : 0;
    double max = 0;
    for (uint32_t i = from; i < len; i++)
        if (model_hist_get(hist, i) > max)
            max = model_hist_get(hist, i);
    attrset(draw_attr(STYLE_OK));
    for (uint32_t i = from; i < len; i++) {
        double v = max > 0 ? model_hist_get(hist, i) / max : 0;
        mvaddstr(y, x + (int)(i - from), draw_level_glyph(v));
    }
    attrset(A_NORMAL);
}

static double hist_last(const struct model_hist *h)
{
    return h->len ? model_hist_get(h, h->len - 1) : 0;
}

/* ---- utilization ----------------------------------------------------------------------- */

static void one_chart(int y, int x, int h, int w, const char *label, const struct model_hist *hist)
{
    if (h < 1)
        return;
    draw_text(y, x, w, STYLE_LABEL, label);
    if (h < 2)
        return;
    int ch = h - 1;
    draw_text(y + 1, x, 5, STYLE_DIM, "100%");
    if (ch > 1)
        draw_text(y + ch, x, 5, STYLE_DIM, "  0%");
    draw_chart(y + 1, x + 5, ch, w - 5, hist, 0, STYLE_BAR_LOW);
}

static void pane_util(const struct rect *r, const struct model_view *v, const struct ui *ui)
{
    const struct model_node *n = draw_selected_node(v, ui);
    char label[160];
    snprintf(label, sizeof label, "Cluster utilization (busy/slots, %.2f s a column): now %.0f%%",
             MODEL_HISTORY_STEP_NS / 1e9, 100 * hist_last(&v->util_hist));
    if (!n) {
        one_chart(r->y, r->x, r->h, r->w, label, &v->util_hist);
        return;
    }
    int top = (r->h + 1) / 2;
    one_chart(r->y, r->x, top, r->w, label, &v->util_hist);
    snprintf(label, sizeof label, "Node %d utilization: now %.0f%%, average %.0f%%", n->id,
             100 * n->util, 100 * n->util_avg);
    one_chart(r->y + top, r->x, r->h - top, r->w, label, &n->util_hist);
}

/* ---- steals ---------------------------------------------------------------------------- */

static void pane_steals(const struct rect *r, const struct model_view *v, const struct ui *ui)
{
    if (v->steals_whole)
        draw_textf(r->y, r->x, r->w, STYLE_LABEL,
                   "Steals: %llu tasks stolen; %llu requests, %llu failed.  Whole run (w: "
                   "last %.0f s):",
                   (unsigned long long)v->steals_total, (unsigned long long)v->steal_requests,
                   (unsigned long long)v->steal_fails, MODEL_STEAL_WINDOW_NS / 1e9);
    else
        draw_textf(r->y, r->x, r->w, STYLE_LABEL,
                   "Steals: %llu tasks stolen; %llu requests, %llu failed.  Last %.0f s (w: "
                   "whole run):",
                   (unsigned long long)v->steals_total, (unsigned long long)v->steal_requests,
                   (unsigned long long)v->steal_fails, MODEL_STEAL_WINDOW_NS / 1e9);
    uint32_t n = v->nnodes;
    /* Cells of 4 columns show up to 999 tasks, of 3 up to 99, where room is short. */
    int cw = 7 + (int)n * 4 <= r->w ? 4 : 3;
    bool matrix = v->recent && n > 0 && 7 + (int)n * cw <= r->w && (int)n + 2 <= r->h;
    if (matrix) {
        int y = r->y + 1;
        draw_text(y, r->x, 7, STYLE_DIM, "thf\\vic");
        for (uint32_t j = 0; j < n; j++)
            draw_textf(y, r->x + 7 + (int)j * cw, cw, STYLE_DIM, "%*d", cw, v->nodes[j].id % 1000);
        for (uint32_t i = 0; i < n; i++) {
            bool sel = v->nodes[i].id == ui->selected;
            draw_textf(y + 1 + (int)i, r->x, 7, sel ? STYLE_SELECTED : STYLE_DIM, "%6d ",
                       v->nodes[i].id);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t c = v->recent[i * n + j];
                char buf[8];
                if (c == 0)
                    snprintf(buf, sizeof buf, "%*s", cw, ".");
                else if (c < (cw == 4 ? 1000u : 100u))
                    snprintf(buf, sizeof buf, "%*u", cw, c);
                else
                    snprintf(buf, sizeof buf, "%*s", cw, "++");
                draw_text(y + 1 + (int)i, r->x + 7 + (int)j * cw, cw,
                          c ? STYLE_WARN : STYLE_DIM, buf);
            }
        }
        return;
    }
    if (v->nflows == 0) {
        draw_text(r->y + 1, r->x + 1, r->w - 1, STYLE_DIM,
                  v->steals_whole ? "no steals seen" : "no steals in the window");
        return;
    }
    /* Top flows, in as many columns of 28 as fit. */
    int colw = 28, ncol = r->w / colw > 0 ? r->w / colw : 1, lines = r->h - 1;
    for (uint32_t k = 0; k < v->nflows && lines > 0; k++) {
        int col = (int)k / lines, row = (int)k % lines;
        if (col >= ncol)
            break;
        const struct model_flow *f = &v->flows[k];
        bool sel = f->thief == ui->selected || f->victim == ui->selected;
        draw_textf(r->y + 1 + row, r->x + col * colw, colw - 1, sel ? STYLE_SELECTED : STYLE_NORMAL,
                   "%5d -> %-5d %7llu tasks", f->victim, f->thief, (unsigned long long)f->tasks);
    }
}

/* ---- event log ------------------------------------------------------------------------- */

static enum draw_style log_style(const struct model_log_line *l)
{
    switch (l->kind) {
    case TRACE_TASK_END:
    case TRACE_NODE_DOWN:
    case TRACE_DROPPED: return STYLE_ERROR;
    case TRACE_NODE_UP: return STYLE_OK;
    case TRACE_POLICY_CHANGE: return STYLE_WARN;
    case TRACE_JOB_SUBMIT: return STYLE_TITLE;
    case TRACE_STEAL_GRANT: return STYLE_DIM;
    default: return STYLE_NORMAL;
    }
}

/* With a job selected, its own lines and the cluster's (nodes up and down, policy). */
static bool log_shown(const struct model_view *v, const struct model_log_line *l)
{
    return v->job < 0 || l->job < 0 || l->job == v->job;
}

static void pane_log(const struct rect *r, const struct model_view *v)
{
    if (v->job >= 0)
        draw_textf(r->y, r->x, r->w, STYLE_LABEL, "Event log of job %" PRId64 " (u: next job, "
                   "U: all) and the cluster's node up/down, policy, drops", v->job);
    else
        draw_textf(r->y, r->x, r->w, STYLE_LABEL, "Event log (%u lines): node up/down, policy, "
                   "failures, drops, steals", v->nlog);
    int lines = r->h - 1;
    /* The newest lines that fit, found from the end, drawn oldest first. */
    uint32_t from = v->nlog, shown = 0;
    while (from > 0 && shown < (uint32_t)(lines > 0 ? lines : 0)) {
        from--;
        shown += log_shown(v, &v->log[from]);
    }
    int y = r->y + 1;
    for (uint32_t i = from; i < v->nlog; i++) {
        const struct model_log_line *l = &v->log[i];
        if (!log_shown(v, l))
            continue;
        /* The model's lines start with their time. */
        draw_text(y++, r->x, r->w, log_style(l), l->text);
    }
}

/* ---- jobs ------------------------------------------------------------------------------ */

static void pane_jobs(const struct rect *r, const struct model_view *v)
{
    if (!v->njobs) {
        draw_text(r->y, r->x, r->w, STYLE_DIM, "No job yet: `jackdaw submit` one (J lists the "
                  "cluster's jobs as `jackdaw jobs` does).");
        return;
    }
    /* 77 columns: an 80-column terminal shows every one. */
    if (v->jobs_partial)
        draw_textf(r->y, r->x, r->w, STYLE_WARN, "Jobs (%u; u: one, U: all)  PARTIAL: the "
                   "collector missed events (see its log)", v->njobs);
    else
        draw_textf(r->y, r->x, r->w, STYLE_LABEL, "Jobs (%u; u: one, U: all)  EFF = busy "
                   "task-seconds / (%u slots x elapsed)", v->njobs, v->slots);
    draw_textf(r->y + 1, r->x, r->w, STYLE_HEADING, "%-10s %-12s %-7s %20s %6s %7s %4s %4s",
               "JOB", "NAME", "STATE", "DONE/FAIL/CANC/TOTAL", "PROG", "ELAPSED", "EFF", "RUN");
    int rows = r->h - 2;
    uint32_t from = v->njobs > (uint32_t)(rows > 0 ? rows : 0) ? v->njobs - (uint32_t)rows : 0;
    for (uint32_t i = from; i < v->njobs; i++) {
        const struct model_job *j = &v->jobs[i];
        char total[24] = "?", prog[16] = "-", el[32], tasks[96];
        if (j->total)
            snprintf(total, sizeof total, "%" PRIu64, j->total);
        if (j->progress >= 0)
            snprintf(prog, sizeof prog, "%.1f%%", 100 * j->progress);
        draw_fmt_duration(el, sizeof el, j->elapsed_s);
        snprintf(tasks, sizeof tasks, "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%s", j->done,
                 j->failed, j->cancelled, total);
        bool on = (int64_t)j->id == v->job;
        enum draw_style s = on ? STYLE_SELECTED : strcmp(j->state, "failed") == 0 ? STYLE_ERROR
                          : j->finished ? STYLE_OK : STYLE_NORMAL;
        draw_textf(r->y + 2 + (int)(i - from), r->x, r->w, s,
                   "%-10u %-12.12s %-7s %20s %6s %7s %3.0f%% %4u", j->id,
                   j->name[0] ? draw_base_name(j->name) : "-", j->state, tasks, prog, el, 100 * j->efficiency,
                   j->running);
    }
}

/* ---- node detail ----------------------------------------------------------------------- */

static void pane_detail(const struct rect *r, const struct model_view *v, const struct ui *ui)
{
    const struct model_node *n = draw_selected_node(v, ui);
    if (!n) {
        draw_text(r->y, r->x, r->w, STYLE_DIM,
                  "No node selected: Up/Down, or a click on a row or a map cell, selects one.");
        return;
    }
    const struct trace_sample *s = &n->s;
    int y = r->y, end = r->y + r->h;
    draw_textf(y++, r->x, r->w, STYLE_TITLE,
               "Node %d  %s  speed %.2f  slots %u  busy %d  util %.0f%% (avg %.0f%%)", n->id,
               n->dead ? "DOWN (declared dead)" : !n->seen ? "no sample yet"
               : n->connected ? "up" : "stream closed", n->speed, n->slots,
               s->busy, 100 * n->util, 100 * n->util_avg);
    char fb[16], bo[16], bt[16], hit[16];
    draw_fmt_bytes(fb, sizeof fb, (double)s->fetch_bytes);
    draw_fmt_bytes(bo, sizeof bo, (double)s->bytes_out);
    draw_fmt_duration(bt, sizeof bt, (double)s->busy_ns / 1e9);
    if (n->cache_hit_rate < 0)
        snprintf(hit, sizeof hit, "-");
    else
        snprintf(hit, sizeof hit, "%.0f%%", 100 * n->cache_hit_rate);
    if (y < end && (n->resubmitted_from || n->resubmitted_to))
        draw_textf(y++, r->x, r->w, n->dead ? STYLE_ERROR : STYLE_WARN,
                   "resubmitted: %llu of its tasks handed on after it died, %llu received as "
                   "new attempts", (unsigned long long)n->resubmitted_from,
                   (unsigned long long)n->resubmitted_to);
    if (y < end)
        draw_textf(y++, r->x, r->w, STYLE_NORMAL,
                   "tasks: started %lld  ended %lld  failed %lld  pushed %lld  busy time %s",
                   (long long)s->started, (long long)s->ended, (long long)s->failed,
                   (long long)s->pushed, bt);
    if (y < end && v->job >= 0) {
        char jb[16];
        draw_fmt_duration(jb, sizeof jb, n->job_busy_s);
        draw_textf(y++, r->x, r->w, STYLE_WARN, "job %" PRId64 " here: running %u  done %llu  "
                   "busy time %s", v->job, n->job_running, (unsigned long long)n->job_done, jb);
    }
    if (y < end) {
        /* The samples count every stolen task; the grants seen as notes say the same
         * unless some notes were lost on the way, which is worth showing. */
        char grants[64] = "";
        if ((int64_t)n->steals_in != s->stolen_in || (int64_t)n->steals_out != s->stolen_out)
            snprintf(grants, sizeof grants, " (grants seen: %llu in, %llu out)",
                     (unsigned long long)n->steals_in, (unsigned long long)n->steals_out);
        draw_textf(y++, r->x, r->w, STYLE_NORMAL,
                   "steals: %lld tasks in, %lld out%s; requests %lld, failed %lld",
                   (long long)s->stolen_in, (long long)s->stolen_out, grants,
                   (long long)s->steal_requests, (long long)s->steal_fails);
    }
    if (y < end)
        draw_textf(y++, r->x, r->w, STYLE_NORMAL,
                   "data: %lld fetches, %s in, %s served; cache hits %lld (%s); dropped %lld",
                   (long long)s->fetches, fb, bo, (long long)s->cache_hits, hit,
                   (long long)s->dropped);
    static const char *const qnames[3] = {"WaitQ", "LReadyQ", "SReadyQ"};
    const struct model_hist *qh[3] = {&n->waitq_hist, &n->lreadyq_hist, &n->sreadyq_hist};
    const int32_t qnow[3] = {s->waitq, s->lreadyq, s->sreadyq};
    /* Queue lengths over time: a chart each when the pane is tall enough (a line for
     * the recent steals stays), else a sparkline each. */
    int room = end - y - 1, per = room / 3;
    for (int q = 0; q < 3 && y < end; q++) {
        double max = 0;
        for (uint32_t i = 0; i < qh[q]->len; i++)
            if (model_hist_get(qh[q], i) > max)
                max = model_hist_get(qh[q], i);
        if (per >= 3) {
            draw_textf(y, r->x, r->w, STYLE_LABEL, "%s over time: now %d, max %.0f", qnames[q],
                       qnow[q], max);
            draw_chart(y + 1, r->x + 2, per - 1, r->w - 2, qh[q], max > 0 ? max : 1,
                       STYLE_BAR_MID);
            y += per;
        } else {
            draw_textf(y, r->x, 16, STYLE_LABEL, "%-8s%7d ", qnames[q], qnow[q]);
            draw_sparkline(y, r->x + 16, r->w - 16, qh[q]);
            y++;
        }
    }
    if (y >= end)
        return;
    /* Its recent steals: the flows in which it is thief or victim. */
    int x = r->x;
    x += draw_text(y, x, r->w, STYLE_LABEL, "recent steals:");
    uint32_t shown = 0;
    for (uint32_t k = 0; k < v->nflows; k++) {
        const struct model_flow *f = &v->flows[k];
        if (f->thief != n->id && f->victim != n->id)
            continue;
        char buf[48];
        if (f->thief == n->id)
            snprintf(buf, sizeof buf, " %llu from %d;", (unsigned long long)f->tasks, f->victim);
        else
            snprintf(buf, sizeof buf, " %llu to %d;", (unsigned long long)f->tasks, f->thief);
        int w = r->x + r->w - x;
        if ((int)strlen(buf) > w) {
            if (++y >= end)
                return;
            x = r->x + 2;
            w = r->w - 2;
        }
        x += draw_text(y, x, w, STYLE_NORMAL, buf);
        shown++;
    }
    if (!shown)
        draw_text(y, x, r->x + r->w - x, STYLE_DIM, " none in the window");
}

void draw_pane(enum ui_pane kind, const struct rect *r, const struct model_view *v,
               const struct ui *ui)
{
    if (r->h <= 0 || r->w <= 0)
        return;
    switch (kind) {
    case PANE_UTIL: pane_util(r, v, ui); break;
    case PANE_STEALS: pane_steals(r, v, ui); break;
    case PANE_LOG: pane_log(r, v); break;
    case PANE_DETAIL: pane_detail(r, v, ui); break;
    case PANE_JOBS: pane_jobs(r, v); break;
    default: break;
    }
}
