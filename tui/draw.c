/*
 * draw — see draw.h.  This file: styles, text helpers, the header, the node table, the
 * heat map, the tab line, the status line and the help screen; the panes are in
 * draw_panes.c.
 */
#include "tui/draw_internal.h"

#include <inttypes.h>
#include <langinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool use_color;
static attr_t styles[STYLE_COUNT];

static const char *const levels_utf8[9] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
static const char *const levels_ascii[9] = {" ", ".", ".", "_", "-", "=", "+", "*", "#"};
const char *const *draw_levels = levels_ascii;
const char draw_heat[11] = ".123456789";

/* Colour pairs; the heat map's levels follow the styles. */
enum { PAIR_HEADING = 1, PAIR_TITLE, PAIR_ERROR, PAIR_WARN, PAIR_OK, PAIR_SELECTED, PAIR_KEY,
       PAIR_TAB_ACTIVE, PAIR_INPUT, PAIR_DIM, PAIR_HEAT0 };
#define HEAT_PAIRS 5

void draw_init(bool no_color)
{
    const char *codeset = nl_langinfo(CODESET);
    draw_levels = codeset && strcmp(codeset, "UTF-8") == 0 ? levels_utf8 : levels_ascii;
    use_color = !no_color && has_colors() && !getenv("NO_COLOR");
    if (use_color) {
        start_color();
        use_default_colors();
        init_pair(PAIR_HEADING, COLOR_BLACK, COLOR_GREEN);
        init_pair(PAIR_TITLE, COLOR_CYAN, -1);
        init_pair(PAIR_ERROR, COLOR_RED, -1);
        init_pair(PAIR_WARN, COLOR_YELLOW, -1);
        init_pair(PAIR_OK, COLOR_GREEN, -1);
        init_pair(PAIR_SELECTED, COLOR_BLACK, COLOR_CYAN);
        init_pair(PAIR_KEY, COLOR_BLACK, COLOR_CYAN);
        init_pair(PAIR_TAB_ACTIVE, COLOR_BLACK, COLOR_YELLOW);
        init_pair(PAIR_INPUT, COLOR_WHITE, COLOR_BLUE);
        init_pair(PAIR_DIM, COLOR_BLUE, -1);
        static const short heat[HEAT_PAIRS] = {COLOR_BLUE, COLOR_CYAN, COLOR_GREEN, COLOR_YELLOW,
                                               COLOR_RED};
        for (int i = 0; i < HEAT_PAIRS; i++)
            init_pair((short)(PAIR_HEAT0 + i), heat[i], -1);
        styles[STYLE_NORMAL] = A_NORMAL;
        styles[STYLE_TITLE] = COLOR_PAIR(PAIR_TITLE) | A_BOLD;
        styles[STYLE_LABEL] = COLOR_PAIR(PAIR_TITLE);
        styles[STYLE_HEADING] = COLOR_PAIR(PAIR_HEADING);
        styles[STYLE_HEADING_SORT] = COLOR_PAIR(PAIR_SELECTED) | A_BOLD;
        styles[STYLE_SELECTED] = COLOR_PAIR(PAIR_SELECTED);
        styles[STYLE_ERROR] = COLOR_PAIR(PAIR_ERROR) | A_BOLD;
        styles[STYLE_WARN] = COLOR_PAIR(PAIR_WARN);
        styles[STYLE_OK] = COLOR_PAIR(PAIR_OK);
        styles[STYLE_DIM] = COLOR_PAIR(PAIR_DIM);
        styles[STYLE_KEY] = COLOR_PAIR(PAIR_KEY);
        styles[STYLE_TAB] = A_NORMAL;
        styles[STYLE_TAB_ACTIVE] = COLOR_PAIR(PAIR_TAB_ACTIVE) | A_BOLD;
        styles[STYLE_BAR_LOW] = COLOR_PAIR(PAIR_OK) | A_BOLD;
        styles[STYLE_BAR_MID] = COLOR_PAIR(PAIR_WARN) | A_BOLD;
        styles[STYLE_BAR_HIGH] = COLOR_PAIR(PAIR_ERROR) | A_BOLD;
        styles[STYLE_INPUT] = COLOR_PAIR(PAIR_INPUT);
    } else {
        /* Monochrome: what colour said, attributes say. */
        styles[STYLE_NORMAL] = A_NORMAL;
        styles[STYLE_TITLE] = A_BOLD;
        styles[STYLE_LABEL] = A_NORMAL;
        styles[STYLE_HEADING] = A_REVERSE;
        styles[STYLE_HEADING_SORT] = A_REVERSE | A_BOLD | A_UNDERLINE;
        styles[STYLE_SELECTED] = A_REVERSE;
        styles[STYLE_ERROR] = A_BOLD;
        styles[STYLE_WARN] = A_BOLD;
        styles[STYLE_OK] = A_NORMAL;
        styles[STYLE_DIM] = A_DIM;
        styles[STYLE_KEY] = A_REVERSE;
        styles[STYLE_TAB] = A_NORMAL;
        styles[STYLE_TAB_ACTIVE] = A_REVERSE | A_BOLD;
        styles[STYLE_BAR_LOW] = A_BOLD;
        styles[STYLE_BAR_MID] = A_BOLD;
        styles[STYLE_BAR_HIGH] = A_BOLD;
        styles[STYLE_INPUT] = A_UNDERLINE;
    }
}

