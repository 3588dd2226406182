/*
 * keys — see keys.h.  The table is the single place a key is bound; to add a key, add a
 * row (its help line follows).
 */
#include "tui/keys.h"

#include <curses.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CTRL(c) ((c) & 0x1f)
#define KEY_ESC 27

static const struct key_binding table[] = {
    /* everywhere */
    {'q', ACT_QUIT, KEYS_VIEW, "q", "quit (asks first when the console started the cluster)"},
    {KEY_F(10), ACT_QUIT, KEYS_VIEW, "F10", NULL},
    {KEY_F(10), ACT_QUIT, KEYS_FORM, "F10",
     "quit (asks first when the console started the cluster)"},
    {KEY_F(1), ACT_HELP, KEYS_ALL, "F1", "this help; any key closes it"},
    {'?', ACT_HELP, KEYS_VIEW, "?", NULL},
    {'h', ACT_HELP, KEYS_VIEW, "h", NULL}, /* as in htop */
    {CTRL('l'), ACT_REDRAW, KEYS_ALL, "C-l", "redraw the screen"},
    /* the node table */
    {KEY_UP, ACT_UP, KEYS_VIEW, "Up", "select the node above"},
    {'k', ACT_UP, KEYS_VIEW, "k", NULL},
    {KEY_DOWN, ACT_DOWN, KEYS_VIEW, "Down", "select the node below"},
    {'j', ACT_DOWN, KEYS_VIEW, "j", NULL},
    {KEY_PPAGE, ACT_PAGE_UP, KEYS_VIEW, "PgUp", "a page of nodes up"},
    {KEY_NPAGE, ACT_PAGE_DOWN, KEYS_VIEW, "PgDn", "a page of nodes down"},
    {KEY_HOME, ACT_FIRST, KEYS_VIEW, "Home", "first node"},
    {KEY_END, ACT_LAST, KEYS_VIEW, "End", "last node"},
    {'\n', ACT_DETAIL, KEYS_VIEW, "Enter", "show the selected node's detail pane"},
    {KEY_ENTER, ACT_DETAIL, KEYS_VIEW, "Enter", NULL},
    {'>', ACT_SORT_NEXT, KEYS_VIEW, ">", "sort by the next column (or click a heading)"},
    {KEY_F(6), ACT_SORT_NEXT, KEYS_VIEW, "F6", NULL},
    {'<', ACT_SORT_PREV, KEYS_VIEW, "<", "sort by the previous column"},
    {'I', ACT_SORT_INVERT, KEYS_VIEW, "I", "invert the sort order"},
    {'/', ACT_FILTER, KEYS_VIEW, "/", "filter nodes: 'node 3', 'idle', 'busy', 'down', 'dead'"},
    {KEY_F(4), ACT_FILTER, KEYS_VIEW, "F4", NULL},
    {KEY_F(3), ACT_FILTER, KEYS_VIEW, "F3", NULL}, /* htop's search */
    {KEY_F(2), ACT_COLUMNS, KEYS_VIEW, "F2", "choose the node table's columns (htop's setup)"},
    {KEY_ESC, ACT_FILTER_CLEAR, KEYS_VIEW, "Esc", "clear the filter"},
    {'m', ACT_MAP, KEYS_VIEW, "m", "heat map: auto (nodes do not fit), full (no table), never"},
    /* panes */
    {'\t', ACT_PANE_NEXT, KEYS_VIEW, "Tab", "next pane"},
    {KEY_BTAB, ACT_PANE_PREV, KEYS_VIEW, "S-Tab", "previous pane"},
    {'1', ACT_PANE_UTIL, KEYS_VIEW, "1", "pane: utilization over time (cluster, selected node)"},
    {'2', ACT_PANE_STEALS, KEYS_VIEW, "2", "pane: steals (thief x victim, or top flows)"},
    {'3', ACT_PANE_LOG, KEYS_VIEW, "3", "pane: event log"},
    {'4', ACT_PANE_DETAIL, KEYS_VIEW, "4", "pane: selected node's detail"},
    {'5', ACT_PANE_JOBS, KEYS_VIEW, "5",
     "pane: jobs (state, tasks ended, progress, elapsed, efficiency)"},
    /* the job every pane shows: htop's u picks a user the same way */
    {'u', ACT_JOB_NEXT, KEYS_VIEW, "u",
     "show one job in every pane: all, then each job in turn (header says which)"},
    {'U', ACT_JOB_ALL, KEYS_VIEW, "U", "show all jobs again"},
    /* replay */
    {' ', ACT_PLAY, KEYS_REPLAY, "Space", "play / pause"},
    {'+', ACT_FASTER, KEYS_REPLAY, "+", "faster (x0.25 .. x64)"},
    {'=', ACT_FASTER, KEYS_REPLAY, "=", NULL},
    {'-', ACT_SLOWER, KEYS_REPLAY, "-", "slower"},
    {'.', ACT_STEP, KEYS_REPLAY, ".", "single step: to the next event, paused"},
    {'g', ACT_SEEK, KEYS_REPLAY, "g", "go to a time (seconds since the run start)"},
    {KEY_LEFT, ACT_BACK, KEYS_REPLAY, "Left", "back 5 s"},
    {KEY_RIGHT, ACT_FORWARD, KEYS_REPLAY, "Right", "forward 5 s"},
    {'[', ACT_START, KEYS_REPLAY, "[", "jump to the start"},
    {']', ACT_END, KEYS_REPLAY, "]", "jump to the end"},
    /* the run */
    {'C', ACT_CANCEL_JOB, KEYS_LIVE, "C", "cancel the job (asks first)"},
    {'K', ACT_TEARDOWN, KEYS_LIVE, "K", "tear the cluster down (asks first)"},
    {'L', ACT_LAUNCH_FORM, KEYS_LIVE, "L", "launch form (once no cluster runs)"},
    {'J', ACT_JOBS, KEYS_LIVE, "J", "the cluster's jobs: state, tasks ended, times (jackdaw jobs)"},
    {'D', ACT_DAEMON_LOG, KEYS_LIVE, "D", "the selected node's daemon log (its last 64 KiB)"},
    {'O', ACT_TASK_OUTPUT, KEYS_LIVE, "O", "a task's output by id: stdout, then stderr (jackdaw logs)"},
    {'T', ACT_TASK_LOOKUP, KEYS_LIVE | KEYS_REPLAY, "T",
     "look a task up by id: its history (jackdaw task)"},
    {'t', ACT_NODE_TASKS, KEYS_LIVE | KEYS_REPLAY, "t",
     "the selected node's running and queued tasks (jackdaw tasks)"},
    {'w', ACT_STEALS_WHOLE, KEYS_LIVE | KEYS_REPLAY, "w",
     "steal matrix: the whole run, or the last 10 s"},
    {'W', ACT_REPORT, KEYS_LIVE | KEYS_REPLAY, "W",
     "write the job's HTML report (jackdaw report) beside its trace"},
    /* the launch form */
    {KEY_DOWN, ACT_FORM_NEXT, KEYS_FORM, "Down", "next field"},
    {'\t', ACT_FORM_NEXT, KEYS_FORM, "Tab", NULL},
    {KEY_UP, ACT_FORM_PREV, KEYS_FORM, "Up", "previous field"},
    {KEY_BTAB, ACT_FORM_PREV, KEYS_FORM, "S-Tab", NULL},
    {KEY_RIGHT, ACT_FORM_CHOICE_NEXT, KEYS_FORM, "Right", "next choice (or type in a text field)"},
    {' ', ACT_FORM_CHOICE_NEXT, KEYS_FORM, "Space", NULL},
    {KEY_LEFT, ACT_FORM_CHOICE_PREV, KEYS_FORM, "Left", "previous choice"},
    {KEY_BACKSPACE, ACT_FORM_ERASE, KEYS_FORM, "BkSp", "erase a character"},
    {127, ACT_FORM_ERASE, KEYS_FORM, "BkSp", NULL},
    {CTRL('h'), ACT_FORM_ERASE, KEYS_FORM, "C-h", NULL},
    {CTRL('u'), ACT_FORM_CLEAR, KEYS_FORM, "C-u", "clear the field"},
    {'\n', ACT_FORM_SUBMIT, KEYS_FORM, "Enter", "launch (on a field: next field)"},
    {KEY_ENTER, ACT_FORM_SUBMIT, KEYS_FORM, "Enter", NULL},
    {KEY_F(5), ACT_FORM_SUBMIT, KEYS_FORM, "F5", NULL},
    {KEY_ESC, ACT_FORM_LEAVE, KEYS_FORM, "Esc", "leave the form (quits when nothing runs)"},
};

