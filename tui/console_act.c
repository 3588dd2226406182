/*
 * console_act — what each key does in the console (see console.h): the table, the panes,
 * the replay clock, the run (cancel, teardown, launch), the prompts of the status line,
 * the help screen, the form and the mouse.  Actions change the ui state or the source and
 * mark the screen dirty; drawing happens once per loop pass, in console.c.
 */
#include "tui/console_internal.h"

#include <curses.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/xalloc.h"

#define KEY_ESC 27
#define STEP_NS 5000000000LL

static const double speeds[] = {0.25, 0.5, 1, 2, 4, 8, 16, 32, 64};
#define NSPEEDS (sizeof speeds / sizeof speeds[0])

double console_speed_step(double speed, int dir)
{
    size_t i = 0;
    while (i + 1 < NSPEEDS && speeds[i] < speed - 1e-9)
        i++;
    if (dir > 0 && i + 1 < NSPEEDS)
        i++;
    else if (dir < 0 && i > 0)
        i--;
    return speeds[i];
}

void console_message(struct console *c, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->ui.message, sizeof c->ui.message, fmt, ap);
    va_end(ap);
    c->ui.message_is_error = error;
    c->dirty = true;
}

/* ---- the table ------------------------------------------------------------------------- */

static int32_t selected_index(const struct console *c)
{
    const struct model_view *v = model_view(c->m);
    for (uint32_t i = 0; i < c->nrows; i++)
        if (v->nodes[c->rows[i]].id == c->ui.selected)
            return (int32_t)i;
    return -1;
}

void console_rows(struct console *c)
{
    const struct model_view *v = model_view(c->m);
    if (v->nnodes > c->rows_cap) {
        c->rows_cap = v->nnodes;
        c->rows = xrealloc(c->rows, c->rows_cap * sizeof *c->rows);
    }
    c->nrows = v->nnodes ? model_rows(c->m, c->ui.sort, c->ui.desc, c->ui.filter, c->rows,
                                      c->rows_cap)
                         : 0;
    if (c->nrows == 0)
        return;
    int32_t at = selected_index(c);
    if (at < 0) {
        at = 0;
        c->ui.selected = v->nodes[c->rows[0]].id;
    }
    uint32_t page = c->lay.table_rows > 0 ? (uint32_t)c->lay.table_rows : 1;
    if ((uint32_t)at < c->ui.top)
        c->ui.top = (uint32_t)at;
    if ((uint32_t)at >= c->ui.top + page)
        c->ui.top = (uint32_t)at - page + 1;
    if (c->ui.top + page > c->nrows)
        c->ui.top = c->nrows > page ? c->nrows - page : 0;
}

static void select_index(struct console *c, int64_t at)
{
    if (c->nrows == 0)
        return;
    if (at < 0)
        at = 0;
    if (at >= (int64_t)c->nrows)
        at = c->nrows - 1;
    c->ui.selected = model_view(c->m)->nodes[c->rows[at]].id;
    console_rows(c);
}

static void move_selection(struct console *c, int64_t delta)
{
    int32_t at = selected_index(c);
    select_index(c, (at < 0 ? 0 : at) + delta);
}

/* ---- replay ---------------------------------------------------------------------------- */

void console_replay_seek(struct console *c, int64_t t)
{
    if (!c->r)
        return;
    int64_t first = replay_first_ns(c->r), last = replay_last_ns(c->r);
    if (t < first)
        t = first;
    if (t > last)
        t = last;
    c->replay_t = t;
    c->clock_at = clock_mono_ns();
    replay_seek(c->r, c->m, t);
    if (t >= last && c->ui.playing) {
        c->ui.playing = false;
        console_message(c, false, "end of the trace (Space plays it again, [ goes to the start)");
    }
    console_rows(c);
    c->dirty = true;
}