bool draw_has_color(void)
{
    return use_color;
}

attr_t draw_attr(enum draw_style s)
{
    return (unsigned)s < STYLE_COUNT ? styles[s] : A_NORMAL;
}

static attr_t heat_attr(double util)
{
    if (!use_color)
        return util >= 0.9 ? A_BOLD : A_NORMAL;
    int level = (int)(util * HEAT_PAIRS);
    if (level >= HEAT_PAIRS)
        level = HEAT_PAIRS - 1;
    if (level < 0)
        level = 0;
    return COLOR_PAIR(PAIR_HEAT0 + level) | (util >= 0.9 ? A_BOLD : 0);
}

int draw_text(int y, int x, int w, enum draw_style s, const char *text)
{
    if (w <= 0 || y < 0 || x < 0 || y >= LINES || x >= COLS)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    /* Text from files (workload ids, policy names) is shown byte by byte; anything that
     * is not printable ASCII becomes '?', so that no input can move the cursor or
     * split a multibyte character at the clip. */
    char buf[512];
    int n = 0;
    for (const char *p = text; *p && n < w && n < (int)sizeof buf - 1; p++) {
        unsigned char c = (unsigned char)*p;
        buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[n] = '\0';
    attrset(draw_attr(s));
    mvaddstr(y, x, buf);
    attrset(A_NORMAL);
    return n;
}

int draw_textf(int y, int x, int w, enum draw_style s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return draw_text(y, x, w, s, buf);
}

/* Fills w cells at (y, x) with spaces in style s (bars, selected rows, headings). */
static void fill(int y, int x, int w, enum draw_style s)
{
    if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
        return;
    if (x + w > COLS)
        w = COLS - x;
    attrset(draw_attr(s));
    mvhline(y, x, ' ', w);
    attrset(A_NORMAL);
}

void draw_fmt_count(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (fabs(v) < 100000)
        snprintf(buf, len, "%.0f", v);
    else if (fabs(v) < 1e6)
        snprintf(buf, len, "%.0fk", v / 1e3);
    else if (fabs(v) < 1e9)
        snprintf(buf, len, "%.1fM", v / 1e6);
    else
        snprintf(buf, len, "%.1fG", v / 1e9);
}

void draw_fmt_bytes(char *buf, size_t len, double b)
{
    static const char units[] = "BKMGTP";
    int u = 0;
    while (b >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f", b);
    else
        snprintf(buf, len, b < 10 ? "%.1f%c" : "%.0f%c", b, units[u]);
}

void draw_fmt_duration(char *buf, size_t len, double s)
{
    if (!(s >= 0) || !isfinite(s)) {
        snprintf(buf, len, "-");
        return;
    }
    if (s < 60) {
        snprintf(buf, len, "%.1fs", s);
        return;
    }
    long t = (long)s;
    if (t < 3600)
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

const char *draw_level_glyph(double v)
{
    if (!(v > 0))
        return draw_levels[0];
    int i = (int)lround(v * 8);
    if (i < 1)
        i = 1;  /* anything above zero shows */
    return draw_levels[i > 8 ? 8 : i];
}

const struct model_node *draw_selected_node(const struct model_view *v, const struct ui *ui)
{
    for (uint32_t i = 0; i < v->nnodes; i++)
        if (v->nodes[i].id == ui->selected)
            return &v->nodes[i];
    return NULL;
}

/* ---- header -------------------------------------------------------------------------- */

static void draw_progress(int y, int w, const struct model_view *v)
{
    uint64_t ended = v->done + v->failed + v->cancelled;
    char tail[160], total[32] = "?", pct[16] = "", cancelled[48] = "";
    if (v->total) {
        snprintf(total, sizeof total, "%llu", (unsigned long long)v->total);
        snprintf(pct, sizeof pct, " %5.1f%%", 100.0 * (double)ended / (double)v->total);
    }
    if (v->cancelled)
        snprintf(cancelled, sizeof cancelled, "  cancelled %llu", (unsigned long long)v->cancelled);
    snprintf(tail, sizeof tail, " %llu/%s%s  run %llu  fail %llu%s", (unsigned long long)v->done,
             total, pct, (unsigned long long)v->running, (unsigned long long)v->failed,
             cancelled);
    int x = draw_text(y, 0, w, STYLE_LABEL, "Tasks ");
    int bar = w - x - 2 - (int)strlen(tail);
    if (bar < 8) {
        draw_text(y, x, w - x, STYLE_NORMAL, tail + 1);
        return;
    }
    double frac = v->total ? (double)ended / (double)v->total : 0;
    if (frac > 1)
        frac = 1;
    int full = (int)(frac * bar + 0.5);
    draw_text(y, x, 1, STYLE_NORMAL, "[");
    attrset(draw_attr(STYLE_BAR_LOW));
    mvhline(y, x + 1, '#', full);
    attrset(draw_attr(STYLE_DIM));
    mvhline(y, x + 1 + full, '.', bar - full);
    attrset(A_NORMAL);
    draw_text(y, x + 1 + bar, 1, STYLE_NORMAL, "]");
    draw_text(y, x + 2 + bar, w - x - 2 - bar, STYLE_NORMAL, tail);
}

/* A header line is a row of segments, each dropped whole when it does not fit (the
 * first always stays), and a tag at the right end: at 80 columns the line says less, in
 * full words, rather than the same with its end cut off. */
struct segment {
    char text[160];
    enum draw_style style;
};

static void draw_segments(int y, int w, const struct segment *seg, int n, const char *right,
                          enum draw_style rs)
{
    int rw = right && right[0] ? (int)strlen(right) : 0;
    int avail = w - (rw ? rw + 1 : 0), x = 0;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(seg[i].text);
        if (i > 0 && x + len > avail)
            continue;
        x += draw_text(y, x, avail - x, seg[i].style, seg[i].text);
    }
    if (rw && rw <= w)
        draw_text(y, w - rw, rw, rs, right);
}

const char *draw_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static void draw_header(const struct layout *l, const struct model_view *v, const struct ui *ui)
{
    int w = l->cols;
    char right[96] = "";
    enum draw_style rs = STYLE_OK;
    if (ui->mode == KEYS_REPLAY) {
        char at[32], end[32];
        draw_fmt_duration(at, sizeof at, (double)v->now_ns / 1e9);
        draw_fmt_duration(end, sizeof end, (double)ui->replay_last_ns / 1e9);
        snprintf(right, sizeof right, "%s x%g  %s / %s", ui->playing ? "PLAY" : "PAUSED",
                 ui->speed, at, end);
        rs = ui->playing ? STYLE_OK : STYLE_WARN;
    } else if (!ui->have_cluster) {
        snprintf(right, sizeof right, "no cluster");
        rs = STYLE_WARN;
    } else if (!ui->connected) {
        snprintf(right, sizeof right, "collector unreachable");
        rs = STYLE_ERROR;
    } else if (ui->finished) {
        snprintf(right, sizeof right, "FINISHED%s", ui->launched ? " (K tears down)" : "");
    } else {
        snprintf(right, sizeof right, "collector up");
    }
    struct segment top[6];
    int n = 0;
    snprintf(top[n].text, sizeof top[n].text, "jackdaw %s",
             ui->mode == KEYS_REPLAY ? "replay" : "live");
    top[n++].style = STYLE_TITLE;
    /* The job filter in force goes first: every figure below is of it. */
    if (v->job >= 0) {
        uint32_t at = 0;
        for (uint32_t i = 0; i < v->njobs; i++)
            if (v->selected == &v->jobs[i])
                at = i + 1;
        if (at)
            snprintf(top[n].text, sizeof top[n].text, "  [job %u of %u: %" PRId64 " %s]", at,
                     v->njobs, v->job, v->selected->state);
        else
            snprintf(top[n].text, sizeof top[n].text, "  [job %" PRId64 ": not listed]", v->job);
        top[n++].style = STYLE_WARN;
    } else if (v->njobs > 1) {
        snprintf(top[n].text, sizeof top[n].text, "  [all %u jobs]", v->njobs);
        top[n++].style = STYLE_NORMAL;
    }
    /* In order of what goes first when the line is short: the policy, then the
     * workload, then the run id. */
    snprintf(top[n].text, sizeof top[n].text, "  placement %s", v->policy[0] ? v->policy : "-");
    top[n++].style = STYLE_NORMAL;
    if (ui->steal[0]) {
        snprintf(top[n].text, sizeof top[n].text, "  steal %s", ui->steal);
        top[n++].style = STYLE_NORMAL;
    }
    if (v->workload[0]) {
        snprintf(top[n].text, sizeof top[n].text, "  %s", draw_base_name(v->workload));
        top[n++].style = STYLE_NORMAL;
    }
    if (v->run_id[0]) {
        snprintf(top[n].text, sizeof top[n].text, "  run %s", v->run_id);
        top[n++].style = STYLE_NORMAL;
    }
    draw_segments(0, w, top, n, right, rs);
    draw_progress(1, w, v);
    if (l->header.h < 3)
        return;

    char now[32], avg[32], el[32], eta[32];
    draw_fmt_count(now, sizeof now, v->tput_now);
    draw_fmt_count(avg, sizeof avg, v->tput_avg);
    draw_fmt_duration(el, sizeof el, v->elapsed_s);
    if (ui->finished)
        snprintf(eta, sizeof eta, "done");
    else
        draw_fmt_duration(eta, sizeof eta, v->eta_s);
    uint32_t up = 0;
    for (uint32_t i = 0; i < v->nnodes; i++)
        up += v->nodes[i].connected && !v->nodes[i].dead;
    struct segment line[7];
    n = 0;
    snprintf(line[n].text, sizeof line[n].text, "Rate %s/s now %s/s avg", now, avg);
    line[n++].style = STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  Util %.1f%%", 100 * v->efficiency);
    line[n++].style = STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  Elapsed %s", el);
    line[n++].style = STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  ETA %s", eta);
    line[n++].style = STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  Nodes %u/%u up", up, v->nnodes);
    line[n++].style = up < v->nnodes ? STYLE_WARN : STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  Slots %u", v->slots);
    line[n++].style = STYLE_NORMAL;
    snprintf(line[n].text, sizeof line[n].text, "  Stolen %llu",
             (unsigned long long)v->steals_total);
    line[n++].style = STYLE_NORMAL;
    /* Failures and drops share the right end, the most urgent first. */
    char alarm[96] = "";
    int at = 0;
    if (v->dead)
        at += snprintf(alarm + at, sizeof alarm - (size_t)at, "%u DOWN, %llu resubmitted",
                       v->dead, (unsigned long long)v->resubmitted);
    if (v->recomputed && at >= 0 && (size_t)at < sizeof alarm)
        at += snprintf(alarm + at, sizeof alarm - (size_t)at, "%s%llu recomputed",
                       at ? ", " : "", (unsigned long long)v->recomputed);
    if (v->dropped && at >= 0 && (size_t)at < sizeof alarm)
        snprintf(alarm + at, sizeof alarm - (size_t)at, "%sDROPPED %llu", at ? "  " : "",
                 (unsigned long long)v->dropped);
    draw_segments(2, w, line, n, alarm, STYLE_ERROR);
}

/* ---- node table ------------------------------------------------------------------------ */

static void draw_bar(int y, int x, int w, const struct model_node *n, bool selected,
                     bool of_job)
{
    if (w < 3)
        return;
    int inner = w - 2;
    char text[32];
    enum draw_style ts = selected ? STYLE_SELECTED : STYLE_NORMAL;
    draw_text(y, x, 1, ts, "[");
    draw_text(y, x + w - 1, 1, ts, "]");
    if (!n->seen) {
        draw_text(y, x + 1, inner, STYLE_DIM, "waiting");
        return;
    }
    if (n->dead) {
        draw_text(y, x + 1, inner, STYLE_ERROR, "DOWN"); /* declared dead by a peer */
        return;
    }
    if (!n->connected) {
        draw_text(y, x + 1, inner, STYLE_WARN, "off"); /* its stream closed: maybe back */
        return;
    }
    /* With a job selected, the slots busy with its tasks. */
    int busy = of_job ? (int)n->job_running : n->s.busy;
    double util = of_job ? n->job_util : n->util;
    snprintf(text, sizeof text, "%d/%u", busy, n->slots);
    int tl = (int)strlen(text);
    double u = util < 0 ? 0 : util > 1 ? 1 : util;
    int full = (int)(u * inner + 0.5);
    if (u > 0 && full == 0)
        full = 1;
    enum draw_style bs = u >= 0.9 ? STYLE_BAR_LOW : u >= 0.4 ? STYLE_BAR_MID : STYLE_BAR_HIGH;
    /* The count sits at the right end of the bar, as htop's meters do. */
    for (int i = 0; i < inner; i++) {
        int t = i - (inner - tl);
        char ch[2] = {t >= 0 ? text[t] : i < full ? '|' : ' ', '\0'};
        draw_text(y, x + 1 + i, 1, t >= 0 ? ts : i < full ? bs : ts, ch);
    }
}

static void cell(const struct layout *l, int y, enum table_col c, const char *text,
                 enum draw_style s)
{
    if ((unsigned)c >= TCOL_COUNT)
        return;
    int w = l->col_w[c];
    int len = (int)strlen(text);
    int pad = c == TCOL_UTIL ? 0 : w - len;  /* numbers right-aligned */
    if (pad < 0)
        pad = 0;
    draw_text(y, l->table.x + l->col_x[c] + pad, w - pad, s, text);
}

static void draw_row(const struct layout *l, int y, const struct model_node *n, bool selected,
                     bool of_job)
{
    enum draw_style s = selected ? STYLE_SELECTED : STYLE_NORMAL;
    if (selected)
        fill(y, l->table.x, l->table.w, STYLE_SELECTED);
    const struct trace_sample *sm = &n->s;
    char buf[32];
    for (int i = 0; i < l->ncols; i++) {
        enum table_col c = l->col[i];
        buf[0] = '\0';
        switch (c) {
        case TCOL_NODE: snprintf(buf, sizeof buf, "%d", n->id); break;
        case TCOL_UTIL:
            draw_bar(y, l->table.x + l->col_x[c], l->col_w[c], n, selected, of_job);
            continue;
        case TCOL_SLOTS: snprintf(buf, sizeof buf, "%u", n->slots); break;
        case TCOL_SPEED: snprintf(buf, sizeof buf, "%.2f", n->speed); break;
        case TCOL_WAITQ: draw_fmt_count(buf, sizeof buf, sm->waitq); break;
        case TCOL_LREADYQ: draw_fmt_count(buf, sizeof buf, sm->lreadyq); break;
        case TCOL_SREADYQ: draw_fmt_count(buf, sizeof buf, sm->sreadyq); break;
        case TCOL_COMPLETEQ: draw_fmt_count(buf, sizeof buf, sm->completeq); break;
        case TCOL_DONE:
            draw_fmt_count(buf, sizeof buf, (double)(of_job ? n->job_done : n->done));
            break;
        case TCOL_STEALS_IN:
            draw_fmt_count(buf, sizeof buf, (double)model_node_stolen_in(n));
            break;
        case TCOL_STEALS_OUT:
            draw_fmt_count(buf, sizeof buf, (double)model_node_stolen_out(n));
            break;
        case TCOL_STEALS_FAILED: draw_fmt_count(buf, sizeof buf, (double)sm->steal_fails); break;
        case TCOL_BYTES_IN: draw_fmt_bytes(buf, sizeof buf, (double)sm->fetch_bytes); break;
        case TCOL_BYTES_OUT: draw_fmt_bytes(buf, sizeof buf, (double)sm->bytes_out); break;
        case TCOL_CACHE:
            if (n->cache_hit_rate < 0)
                snprintf(buf, sizeof buf, "-");
            else
                snprintf(buf, sizeof buf, "%.0f", 100 * n->cache_hit_rate);
            break;
        case TCOL_COUNT: continue;
        }
        cell(l, y, c, buf, s);
    }
}

static void draw_table(const struct layout *l, const struct model_view *v, const uint32_t *rows,
                       uint32_t nrows, const struct ui *ui)
{
    if (l->table.h < 1)
        return;
    int y = l->table.y;
    fill(y, l->table.x, l->table.w, STYLE_HEADING);
    enum table_col sorted = layout_col_of_sort(ui->sort);
    for (int i = 0; i < l->ncols; i++) {
        enum table_col c = l->col[i];
        const struct table_col_info *info = layout_col_info(c);
        enum draw_style s = c == sorted ? STYLE_HEADING_SORT : STYLE_HEADING;
        int w = l->col_w[c];
        if (c == sorted)
            fill(y, l->table.x + l->col_x[c], w, s);
        cell(l, y, c, info->title, s);
    }
    if (nrows == 0) {
        const char *why = !model_filter_understood(ui->filter)
                              ? "filter not understood: try 'node 3', 'idle', 'busy', 'down', "
                                "'dead' (Esc clears it)"
                          : ui->filter[0] ? "no node matches the filter (Esc clears it)"
                          : ui->mode == KEYS_REPLAY ? "no node sample yet at this time"
                                                    : "waiting for the nodes' first samples";
        draw_text(y + 1, 1, l->table.w - 1, STYLE_DIM, why);
        return;
    }
    for (int i = 0; i < l->table_rows; i++) {
        uint32_t r = ui->top + (uint32_t)i;
        if (r >= nrows)
            break;
        const struct model_node *n = &v->nodes[rows[r]];
        draw_row(l, y + 1 + i, n, n->id == ui->selected, v->job >= 0);
    }
}

/* ---- heat map -------------------------------------------------------------------------- */

static void draw_map(const struct layout *l, const struct model_view *v, const struct ui *ui)
{
    if (!l->map_shown)
        return;
    uint32_t per = l->nodes_per_cell ? l->nodes_per_cell : 1;
    char title[160];
    if (per > 1)
        snprintf(title, sizeof title, "Heat map, %u nodes, %u a cell (mean): .=idle 1-9=tenths "
                 "busy @=full x=down", v->nnodes, per);
    else
        snprintf(title, sizeof title, "Heat map, %u nodes: .=idle 1-9=tenths busy @=full "
                 "x=down ?=no sample", v->nnodes);
    draw_text(l->map.y, 0, l->map.w, STYLE_LABEL, title);
    uint32_t cells = (v->nnodes + per - 1) / per;
    for (uint32_t c = 0; c < cells; c++) {
        int y = l->map.y + 1 + (int)(c / l->map_per_row);
        int x = 1 + (int)(c % l->map_per_row);
        if (y >= l->map.y + l->map.h)
            break;
        double sum = 0;
        uint32_t n = 0, down = 0, unseen = 0;
        bool selected = false;
        for (uint32_t k = c * per; k < (c + 1) * per && k < v->nnodes; k++) {
            const struct model_node *nd = &v->nodes[k];
            n++;
            selected |= nd->id == ui->selected;
            if (!nd->seen)
                unseen++;
            else if (!nd->connected || nd->dead)
                down++;
            else
                sum += nd->util < 0 ? 0 : nd->util > 1 ? 1 : nd->util;
        }
        char ch[2] = {'?', '\0'};
        double u = n > down + unseen ? sum / (n - down - unseen) : 0;
        if (down && down + unseen == n)
            ch[0] = 'x';
        else if (unseen < n)
            ch[0] = u >= 0.95 ? '@' : draw_heat[(int)(u * 10) > 9 ? 9 : (int)(u * 10)];
        attr_t a = selected ? A_REVERSE : ch[0] == 'x' ? draw_attr(STYLE_ERROR) : heat_attr(u);
        attrset(a);
        mvaddstr(y, x, ch);
        attrset(A_NORMAL);
    }
}

/* ---- tabs, status, help ---------------------------------------------------------------- */

static void draw_tabs(const struct layout *l, const struct model_view *v, uint32_t nrows,
                      const struct ui *ui)
{
    if (l->tabs.h < 1)
        return;
    int y = l->tabs.y;
    for (int p = 0; p < PANE_COUNT; p++) {
        int x, w;
        layout_tab_span((enum ui_pane)p, &x, &w);
        bool on = p == l->pane_kind || p == l->side_kind;
        draw_textf(y, x, w, on ? STYLE_TAB_ACTIVE : STYLE_TAB, " %d %s ", p + 1,
                   layout_pane_name((enum ui_pane)p));
    }
    char right[160];
    const struct table_col_info *sc = layout_col_info(layout_col_of_sort(ui->sort));
    int n = snprintf(right, sizeof right, "sort %s%s", sc->title, ui->desc ? " desc" : "");
    if (ui->filter[0])
        n += snprintf(right + n, sizeof right - (size_t)n, "  filter '%s' %u/%u", ui->filter,
                      nrows, v->nnodes);
    if (ui->map != MAP_AUTO)
        snprintf(right + n, sizeof right - (size_t)n, "  map %s", layout_map_mode_name(ui->map));
    int rw = (int)strlen(right);
    int tx, tw;
    layout_tab_span(PANE_COUNT, &tx, &tw);
    if (l->cols - rw > tx + 1)
        draw_text(y, l->cols - rw, rw, STYLE_LABEL, right);
}

static const struct {
    unsigned modes;
    const char *key, *label;
} hints[] = {
    {KEYS_VIEW, "F1", "Help"},    {KEYS_VIEW, "/", "Filter"},  {KEYS_VIEW, "<>", "Sort"},
    {KEYS_VIEW, "Tab", "Pane"},   {KEYS_VIEW, "u", "Job"},     {KEYS_REPLAY, "Spc", "Play"}, {KEYS_REPLAY, "+-", "Speed"},
    {KEYS_REPLAY, ".", "Step"},   {KEYS_REPLAY, "g", "Go to"},  {KEYS_REPLAY, "[]", "Ends"},
    {KEYS_LIVE, "C", "Cancel"},   {KEYS_LIVE, "K", "Teardown"}, {KEYS_VIEW, "q", "Quit"},
    {KEYS_FORM, "Up/Dn", "Field"}, {KEYS_FORM, "Lt/Rt", "Choice"}, {KEYS_FORM, "Enter", "Launch"},
    {KEYS_FORM, "F1", "Help"},    {KEYS_FORM, "Esc", "Leave"},
};

void draw_status(const struct ui *ui, int row, int cols)
{
    if (row < 0)
        return;
    move(row, 0);
    clrtoeol();
    if (ui->prompt) {
        int x = draw_text(row, 0, cols, STYLE_TITLE, ui->prompt);
        int n = draw_text(row, x, cols - x - 1, STYLE_INPUT, ui->input);
        fill(row, x + n, 1, STYLE_INPUT);
        move(row, x + n);
        return;
    }
    if (ui->message[0]) {
        draw_text(row, 0, cols, ui->message_is_error ? STYLE_ERROR : STYLE_WARN, ui->message);
        return;
    }
    int x = 0;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0] && x < cols; i++) {
        if (!(hints[i].modes & ui->mode))
            continue;
        x += draw_text(row, x, cols - x, STYLE_KEY, hints[i].key);
        x += draw_text(row, x, cols - x, STYLE_NORMAL, hints[i].label);
        x += draw_text(row, x, cols - x, STYLE_NORMAL, " ");
    }
}

