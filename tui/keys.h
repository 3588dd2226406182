/*
 * keys — the console's key bindings: one table from key codes to actions, per mode, and
 * the help screen generated from that table, so that the help lists every key there is
 * and no other (htop Action.c; tmux key-bindings).
 *
 * Pure: the table and lookups only (curses key codes are constants from <curses.h>).  The
 * console maps each key through keys_lookup and carries the action out; the help screen
 * draws keys_help; tests/unit/test_keys.c checks that no key is bound twice in a mode and
 * that every action of a mode has a key and a line of help.
 */
#ifndef JACKDAW_TUI_KEYS_H
#define JACKDAW_TUI_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* Modes a binding applies in (a bit set). */
enum {
    KEYS_LIVE = 1u << 0,    /* watching a cluster */
    KEYS_REPLAY = 1u << 1,  /* replaying a trace */
    KEYS_FORM = 1u << 2,    /* the launch form */
    KEYS_VIEW = KEYS_LIVE | KEYS_REPLAY,
    KEYS_ALL = KEYS_LIVE | KEYS_REPLAY | KEYS_FORM,
};

enum action {
    ACT_NONE = 0,
    /* everywhere */
    ACT_QUIT, ACT_HELP, ACT_REDRAW,
    /* the node table */
    ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_FIRST, ACT_LAST, ACT_DETAIL,
    ACT_SORT_NEXT, ACT_SORT_PREV, ACT_SORT_INVERT, ACT_FILTER, ACT_FILTER_CLEAR, ACT_MAP,
    /* panes */
    ACT_PANE_NEXT, ACT_PANE_PREV, ACT_PANE_UTIL, ACT_PANE_STEALS, ACT_PANE_LOG,
    ACT_PANE_DETAIL, ACT_PANE_JOBS,
    /* the job every pane shows */
    ACT_JOB_NEXT, ACT_JOB_ALL,
    /* replay */
    ACT_PLAY, ACT_FASTER, ACT_SLOWER, ACT_STEP, ACT_SEEK, ACT_BACK, ACT_FORWARD, ACT_START,
    ACT_END,
    /* the run */
    ACT_CANCEL_JOB, ACT_TEARDOWN, ACT_LAUNCH_FORM, ACT_REPORT, ACT_TASK_LOOKUP, ACT_NODE_TASKS, ACT_STEALS_WHOLE, ACT_COLUMNS, ACT_JOBS, ACT_DAEMON_LOG, ACT_TASK_OUTPUT,
    /* the launch form */
    ACT_FORM_NEXT, ACT_FORM_PREV, ACT_FORM_CHOICE_NEXT, ACT_FORM_CHOICE_PREV, ACT_FORM_ERASE,
    ACT_FORM_CLEAR, ACT_FORM_SUBMIT, ACT_FORM_LEAVE,
    /* not from the table: terminal events */
    ACT_MOUSE, ACT_RESIZE,
    ACT_COUNT
};

struct key_binding {
    int key;                /* curses key code or character */
    enum action action;
    unsigned modes;         /* KEYS_* bits */
    const char *name;       /* as the help shows it: "q", "F1", "PgDn", "Space" */
    const char *help;       /* what it does, one line; the first binding of an action
                             * in a mode carries it, the others NULL */
};

/* The whole table, and its length. */
const struct key_binding *keys_table(size_t *n);

/* The action of key in mode (one KEYS_* bit), or ACT_NONE.  KEY_MOUSE and KEY_RESIZE
 * give ACT_MOUSE and ACT_RESIZE in every mode. */
enum action keys_lookup(int key, unsigned mode);

/* The help of one mode: one line per action, its keys joined ("F1 ?"), in table order. */
struct help_line {
    char keys[32];
    const char *help;
    enum action action;
};
/* Fills up to cap lines; returns how many there are. */
size_t keys_help(unsigned mode, struct help_line *out, size_t cap);

#endif