static void replay_action(struct console *c, enum action a)
{
    switch (a) {
    case ACT_PLAY:
        if (!c->ui.playing && c->replay_t >= replay_last_ns(c->r))
            console_replay_seek(c, replay_first_ns(c->r));
        c->ui.playing = !c->ui.playing;
        c->clock_at = clock_mono_ns();
        break;
    case ACT_FASTER:
    case ACT_SLOWER:
        c->ui.speed = console_speed_step(c->ui.speed, a == ACT_FASTER ? 1 : -1);
        break;
    case ACT_STEP:
        c->ui.playing = false;
        console_replay_seek(c, replay_next_ns(c->r, c->replay_t));
        break;
    case ACT_SEEK:
        c->ask = ASK_SEEK;
        c->ui.prompt = "Go to (seconds, or +S / -S from now): ";
        c->ui.input[0] = '\0';
        break;
    case ACT_BACK: console_replay_seek(c, c->replay_t - STEP_NS); break;
    case ACT_FORWARD: console_replay_seek(c, c->replay_t + STEP_NS); break;
    case ACT_START: console_replay_seek(c, replay_first_ns(c->r)); break;
    case ACT_END: console_replay_seek(c, replay_last_ns(c->r)); break;
    default: break;
    }
    c->dirty = true;
}

/* ---- the run --------------------------------------------------------------------------- */

void console_request_quit(struct console *c)
{
    if (c->live && c->s.launched) {
        c->ask = ASK_QUIT;
        c->ui.prompt = "Stop the cluster this console started?  y: stop it and quit   "
                       "d: quit, leave it running   n: stay ";
        c->ui.input[0] = '\0';
        c->dirty = true;
        return;
    }
    c->quit = true;
}

void console_teardown(struct console *c, bool quitting)
{
    if (!c->s.attached)
        return;
    console_notice(c, "tearing the cluster down (daemons, then the collector)...");
    char *cause = NULL;
    uint32_t nodes = c->s.cl.count;
    int rc = session_teardown(&c->s, &cause);
    console_track_pids(c);
    c->ui.have_cluster = false;
    c->ui.launched = false;
    c->ui.connected = false;
    if (rc < 0) {
        console_message(c, true, "teardown: %s", cause ? cause : strerror(-rc));
        if (quitting)
            c->exit_code = 4;
    } else if (!quitting) {
        console_message(c, false, "cluster of %u nodes stopped; L opens the launch form", nodes);
    }
    free(cause);
}

/*
 * W: the job's report as HTML, by `jackdaw report` (this binary) on the trace the console
 * shows, written beside it: REPORT-JOB.html live (the job this console launched, else
 * the trace's latest), TRACE.html in replay.  Waited for with a notice on screen: a report
 * takes a second or two, and a console that went on meanwhile would draw over its
 * message.
 */
static void write_report(struct console *c)
{
    const char *trace = c->live ? c->s.trace_path : c->o->replay_path;
    if (!trace) {
        console_message(c, true, "no trace to report on: the cluster has no collector");
        return;
    }
    char *out, jobtext[16] = "";
    const char *dot = strrchr(trace, '.');
    size_t stem = dot && !strchr(dot, '/') ? (size_t)(dot - trace) : strlen(trace);
    if (c->live && c->s.job) {
        snprintf(jobtext, sizeof jobtext, "%u", c->s.job);
        out = xasprintf("%.*s-job%u.html", (int)stem, trace, c->s.job);
    } else {
        out = xasprintf("%.*s.html", (int)stem, trace);
    }
    console_notice(c, "writing the report...");
    char *argv[] = {(char *)"jackdaw", (char *)"report", (char *)trace, (char *)"-o", out,
                    (char *)"--format", (char *)"html", jobtext[0] ? (char *)"--job" : NULL,
                    jobtext, NULL};
    char *why = NULL;
    int rc = console_run_tool(argv, NULL, &why);
    if (rc == 0)
        console_message(c, false, "report written to %s", out);
    else
        console_message(c, true, "report of %s failed: %s", trace, why ? why : "?");
    free(why);
    free(out);
}

void console_page_close(struct console *c)
{
    c->ui.page_filter[0] = '\0';
    for (uint32_t i = 0; i < c->ui.npage; i++)
        free(c->ui.page[i]);
    free(c->ui.page);
    c->ui.page = NULL;
    c->ui.npage = c->ui.page_top = 0;
}