uint32_t draw_help_lines(unsigned mode)
{
    struct help_line lines[ACT_COUNT];
    return (uint32_t)keys_help(mode, lines, ACT_COUNT);
}

void draw_chooser(const struct ui *ui, int rows, int cols)
{
    fill(0, 0, cols, STYLE_HEADING);
    draw_text(0, 1, cols - 1, STYLE_HEADING, "jackdaw console: columns of the node table");
    for (int c = 0; c < TCOL_COUNT && 2 + c < rows - 2; c++) {
        bool fixed = c <= TCOL_UTIL, on = fixed || !(ui->hidden_cols & (1u << c));
        const struct table_col_info *ci = layout_col_info((enum table_col)c);
        draw_textf(2 + c, 2, cols - 3, c == ui->chooser_at ? STYLE_SELECTED : STYLE_NORMAL,
                   "[%c] %-8s%s", on ? 'x' : ' ', ci->title,
                   fixed ? "  (always shown)" : "");
    }
    fill(rows - 1, 0, cols, STYLE_KEY);
    draw_text(rows - 1, 1, cols - 1, STYLE_KEY,
              "Up/Down: a column  Space/Enter: show or hide it  Esc/F2/q: back to the view "
              "(a narrow screen still drops columns)");
}

void draw_page(const struct ui *ui, int rows, int cols)
{
    fill(0, 0, cols, STYLE_HEADING);
    if (ui->page_filter[0])
        draw_textf(0, 1, cols - 1, STYLE_HEADING, "%s   (lines with '%s')", ui->page_title,
                   ui->page_filter);
    else
        draw_text(0, 1, cols - 1, STYLE_HEADING, ui->page_title);
    int y = 2;
    uint32_t shown = 0, last = 0;
    /* page_top counts the lines that pass the filter. */
    for (uint32_t i = 0; i < ui->npage; i++) {
        if (ui->page_filter[0] && !strstr(ui->page[i], ui->page_filter))
            continue;
        if (shown++ < ui->page_top || y >= rows - 2)
            continue;
        draw_text(y++, 1, cols - 2, STYLE_NORMAL, ui->page[i]);
        last = shown;
    }
    fill(rows - 1, 0, cols, STYLE_KEY);
    draw_textf(rows - 1, 1, cols - 1, STYLE_KEY,
               "lines %u-%u of %u: Up/Down/PgUp/PgDn scroll, / filters, any other key closes",
               shown ? ui->page_top + 1 : 0, last, shown);
}

