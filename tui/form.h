/*
 * form — the console's launch form: a cluster (here: nodes, slots, heterogeneity; or a
 * hostfile and its remote shell; or the Slurm allocation the console runs in), a policy
 * (stealing and its parameters, placement), a workload (a generator with its parameters,
 * or a file), network emulation and the submission mode; checked and turned into a plan
 * that tui/session.c launches.
 *
 * Owns the fields' text.  The editing and the checks are pure (tests/unit/test_form.c
 * drives them with actions); form_draw draws with curses.  Called by tui/console.c.
 * Return convention: 0 or a negative errno with *cause naming the field.
 */
#ifndef JACKDAW_TUI_FORM_H
#define JACKDAW_TUI_FORM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/client/client.h"
#include "core/model/mix.h"
#include "tui/keys.h"
#include "workloads/gen.h"

enum form_field {
    FF_WHERE, FF_HOSTFILE, FF_RSH, FF_PER_TASK,
    FF_NODES, FF_SLOTS, FF_MIX, FF_SPEEDS,
    FF_STEAL, FF_NEIGHBOURS, FF_POLL_MAX, FF_PLACEMENT, FF_THRESHOLD,
    FF_SOURCE, FF_SHAPE, FF_TASKS, FF_PARAM, FF_KIND, FF_DURATION, FF_OUTPUT, FF_FILE_BYTES,
    FF_SEED, FF_FILE,
    FF_BANDWIDTH, FF_LATENCY, FF_MODE,
    FF_LAUNCH,
    FF_COUNT
};

#define FORM_TEXT_MAX 256

struct form {
    int cur;                            /* the field with the cursor */
    int scroll;                         /* first visible field line (form_draw) */
    char text[FF_COUNT][FORM_TEXT_MAX]; /* text fields */
    int choice[FF_COUNT];               /* choice fields: index into their choices */
    char error[256];                    /* the last check's complaint, shown in red */
    int error_field;                    /* -1 when none */
    int row[FF_COUNT];                  /* screen row of each field as last drawn, or -1 */
};

/* What a checked form asks for.  Pointers borrow the form's text (the form must outlive
 * the plan's use). */
enum form_where { FORM_LOCAL, FORM_HOSTFILE, FORM_SLURM };

struct form_plan {
    enum form_where where;
    const char *hostfile, *rsh;         /* FORM_HOSTFILE */
    bool per_task;                      /* FORM_SLURM */
    uint32_t nodes, slots;              /* nodes: the hostfile's hosts; 0 for Slurm (known
                                           once the daemons run); slots 0 unless local */
    enum mix_preset mix;
    char speeds[512];                   /* list for the launcher; "" for all 1.0 */
    const char *words[24];              /* "--flag", "value" pairs for every daemon */
    int nwords;
    bool generate;                      /* true: gen; false: file */
    struct gen_params gen;
    const char *file;                   /* the workload file when !generate */
    enum submit_mode mode;
    char summary[256];                  /* one line: "8 nodes x 2 slots, C1 mix, ..." */
};

void form_init(struct form *f);
/* Is field k shown, given the other fields (custom speeds only with a custom mix, the
 * generator's fields only with a generator, ...)? */
bool form_visible(const struct form *f, enum form_field k);
const char *form_label(enum form_field k);
/* A field's value as text (a choice's name). */
const char *form_value(const struct form *f, enum form_field k);
/* Sets a field from text: a choice by name, a text field verbatim.  -EINVAL for a choice
 * that does not exist or text too long. */
int form_set(struct form *f, enum form_field k, const char *value);

enum form_result { FORM_CONTINUE, FORM_SUBMIT, FORM_LEAVE };
/* One key: `action` from the key table (KEYS_FORM), `key` the code itself (typed
 * characters go into text fields). */
enum form_result form_handle(struct form *f, enum action action, int key);
/* Checks every visible field and fills the plan; on error sets f->error, f->error_field
 * and moves the cursor there. */
int form_plan(struct form *f, struct form_plan *p, char **cause);

/* Draws the form over the whole screen but the status line; puts the cursor in the
 * current field. */
void form_draw(struct form *f, int rows, int cols);
/* A click on screen row y (as last drawn): moves the cursor there; true when it hit a
 * field. */
bool form_click(struct form *f, int y);

#endif