/* Opens a page of `text`'s lines (taken) under `title`. */
static void page_open(struct console *c, const char *title, char *text)
{
    console_page_close(c);
    snprintf(c->ui.page_title, sizeof c->ui.page_title, "%s", title);
    size_t cap = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        c->ui.page = xgrow(c->ui.page, &cap, c->ui.npage + 1, sizeof *c->ui.page);
        c->ui.page[c->ui.npage++] = xstrdup(line);
    }
    if (!c->ui.npage) {
        c->ui.page = xgrow(c->ui.page, &cap, 1, sizeof *c->ui.page);
        c->ui.page[c->ui.npage++] = xstrdup("(nothing)");
    }
    free(text);
}

/* The trace the task commands read: the replayed file, or the cluster's (they find its
 * collector trace through the cluster file). */
static int trace_args(struct console *c, char **argv, int at)
{
    if (!c->live) {
        argv[at++] = (char *)"--trace";
        argv[at++] = (char *)c->o->replay_path;
    } else if (c->s.cluster_path) {
        argv[at++] = (char *)"--cluster";
        argv[at++] = (char *)c->s.cluster_path;
    }
    argv[at] = NULL;
    return at;
}

/* T: one task's history, as `jackdaw task ID` gives it (in replay, from the whole
 * trace, not only up to the replay's clock). */
static void task_lookup(struct console *c, const char *id)
{
    char *argv[8] = {(char *)"jackdaw", (char *)"task", (char *)id};
    trace_args(c, argv, 3);
    char *out = NULL, *why = NULL;
    console_notice(c, "looking the task up...");
    if (console_run_tool(argv, &out, &why) == 0) {
        char title[160];
        snprintf(title, sizeof title, "task %s%s", id, c->live ? "" : " (the whole trace)");
        page_open(c, title, out);
    } else {
        console_message(c, true, "task %s: %s", id, why ? why : "not found");
        free(out);
    }
    free(why);
}

/* t: the selected node's tasks that are running or queued there (jackdaw tasks). */
static void node_tasks(struct console *c)
{
    if (c->ui.selected < 0) {
        console_message(c, true, "no node selected");
        return;
    }
    char node[16];
    snprintf(node, sizeof node, "%d", (int)c->ui.selected);
    struct wbuf all;
    wbuf_init(&all);
    static const char *const states[] = {"running", "queued"};
    console_notice(c, "listing the node's tasks...");
    for (int k = 0; k < 2; k++) {
        char *argv[10] = {(char *)"jackdaw", (char *)"tasks", (char *)"--node", node,
                          (char *)"--state", (char *)states[k]};
        trace_args(c, argv, 6);
        char *out = NULL, *why = NULL;
        if (console_run_tool(argv, &out, &why) == 0 && out) {
            /* the header line once */
            const char *body = out;
            if (k > 0 && all.len && (body = strchr(out, '\n')) != NULL)
                body++;
            wbuf_put(&all, body ? body : "", strlen(body ? body : ""));
        } else if (why) {
            console_message(c, true, "node %s: %s", node, why);
        }
        free(out);
        free(why);
    }
    wbuf_put(&all, "", 1);
    char title[160];
    snprintf(title, sizeof title, "node %s: running and queued tasks%s", node,
             c->live ? "" : " (at the end of the trace)");
    page_open(c, title, xstrdup((const char *)all.data));
    wbuf_fini(&all);
}

/* J: the cluster's jobs, as `jackdaw jobs` lists them (live only: a trace has no job
 * files). */
static void jobs_page(struct console *c)
{
    if (!c->s.cluster_path || !c->s.attached) {
        console_message(c, true, "no cluster attached: J lists a running cluster's jobs");
        return;
    }
    char *argv[] = {(char *)"jackdaw", (char *)"jobs", (char *)"--cluster",
                    (char *)c->s.cluster_path, NULL};
    char *out = NULL, *why = NULL;
    console_notice(c, "listing the jobs...");
    if (console_run_tool(argv, &out, &why) == 0) {
        page_open(c, "jobs of the cluster", out);
    } else {
        console_message(c, true, "jobs: %s", why ? why : "failed");
        free(out);
    }
    free(why);
}

