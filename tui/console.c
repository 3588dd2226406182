/*
 * console — see console.h.  This file: the terminal (or the headless screen), stderr
 * while the screen is up, signals, the loop, frames and the headless script; what keys
 * do is in console_act.c.
 */
#include "tui/console_internal.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/sigcatch.h"
#include "core/base/xalloc.h"
#include "core/client/exitcode.h"

/* Collector polls between frames: STATEs that arrive between two polls replace each
 * other in the client, so the console looks several times per period. */
#define POLL_MS 40
/* Keys handled per loop pass at most (a paste, a held key), so that frames keep coming. */
#define KEYS_PER_PASS 64

/* ---- terminal state for the signal handlers ----------------------------------------- */

/* Only what the signal handlers must reach lives here; console_run sets all of it at
 * entry, so a second run in one process starts clean.  SIGINT, SIGTERM and SIGHUP only
 * set core/base/sigcatch's flag, which the loop reads. */
static volatile sig_atomic_t curses_up;
/* A cluster this console started, killed (SIGTERM, async-signal-safe) when the console
 * dies of a fatal signal, so that a crash leaves no orphan daemons. */
#define MAX_TRACKED 4200
static pid_t tracked[MAX_TRACKED];
static volatile sig_atomic_t ntracked;

int console_run_tool(char *const argv[], char **out, char **why)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        *why = xasprintf("cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    /* Its output, when wanted, goes to an unnamed file read back at the end: one pipe
     * read to its end cannot block on the other. */
    int ofd = -1;
    if (out) {
        char tmpl[] = "/tmp/jackdaw-console-XXXXXX";
        ofd = mkostemp(tmpl, O_CLOEXEC);
        if (ofd < 0) {
            *why = xasprintf("cannot make a temporary file: %s", strerror(errno));
            close(fds[0]);
            close(fds[1]);
            return -1;
        }
        unlink(tmpl);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (ofd >= 0)
        posix_spawn_file_actions_adddup2(&fa, ofd, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        if (ofd >= 0)
            close(ofd);
        *why = xasprintf("cannot start jackdaw %s: %s", argv[1], strerror(rc));
        return -1;
    }
    /* Its last line of errors says why it failed, if it did. */
    char tail[512];
    size_t len = 0;
    for (;;) {
        char buf[4096];
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (len == sizeof tail - 1) {
                memmove(tail, tail + 256, len - 256);
                len -= 256;
            }
            tail[len++] = buf[i];
        }
    }
    close(fds[0]);
    tail[len] = '\0';
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (ofd >= 0) {
        /* At most 4 MiB of it: a page, not a file viewer. */
        off_t size = lseek(ofd, 0, SEEK_END);
        size_t n = size > 0 ? (size_t)(size < (4 << 20) ? size : (4 << 20)) : 0;
        *out = xmalloc(n + 1);
        ssize_t got = n ? pread(ofd, *out, n, 0) : 0;
        (*out)[got > 0 ? got : 0] = '\0';
        close(ofd);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    while (len && tail[len - 1] == '\n')
        tail[--len] = '\0';
    const char *last = strrchr(tail, '\n');
    *why = xstrdup(last ? last + 1 : len ? tail : "it failed without a word");
    return -1;
}

void console_track_pids(const struct console *c)
{
    ntracked = 0;
    ntracked = (sig_atomic_t)session_pids(&c->s, tracked, MAX_TRACKED);
}

static void on_fatal(int sig)
{
    /* endwin is not async-signal-safe, but the process is going down anyway and a
     * terminal left in raw mode is worse (htop and tmux do the same). */
    if (curses_up)
        endwin();
    for (sig_atomic_t i = 0; i < ntracked; i++)
        kill(tracked[i], SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void fatal_hook(void)
{
    if (curses_up) {
        curses_up = 0;
        endwin();
    }
}

static void catch_signals(void)
{
    /* No SA_RESTART: getch's wait ends at the signal, so the loop sees it at once. */
    sigcatch_install(false);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_RESETHAND;
    int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &sa, NULL);
    xalloc_set_fatal_hook(fatal_hook);
}

/* ---- stderr while the screen is up --------------------------------------------------- */

static int saved_stderr = -1;
static FILE *captured;

static void capture_stderr(void)
{
    captured = tmpfile();
    if (!captured)
        return;
    fflush(stderr);
    saved_stderr = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (saved_stderr < 0 || dup2(fileno(captured), 2) < 0) {
        fclose(captured);
        captured = NULL;
    }
}

/* Puts stderr back and shows what arrived meanwhile (the last 4 KiB of it). */
static void release_stderr(void)
{
    if (!captured)
        return;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
    long size = ftell(captured);
    if (size > 0) {
        long from = size > 4096 ? size - 4096 : 0;
        fseek(captured, from, SEEK_SET);
        char buf[4097];
        size_t n = fread(buf, 1, sizeof buf - 1, captured);
        buf[n] = '\0';
        fprintf(stderr, "jackdaw console: messages while the screen was up:\n%s%s", buf,
                n && buf[n - 1] != '\n' ? "\n" : "");
    }
    fclose(captured);
    captured = NULL;
}

/* ---- screen ----------------------------------------------------------------------------- */

struct screen {
    SCREEN *scr;
    FILE *in, *out;
};

static void curses_modes(bool headless)
{
    cbreak();   /* Ctrl-C stays a signal: it asks before quitting, like q */
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    if (!headless) {
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
                      | BUTTON5_PRESSED
#endif
                  , NULL);
        mouseinterval(0);
    } else {
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
    }
}

static int screen_open(struct screen *sc, bool headless, char **cause)
{
    memset(sc, 0, sizeof *sc);
    if (!headless) {
        sc->scr = newterm(NULL, stdout, stdin);
        if (!sc->scr) {
            *cause = xasprintf("cannot start curses on terminal type '%s'",
                               getenv("TERM") ? getenv("TERM") : "(TERM unset)");
            return EXIT_INTERNAL;
        }
    } else {
        /* A screen on /dev/null: everything is drawn, nothing is shown. */
        sc->out = fopen("/dev/null", "w");
        sc->in = fopen("/dev/null", "r");
        static const char *const types[] = {"xterm-256color", "xterm", "vt100", "dumb"};
        for (size_t i = 0; sc->out && sc->in && !sc->scr && i < 4; i++)
            sc->scr = newterm(types[i], sc->out, sc->in);
        if (!sc->scr) {
            *cause = xstrdup("cannot start a headless curses screen (no terminfo for xterm, "
                             "vt100 or dumb)");
            if (sc->out)
                fclose(sc->out);
            if (sc->in)
                fclose(sc->in);
            return EXIT_INTERNAL;
        }
        resizeterm(24, 80);
    }
    set_term(sc->scr);
    curses_up = 1;
    curses_modes(headless);
    return 0;
}

static void screen_close(struct screen *sc)
{
    if (!sc->scr)
        return;
    curses_up = 0;
    endwin();
    delscreen(sc->scr);
    sc->scr = NULL;
    if (sc->out)
        fclose(sc->out);
    if (sc->in)
        fclose(sc->in);
}

/* ---- frames ----------------------------------------------------------------------------- */

static void update_flags(struct console *c)
{
    const struct model_view *v = model_view(c->m);
    c->ui.finished = v->total > 0 && v->done + v->failed + v->cancelled >= v->total;
    if (c->live) {
        c->ui.connected = session_connected(&c->s);
        c->ui.have_cluster = c->s.attached;
        c->ui.launched = c->s.launched;
        if (c->s.steal[0])
            snprintf(c->ui.steal, sizeof c->ui.steal, "%s", c->s.steal);
    }
}

static void frame(struct console *c)
{
    erase();
    if (c->ui.chooser) {
        draw_chooser(&c->ui, LINES, COLS);
        curs_set(0);
    } else if (c->ui.page) {
        draw_page(&c->ui, LINES, COLS);
        curs_set(c->ui.prompt ? 1 : 0);
        if (c->ui.prompt)
            draw_status(&c->ui, LINES - 1, COLS); /* the page's filter being typed */
    } else if (c->ui.help) {
        draw_help(&c->ui, LINES, COLS);
        curs_set(0);
    } else if (c->ui.mode == KEYS_FORM) {
        form_draw(&c->form, LINES, COLS);
        draw_status(&c->ui, LINES - 1, COLS);
        curs_set(c->ui.prompt ? 1 : 0);
        if (c->ui.prompt)
            draw_status(&c->ui, LINES - 1, COLS);
    } else {
        const struct model_view *v = model_view(c->m);
        update_flags(c);
        layout_compute_hiding(&c->lay, LINES, COLS, v->nnodes, c->ui.pane, c->ui.map,
                              c->ui.hidden_cols);
        console_rows(c);
        draw_view(&c->lay, v, c->rows, c->nrows, &c->ui);
        curs_set(c->ui.prompt ? 1 : 0);
    }
    refresh();
}

void console_notice(struct console *c, const char *what)
{
    (void)c;
    if (!curses_up)
        return;
    int y = LINES - 1;
    move(y, 0);
    clrtoeol();
    draw_text(y, 0, COLS, STYLE_WARN, what);
    refresh();
}

/* ---- headless script -------------------------------------------------------------------- */

/* Special steps of the script (below any curses key code). */
#define STEP_RESIZE(i) (-100 - (i))
#define STEP_CLICK_ROW(i) (-200 - (i))
#define STEP_CLICK_TAB(i) (-300 - (i))
#define STEP_CLICK_HEADING (-400)

static const int sizes[][2] = {{30, 100}, {15, 60}, {6, 30}, {60, 200}, {50, 132}, {24, 80}};

/* One step per cycle, then the view's steps again: every pane, sort, filter, map mode,
 * help, scrolling, mouse and resize goes through the handlers the terminal uses. */
static const int view_script[] = {
    '\t', '\t', '\t', '\t', '>', '>', 'I', '<', '/', 'n', 'o', 'd', 'e', '\n', 27, KEY_DOWN,
    KEY_DOWN, KEY_NPAGE, KEY_END, KEY_HOME, KEY_PPAGE, 'm', 'm', 'm', KEY_F(1), KEY_NPAGE, 'x',
    '4', '3', '2', '1', '\n', STEP_RESIZE(0), STEP_CLICK_ROW(1), STEP_CLICK_HEADING,
    STEP_CLICK_TAB(2), STEP_RESIZE(1), '2', STEP_RESIZE(2), STEP_RESIZE(3), '4', STEP_RESIZE(4),
    '?', 'x', '5', 'u', '3', 'u', 'U', STEP_RESIZE(5), '1',
};
static const int replay_script[] = {' ', '+', '+', '+', '.', '.', 'g', '1', '\n', '[', ']',
                                    KEY_LEFT, KEY_RIGHT, '-', ' ', 'g', '+', '2', '\n', ' '};
static const int form_script[] = {KEY_DOWN, KEY_RIGHT, KEY_LEFT, KEY_UP, 21, '4', KEY_DOWN,
                                  21, '2', KEY_F(1), 'x', KEY_F(5)};

static void click(int y, int x)
{
    MEVENT ev = {.id = 0, .x = x, .y = y, .z = 0, .bstate = BUTTON1_CLICKED};
    ungetmouse(&ev);
}

static void script_step(struct console *c, int step)
{
    if (step >= 0) {
        ungetch(step);
        return;
    }
    if (step <= -100 && step > -200) {
        int i = -100 - step;
        resizeterm(sizes[i][0], sizes[i][1]);   /* queues KEY_RESIZE, as SIGWINCH does */
    } else if (step <= -200 && step > -300) {
        click(c->lay.table.y + 1 + (-200 - step), 2);
    } else if (step <= -300 && step > -400) {
        int x, w;
        layout_tab_span((enum ui_pane)(-300 - step), &x, &w);
        click(c->lay.tabs.y, x + 1);
    } else if (step == STEP_CLICK_HEADING) {
        int i = layout_col_index(&c->lay, TCOL_DONE);
        if (i >= 0)
            click(c->lay.table.y, c->lay.col_x[TCOL_DONE] + 1);
    }
}

/* The end of a headless run: quit, and say yes to stopping a cluster we started. */
static void headless_end(struct console *c)
{
    if (c->ask == ASK_QUIT)
        ungetch('y');
    else if (c->ask != ASK_NONE || c->ui.help || c->ui.page || c->ui.chooser ||
             c->ui.mode == KEYS_FORM)
        ungetch(27);
    else
        ungetch('q');
}

/* Each mode's script from its own start, so a launch from the form still walks the
 * whole view script afterwards. */
static void headless_feed(struct console *c)
{
    if (c->ui.mode == KEYS_FORM) {
        if (c->form_at < sizeof form_script / sizeof form_script[0])
            script_step(c, form_script[c->form_at++]);
        return;
    }
    size_t nr = c->r ? sizeof replay_script / sizeof replay_script[0] : 0;
    size_t nv = sizeof view_script / sizeof view_script[0];
    uint32_t at = c->view_at++;
    if (at < nr)
        script_step(c, replay_script[at]);
    else if (at - nr < nv)
        script_step(c, view_script[at - nr]);
    else if (c->r && (at - nr - nv) % 8 == 0)
        ungetch(']');
}

/* Prints the last frame as text (what the screen held), for tests and the curious. */
static void print_screen(FILE *out)
{
    char line[1024];
    for (int y = 0; y < LINES; y++) {
        int n = mvinnstr(y, 0, line, COLS < (int)sizeof line - 1 ? COLS : (int)sizeof line - 1);
        if (n < 0)
            n = 0;
        line[n] = '\0';
        while (n > 0 && line[n - 1] == ' ')
            line[--n] = '\0';
        fprintf(out, "%s\n", line);
    }
}

/* ---- the loop --------------------------------------------------------------------------- */

static void handle_signal(struct console *c)
{
    int sig = sigcatch_take();
    if (sig == SIGINT) {
        /* Ctrl-C is q; a second one while asked is yes. */
        if (c->ask == ASK_QUIT)
            console_key(c, 'y');
        else
            console_request_quit(c);
        c->dirty = true;
        return;
    }
    /* SIGTERM, SIGHUP: nobody to ask.  A cluster the console started goes with it, as
     * with `jackdaw run`. */
    if (c->live && c->s.launched)
        console_teardown(c, true);
    c->exit_code = EXIT_INTERRUPTED;
    c->quit = true;
}

static void advance_replay(struct console *c)
{
    if (!c->r || !c->ui.playing)
        return;
    int64_t now = clock_mono_ns();
    int64_t dt = now - c->clock_at;
    if (dt <= 0)
        return;
    /* Wall time x speed: a second of screen time is `speed` seconds of trace. */
    console_replay_seek(c, c->replay_t + (int64_t)((double)dt * c->ui.speed));
    c->clock_at = now;
}

static int64_t ms_until(int64_t deadline_ns)
{
    int64_t ms = (deadline_ns - clock_mono_ns() + 999999) / 1000000;
    return ms < 0 ? 0 : ms;
}

static void loop(struct console *c, bool headless)
{
    int64_t next_frame = 0;
    uint32_t cycle = 0, extra = 0;
    int64_t refresh_ns = (int64_t)c->refresh_ms * 1000000;
    while (!c->quit) {
        if (sigcatch_pending())
            handle_signal(c);
        if (c->quit)
            break;
        if (c->live && c->s.attached) {
            /* A new state, or the collector coming or going, is worth a frame; polls
             * that find nothing are not. */
            bool was = session_connected(&c->s);
            if (session_poll(&c->s, c->m) == 1 || session_connected(&c->s) != was)
                c->dirty = true;
        }
        advance_replay(c);
        int64_t now = clock_mono_ns();
        if (c->dirty || now >= next_frame) {
            frame(c);
            c->dirty = false;
            next_frame = now + refresh_ns;
            if (headless) {
                if (cycle + 1 == c->o->headless) {
                    /* The frame printed is an 80x24 one, whatever size the script
                     * left the screen at. */
                    resizeterm(24, 80);
                    frame(c);
                    print_screen(stdout);
                }
                if (cycle + 1 < c->o->headless)
                    headless_feed(c);
                else if (++extra > 40)
                    c->quit = true;  /* a quit that never completes must still end */
                else
                    headless_end(c);
                cycle++;
            }
        }
        /* Wait for a key until the next frame or poll, whichever is first. */
        int64_t wait = ms_until(next_frame);
        if (c->live && wait > POLL_MS)
            wait = POLL_MS;
        if (headless) {
            /* /dev/null is always readable: sleep instead of letting getch wait. */
            napms((int)wait);
            wait = 0;
        }
        timeout((int)wait);
        for (int k = 0; k < KEYS_PER_PASS && !c->quit; k++) {
            int key = getch();
            if (key == ERR)
                break;
            console_key(c, key);
            timeout(0);
        }
    }
}

/* ---- setup -------------------------------------------------------------------------------- */

static int open_source(struct console *c, char **cause)
{
    const struct console_options *o = c->o;
    if (o->replay_path) {
        char *warning = NULL;
        int rc = replay_open(&c->r, o->replay_path, &warning, cause);
        if (rc < 0)
            return EXIT_BAD_INPUT;
        const char *h = replay_header(c->r);
        if (h)
            model_set_header(c->m, h);
        session_header_steal(h, c->ui.steal, sizeof c->ui.steal);
        c->ui.mode = KEYS_REPLAY;
        c->ui.playing = true;
        c->ui.speed = o->speed > 0 ? console_speed_step(o->speed, 0) : 1;
        c->ui.replay_first_ns = replay_first_ns(c->r);
        c->ui.replay_last_ns = replay_last_ns(c->r);
        snprintf(c->ui.source, sizeof c->ui.source, "trace %s", o->replay_path);
        if (warning)
            snprintf(c->ui.message, sizeof c->ui.message, "%s", warning);
        free(warning);
        return 0;
    }
    c->live = true;
    session_init(&c->s, o->cluster_path, c->refresh_ms);
    c->ui.mode = KEYS_LIVE;
    snprintf(c->ui.source, sizeof c->ui.source, "cluster %s", c->s.cluster_path);
    if (o->launch) {
        c->ui.mode = KEYS_FORM;
        return 0;
    }
    int rc = session_attach(&c->s, cause);
    if (rc < 0)
        return rc == -ENOENT ? EXIT_CLUSTER : EXIT_BAD_INPUT; /* no cluster, or a bad file */
    rc = session_connect(&c->s, cause);
    if (rc < 0)
        return EXIT_CLUSTER;
    c->ui.have_cluster = true;
    c->ui.connected = true;
    return 0;
}

int console_run(const struct console_options *o, char **cause)
{
    struct console c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.refresh_ms = o->refresh_ms ? o->refresh_ms : CONSOLE_REFRESH_MS;
    c.m = model_create();
    c.ui.selected = -1;
    c.ui.pane = PANE_UTIL;
    c.ui.sort = MODEL_SORT_ID;
    form_init(&c.form);
    /* A previous run in this process has ended: nothing of its cluster is ours. */
    ntracked = 0;
    /* Libraries log to stderr; the console says what matters on its status line. */
    log_set_level(LOG_LEVEL_WARN);
    /* The source first: a missing trace or cluster is the error to tell, whatever the
     * terminal. */
    int code = open_source(&c, cause);
    if (!code && !o->headless && (!isatty(0) || !isatty(1))) {
        *cause = xstrdup("the console needs a terminal on stdin and stdout "
                         "(--headless N runs it without one)");
        code = EXIT_USAGE;
    }
    if (code) {
        if (c.live)
            session_fini(&c.s);
        replay_destroy(c.r);
        model_destroy(c.m);
        return code;
    }
    bool headless = o->headless > 0;
    setlocale(LC_ALL, "");
    if (headless && !getenv("TERM"))
        setenv("TERM", "xterm-256color", 0);
    struct screen sc;
    code = screen_open(&sc, headless, cause);
    if (code) {
        if (c.live)
            session_fini(&c.s);
        replay_destroy(c.r);
        model_destroy(c.m);
        return code;
    }
    catch_signals();
    if (!headless)
        capture_stderr();
    draw_init(o->no_color);
    if (c.r)
        console_replay_seek(&c, replay_first_ns(c.r));
    c.clock_at = clock_mono_ns();
    c.dirty = true;
    loop(&c, headless);
    screen_close(&sc);
    release_stderr();
    ntracked = 0;
    if (c.live && c.s.launched && c.s.attached)
        fprintf(stderr, "jackdaw console: the cluster keeps running; 'jackdaw stop --cluster %s' "
                        "stops it\n", c.s.cluster_path);
    /* What the session leaves behind, so that the run can be looked at again. */
    if (c.live && c.s.trace_path)
        fprintf(stderr, "jackdaw console: the trace is %s ('jackdaw replay' or 'jackdaw report' "
                        "it)\n", c.s.trace_path);
    if (c.live && c.s.generated)
        fprintf(stderr, "jackdaw console: the generated workload is %s\n", c.s.generated);
    code = c.exit_code;
    console_page_close(&c);
    if (c.live)
        session_fini(&c.s);
    replay_destroy(c.r);
    model_destroy(c.m);
    free(c.rows);
    return code;
}