const struct key_binding *keys_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

enum action keys_lookup(int key, unsigned mode)
{
    if (key == KEY_MOUSE)
        return ACT_MOUSE;
    if (key == KEY_RESIZE)
        return ACT_RESIZE;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].key == key && (table[i].modes & mode))
            return table[i].action;
    return ACT_NONE;
}

size_t keys_help(unsigned mode, struct help_line *out, size_t cap)
{
    size_t n = 0;
    size_t slot[ACT_COUNT];
    for (int a = 0; a < ACT_COUNT; a++)
        slot[a] = SIZE_MAX;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct key_binding *b = &table[i];
        if (!(b->modes & mode))
            continue;
        if (slot[b->action] == SIZE_MAX) {
            slot[b->action] = n;
            if (n < cap) {
                memset(&out[n], 0, sizeof out[n]);
                out[n].action = b->action;
            }
            n++;
        }
        if (slot[b->action] >= cap)
            continue;
        struct help_line *h = &out[slot[b->action]];
        if (!h->help && b->help)
            h->help = b->help;
        /* Two codes with one name (Enter is '\n' and KEY_ENTER) show once. */
        char name[16], padded[40];
        snprintf(name, sizeof name, " %s ", b->name);
        snprintf(padded, sizeof padded, " %s ", h->keys);
        if (strstr(padded, name))
            continue;
        size_t len = strlen(h->keys);
        snprintf(h->keys + len, sizeof h->keys - len, "%s%s", len ? " " : "", b->name);
    }
    return n;
}