/* D: the selected node's daemon log, WORKDIR/node-I.log, its last 64 KiB (a cluster on
 * this host, or one whose work directory is shared). */
static void daemon_log(struct console *c)
{
    if (!c->s.attached || !c->s.cl.workdir) {
        console_message(c, true, "no cluster attached: D shows a running daemon's log");
        return;
    }
    if (c->ui.selected < 0) {
        console_message(c, true, "no node selected");
        return;
    }
    char *path = xasprintf("%s/node-%d.log", c->s.cl.workdir, (int)c->ui.selected);
    FILE *f = fopen(path, "r");
    if (!f) {
        console_message(c, true, "cannot read %s: %s (a daemon on another host keeps its log "
                                 "there)", path, strerror(errno));
        free(path);
        return;
    }
    const long most = 64 << 10;
    fseek(f, 0, SEEK_END);
    long size = ftell(f), from = size > most ? size - most : 0;
    fseek(f, from, SEEK_SET);
    char *text = xmalloc((size_t)(size - from) + 1);
    size_t n = fread(text, 1, (size_t)(size - from), f);
    text[n] = '\0';
    fclose(f);
    /* From the first whole line when cut. */
    char *start = from > 0 && strchr(text, '\n') ? strchr(text, '\n') + 1 : text;
    char title[160];
    snprintf(title, sizeof title, "node %d: %s%s", (int)c->ui.selected, path,
             from > 0 ? " (its last 64 KiB)" : "");
    page_open(c, title, xstrdup(start));
    free(text);
    free(path);
}

/* O: a task's output, as `jackdaw logs ID` prints it: its stdout, then its stderr. */
static void task_output(struct console *c, const char *id)
{
    char *argv[8] = {(char *)"jackdaw", (char *)"logs", (char *)id, (char *)"--stdout"};
    int at = trace_args(c, argv, 4);
    if (at > 4 && strcmp(argv[4], "--trace") == 0)
        at = 4; /* logs reads the cluster's work directory, not a trace */
    argv[at] = NULL;
    char *out = NULL, *err = NULL, *why = NULL;
    console_notice(c, "reading the task's output...");
    if (console_run_tool(argv, &out, &why) != 0) {
        console_message(c, true, "output of %s: %s", id, why ? why : "not found");
        free(out);
        free(why);
        return;
    }
    free(why);
    why = NULL;
    /* Its stderr comes out on the tool's stderr: --path names the file instead. */
    argv[3] = (char *)"--path";
    argv[at] = (char *)"--stderr";
    argv[at + 1] = NULL;
    char *errpath = NULL;
    if (console_run_tool(argv, &errpath, &why) == 0 && errpath) {
        errpath[strcspn(errpath, "\n")] = '\0';
        FILE *f = fopen(errpath, "r");
        if (f) {
            struct wbuf b;
            wbuf_init(&b);
            char buf[4096];
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, f)) > 0 && b.len < (4u << 20))
                wbuf_put(&b, buf, n);
            wbuf_put(&b, "", 1);
            fclose(f);
            err = xstrdup((const char *)b.data);
            wbuf_fini(&b);
        }
    }
    free(errpath);
    free(why);
    char *text = xasprintf("%s%s%s", out ? out : "", err && *err ? "--- stderr ---\n" : "",
                           err ? err : "");
    free(out);
    free(err);
    char title[160];
    snprintf(title, sizeof title, "output of task %s (stdout, then stderr)", id);
    page_open(c, title, text);
}