void draw_help(const struct ui *ui, int rows, int cols)
{
    struct help_line lines[ACT_COUNT];
    size_t n = keys_help(ui->mode, lines, ACT_COUNT);
    const char *what = ui->mode == KEYS_REPLAY ? "replay"
                       : ui->mode == KEYS_FORM ? "launch form" : "live view";
    fill(0, 0, cols, STYLE_HEADING);
    draw_textf(0, 1, cols - 1, STYLE_HEADING, "jackdaw console: keys of the %s", what);
    int y = 2;
    size_t last = ui->help_top;
    for (size_t i = ui->help_top; i < n && y < rows - 2; i++, y++, last++) {
        draw_text(y, 2, 16, STYLE_TITLE, lines[i].keys);
        draw_text(y, 20, cols - 21, STYLE_NORMAL, lines[i].help ? lines[i].help : "");
    }
    if (ui->mode == KEYS_FORM && y < rows - 2)
        draw_text(y++, 2, cols - 3, STYLE_DIM,
                  "(type in a text field to edit it; mouse clicks select a field)");
    else if (y < rows - 2)
        draw_text(y++, 2, cols - 3, STYLE_DIM,
                  "(mouse: click a row or a map cell to select a node, a heading to sort, a tab)");
    fill(rows - 1, 0, cols, STYLE_KEY);
    draw_textf(rows - 1, 1, cols - 1, STYLE_KEY,
               "keys %u-%zu of %zu: Up/Down/PgUp/PgDn scroll, any other key closes this help",
               ui->help_top + 1, last, n);
}

/* ---- the view -------------------------------------------------------------------------- */

void draw_view(const struct layout *l, const struct model_view *v, const uint32_t *rows,
               uint32_t nrows, const struct ui *ui)
{
    if (l->tiny) {
        draw_textf(0, 0, l->cols, STYLE_ERROR, "terminal too small (%dx%d); need %dx%d",
                   l->cols, l->rows, LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
        return;
    }
    draw_header(l, v, ui);
    draw_map(l, v, ui);
    draw_table(l, v, rows, nrows, ui);
    draw_tabs(l, v, nrows, ui);
    if (l->pane.h > 0)
        draw_pane(l->pane_kind, &l->pane, v, ui);
    if (l->side.h > 0) {
        /* A thin rule between the two panes. */
        attrset(draw_attr(STYLE_DIM));
        mvvline(l->side.y, l->side.x - 1, '|', l->side.h);
        attrset(A_NORMAL);
        draw_pane(l->side_kind, &l->side, v, ui);
    }
    draw_status(ui, l->status.y, l->cols);
}