static void run_action(struct console *c, enum action a)
{
    if (a == ACT_DAEMON_LOG) {
        daemon_log(c);
        return;
    }
    if (a == ACT_TASK_OUTPUT) {
        c->ask = ASK_OUTPUT;
        c->ui.prompt = "Output of task id: ";
        c->ui.input[0] = '\0';
        return;
    }
    if (a == ACT_JOBS) {
        jobs_page(c);
        return;
    }
    if (a == ACT_TASK_LOOKUP) {
        c->ask = ASK_TASK;
        c->ui.prompt = "Task id (or JOB:INDEX): ";
        c->ui.input[0] = '\0';
        return;
    }
    if (a == ACT_NODE_TASKS) {
        node_tasks(c);
        return;
    }
    if (a == ACT_REPORT) {
        write_report(c);
        return;
    }
    if (a == ACT_LAUNCH_FORM) {
        if (c->s.attached) {
            console_message(c, true, "a cluster is attached; K tears it down first");
            return;
        }
        c->ui.mode = KEYS_FORM;
        c->form.error[0] = '\0';
        c->dirty = true;
        return;
    }
    if (!c->s.attached) {
        console_message(c, true, "no cluster is attached (L opens the launch form)");
        return;
    }
    if (a == ACT_CANCEL_JOB) {
        c->ask = ASK_CANCEL;
        c->ui.prompt = "Cancel the job (remove every unfinished task)?  y / n ";
    } else {
        c->ask = ASK_TEARDOWN;
        c->ui.prompt = "Tear the cluster down (stop every daemon and the collector)?  y / n ";
    }
    c->ui.input[0] = '\0';
    c->dirty = true;
}

void console_launch(struct console *c)
{
    struct form_plan plan;
    char *cause = NULL;
    if (form_plan(&c->form, &plan, &cause) < 0) {
        free(cause);
        c->dirty = true;
        return;
    }
    console_notice(c, plan.summary);
    int rc = session_launch(&c->s, &plan, (session_progress_fn)console_notice, c, &cause);
    if (rc < 0) {
        snprintf(c->form.error, sizeof c->form.error, "launch failed: %s",
                 cause ? cause : strerror(-rc));
        /* A multi-line cause (a daemon's log tail) shows its first line. */
        char *nl = strchr(c->form.error, '\n');
        if (nl)
            *nl = '\0';
        c->form.error_field = -1;
        free(cause);
        c->dirty = true;
        return;
    }
    console_track_pids(c);
    model_reset(c->m);
    c->ui.mode = KEYS_LIVE;
    c->ui.have_cluster = true;
    c->ui.launched = true;
    c->ui.connected = session_connected(&c->s);
    c->ui.finished = false;
    snprintf(c->ui.source, sizeof c->ui.source, "cluster %s", c->s.cluster_path);
    if (c->s.generated)
        console_message(c, false, "launched %s; job %u submitted (its workload: %s)",
                        plan.summary, c->s.job, c->s.generated);
    else
        console_message(c, false, "launched %s; job %u submitted", plan.summary, c->s.job);
}

/* ---- prompts --------------------------------------------------------------------------- */

static void close_prompt(struct console *c)
{
    c->ask = ASK_NONE;
    c->ui.prompt = NULL;
    c->ui.input[0] = '\0';
    c->dirty = true;
}

static void answer(struct console *c, int key)
{
    enum ask ask = c->ask;
    close_prompt(c);
    bool yes = key == 'y' || key == 'Y';
    char *cause = NULL;
    if (ask == ASK_QUIT) {
        if (yes) {
            console_teardown(c, true);
            c->quit = true;
        } else if (key == 'd' || key == 'D') {
            c->quit = true;
        }
    } else if (ask == ASK_CANCEL && yes) {
        console_notice(c, "cancelling the job...");
        int rc = session_cancel(&c->s, &cause);
        if (rc < 0)
            console_message(c, true, "cancel: %s", cause ? cause : strerror(-rc));
        else
            console_message(c, false, "job %u cancelled: its unfinished tasks are removed",
                            c->s.job);
    } else if (ask == ASK_TEARDOWN && yes) {
        console_teardown(c, false);
    }
    free(cause);
}

static void prompt_key(struct console *c, int key)
{
    if (c->ask == ASK_QUIT || c->ask == ASK_CANCEL || c->ask == ASK_TEARDOWN) {
        answer(c, key);
        return;
    }
    size_t len = strlen(c->ui.input);
    if (key == KEY_ESC) {
        if (c->ask == ASK_FILTER) {
            c->ui.filter[0] = '\0';
            console_rows(c);
        }
        if (c->ask == ASK_PAGE_FILTER) {
            c->ui.page_filter[0] = '\0';
            c->ui.page_top = 0;
        }
        close_prompt(c);
        return;
    }
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        if ((c->ask == ASK_TASK || c->ask == ASK_OUTPUT) && c->ui.input[0]) {
            char id[sizeof c->ui.input];
            snprintf(id, sizeof id, "%s", c->ui.input);
            enum ask was = c->ask;
            close_prompt(c);
            if (was == ASK_TASK)
                task_lookup(c, id);
            else
                task_output(c, id);
            return;
        }
        if (c->ask == ASK_SEEK && c->ui.input[0]) {
            char *end;
            double s = strtod(c->ui.input, &end);
            if (end == c->ui.input || *end || !isfinite(s)) {
                console_message(c, true, "'%s' is not a time in seconds", c->ui.input);
            } else {
                bool relative = c->ui.input[0] == '+' || c->ui.input[0] == '-';
                int64_t t = (int64_t)(s * 1e9) + (relative ? c->replay_t : 0);
                c->ui.playing = false;
                console_replay_seek(c, t);
            }
        }
        close_prompt(c);
        return;
    }
    if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        if (len)
            c->ui.input[len - 1] = '\0';
    } else if (key == 21) { /* C-u */
        c->ui.input[0] = '\0';
    } else if (key >= 0x20 && key < 0x7f && len + 1 < sizeof c->ui.input) {
        c->ui.input[len] = (char)key;
        c->ui.input[len + 1] = '\0';
    }
    if (c->ask == ASK_PAGE_FILTER) {
        snprintf(c->ui.page_filter, sizeof c->ui.page_filter, "%s", c->ui.input);
        c->ui.page_top = 0;
    }
    /* The filter applies as it is typed, as htop's does. */
    if (c->ask == ASK_FILTER) {
        snprintf(c->ui.filter, sizeof c->ui.filter, "%s", c->ui.input);
        console_rows(c);
    }
    c->dirty = true;
}

/* ---- mouse ----------------------------------------------------------------------------- */

static void mouse(struct console *c)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    if (ev.bstate & BUTTON4_PRESSED) {
        move_selection(c, -3);
        return;
    }
#ifdef BUTTON5_PRESSED
    if (ev.bstate & BUTTON5_PRESSED) {
        move_selection(c, 3);
        return;
    }
#endif
    if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED)))
        return;
    if (c->ui.mode == KEYS_FORM) {
        form_click(&c->form, ev.y);
        return;
    }
    struct hit h = layout_hit(&c->lay, ev.y, ev.x);
    const struct model_view *v = model_view(c->m);
    switch (h.kind) {
    case HIT_TABLE_ROW:
        if (c->ui.top + h.index < c->nrows)
            select_index(c, c->ui.top + h.index);
        break;
    case HIT_TABLE_HEADING: {
        enum model_sort k = layout_col_info(h.col)->sort;
        if (k == c->ui.sort)
            c->ui.desc = !c->ui.desc;
        c->ui.sort = k;
        console_rows(c);
        break;
    }
    case HIT_MAP_CELL: {
        uint64_t node = (uint64_t)h.index * (c->lay.nodes_per_cell ? c->lay.nodes_per_cell : 1);
        if (node < v->nnodes) {
            c->ui.selected = v->nodes[node].id;
            console_rows(c);
        }
        break;
    }
    case HIT_TAB: c->ui.pane = (enum ui_pane)h.index; break;
    default: break;
    }
}

/* ---- keys ------------------------------------------------------------------------------ */

static void view_action(struct console *c, enum action a)
{
    uint32_t page = c->lay.table_rows > 1 ? (uint32_t)c->lay.table_rows - 1 : 1;
    switch (a) {
    case ACT_QUIT: console_request_quit(c); break;
    case ACT_HELP: c->ui.help = true; c->ui.help_top = 0; break;
    case ACT_REDRAW: clearok(curscr, TRUE); break;
    case ACT_UP: move_selection(c, -1); break;
    case ACT_DOWN: move_selection(c, 1); break;
    case ACT_PAGE_UP: move_selection(c, -(int64_t)page); break;
    case ACT_PAGE_DOWN: move_selection(c, page); break;
    case ACT_FIRST: select_index(c, 0); break;
    case ACT_LAST: select_index(c, (int64_t)c->nrows - 1); break;
    case ACT_DETAIL: c->ui.pane = PANE_DETAIL; break;
    case ACT_SORT_NEXT:
    case ACT_SORT_PREV: {
        int step = a == ACT_SORT_NEXT ? 1 : MODEL_SORT_COUNT - 1;
        c->ui.sort = (enum model_sort)((c->ui.sort + step) % MODEL_SORT_COUNT);
        /* Most columns read best largest first; the node id smallest first. */
        c->ui.desc = c->ui.sort != MODEL_SORT_ID;
        console_rows(c);
        break;
    }
    case ACT_SORT_INVERT: c->ui.desc = !c->ui.desc; console_rows(c); break;
    case ACT_FILTER:
        c->ask = ASK_FILTER;
        c->ui.prompt = "Filter (node N, idle, busy, down; Enter keeps, Esc clears): ";
        snprintf(c->ui.input, sizeof c->ui.input, "%s", c->ui.filter);
        break;
    case ACT_FILTER_CLEAR: c->ui.filter[0] = '\0'; console_rows(c); break;
    case ACT_MAP: c->ui.map = (enum map_mode)((c->ui.map + 1) % MAP_MODE_COUNT); break;
    case ACT_PANE_NEXT: c->ui.pane = (enum ui_pane)((c->ui.pane + 1) % PANE_COUNT); break;
    case ACT_PANE_PREV:
        c->ui.pane = (enum ui_pane)((c->ui.pane + PANE_COUNT - 1) % PANE_COUNT);
        break;
    case ACT_PANE_UTIL: c->ui.pane = PANE_UTIL; break;
    case ACT_PANE_STEALS: c->ui.pane = PANE_STEALS; break;
    case ACT_COLUMNS:
        /* Where it was left, as htop's setup screen does; the first column one can hide
         * the first time. */
        c->ui.chooser = true;
        if (c->ui.chooser_at <= TCOL_UTIL)
            c->ui.chooser_at = TCOL_SLOTS;
        break;
    case ACT_STEALS_WHOLE:
        c->ui.steals_whole = !c->ui.steals_whole;
        model_steals_whole(c->m, c->ui.steals_whole);
        c->ui.pane = PANE_STEALS;
        break;
    case ACT_PANE_LOG: c->ui.pane = PANE_LOG; break;
    case ACT_PANE_DETAIL: c->ui.pane = PANE_DETAIL; break;
    case ACT_PANE_JOBS: c->ui.pane = PANE_JOBS; break;
    case ACT_JOB_NEXT:
    case ACT_JOB_ALL: {
        const struct model_view *v = model_view(c->m);
        if (a == ACT_JOB_NEXT && !v->njobs) {
            console_message(c, false, "no job known yet: the collector lists jobs once submitted");
            break;
        }
        model_select_job(c->m, a == ACT_JOB_ALL ? -1 : model_next_job(c->m, v->job));
        console_rows(c);
        break;
    }
    case ACT_PLAY: case ACT_FASTER: case ACT_SLOWER: case ACT_STEP: case ACT_SEEK:
    case ACT_BACK: case ACT_FORWARD: case ACT_START: case ACT_END:
        replay_action(c, a);
        break;
    case ACT_CANCEL_JOB: case ACT_TEARDOWN: case ACT_LAUNCH_FORM: case ACT_REPORT:
    case ACT_TASK_LOOKUP: case ACT_NODE_TASKS: case ACT_JOBS: case ACT_DAEMON_LOG:
    case ACT_TASK_OUTPUT:
        run_action(c, a);
        break;
    case ACT_MOUSE: mouse(c); break;
    default: break;
    }
    c->dirty = true;
}

static void form_key(struct console *c, enum action a, int key)
{
    if (a == ACT_HELP) {
        c->ui.help = true;
        c->ui.help_top = 0;
    } else if (a == ACT_QUIT) {
        console_request_quit(c);
    } else if (a == ACT_REDRAW) {
        clearok(curscr, TRUE);
    } else if (a == ACT_MOUSE) {
        mouse(c);
    } else {
        enum form_result r = form_handle(&c->form, a, key);
        if (r == FORM_SUBMIT) {
            console_launch(c);
        } else if (r == FORM_LEAVE) {
            /* Back to the view of the cluster we had, else out. */
            if (c->s.attached || c->ui.have_cluster)
                c->ui.mode = KEYS_LIVE;
            else
                c->quit = true;
        }
    }
    c->dirty = true;
}

/* The page's lines that pass its filter. */
static int64_t page_lines_shown(const struct ui *ui)
{
    int64_t n = 0;
    for (uint32_t i = 0; i < ui->npage; i++)
        n += !ui->page_filter[0] || strstr(ui->page[i], ui->page_filter) != NULL;
    return n;
}

/* Lines an overlay's scroll key moves; 0 for any other key. */
static int64_t scroll_step(int key)
{
    switch (key) {
    case KEY_DOWN: return 1;
    case KEY_UP: return -1;
    case KEY_NPAGE: return 10;
    case KEY_PPAGE: return -10;
    default: return 0;
    }
}

void console_key(struct console *c, int key)
{
    enum action a = keys_lookup(key, c->ui.mode);
    if (a == ACT_RESIZE) {
        /* curses has resized stdscr already; the next frame lays out anew, and the
         * whole screen is sent again so that no piece of the old size stays. */
        clearok(curscr, TRUE);
        c->dirty = true;
        return;
    }
    if (c->ui.chooser) {
        switch (key) {
        case KEY_DOWN: c->ui.chooser_at += c->ui.chooser_at + 1 < TCOL_COUNT; break;
        case KEY_UP: c->ui.chooser_at -= c->ui.chooser_at > 0; break;
        case ' ': case '\n': case '\r': case KEY_ENTER:
            if (c->ui.chooser_at > TCOL_UTIL)
                c->ui.hidden_cols ^= 1u << c->ui.chooser_at;
            break;
        case KEY_ESC: case 'q': case KEY_F(2): c->ui.chooser = false; break;
        default: break;
        }
        c->dirty = true;
        return;
    }
    if (c->ui.page && c->ask == ASK_PAGE_FILTER) {
        prompt_key(c, key);
        return;
    }
    if (c->ui.page && key == '/') {
        /* Filters the page as it is typed, as the node filter does. */
        c->ask = ASK_PAGE_FILTER;
        c->ui.prompt = "Lines with (Enter keeps, Esc clears): ";
        snprintf(c->ui.input, sizeof c->ui.input, "%s", c->ui.page_filter);
        c->dirty = true;
        return;
    }
    if (c->ui.page || c->ui.help) {
        /* An overlay (a page or the help): scroll keys scroll it, any other closes it. */
        bool page = c->ui.page != NULL;
        int64_t n = page ? page_lines_shown(&c->ui) : draw_help_lines(c->ui.mode);
        int64_t step = scroll_step(key);
        if (!step && a != ACT_MOUSE) {
            if (page)
                console_page_close(c);
            else
                c->ui.help = false;
        }
        uint32_t *top_at = page ? &c->ui.page_top : &c->ui.help_top;
        int64_t top = (int64_t)*top_at + step;
        *top_at = (uint32_t)(top >= n ? (n > 0 ? n - 1 : 0) : top < 0 ? 0 : top);
        c->dirty = true;
        return;
    }
    if (c->ask != ASK_NONE) {
        prompt_key(c, key);
        return;
    }
    c->ui.message[0] = '\0';
    if (c->ui.mode == KEYS_FORM)
        form_key(c, a, key);
    else
        view_action(c, a);
}
