/*
 * form — see form.h.  The field table below is the form: its label, its choices (or text),
 * its initial value and its line of help.
 */
#include "tui/form.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/xalloc.h"
#include "core/client/launcher.h"
#include "core/model/hostfile.h"
#include "core/model/task.h"
#include "core/net/bucket.h"
#include "tui/draw.h"

#define LAUNCH_MAX_NODES 4096u
#define CHOICES(...) ((const char *const[]){__VA_ARGS__, NULL})

struct field_spec {
    const char *label;
    const char *const *choices;     /* NULL-terminated; NULL for a text field */
    const char *initial;
    const char *hint;
};

/* Index 6 of the heterogeneity choices is the custom list. */
#define MIX_CUSTOM MIX_PRESET_COUNT

static const struct field_spec specs[FF_COUNT] = {
    [FF_WHERE] = {"Cluster on", CHOICES("local", "hostfile", "slurm"), "local",
                  "local: daemons here; hostfile: one per line over a remote shell; slurm: "
                  "this allocation"},
    [FF_HOSTFILE] = {"  hostfile", NULL, "",
                     "one daemon per line: HOST [slots=N] [speed=F] [addr=A] [port=P]"},
    [FF_RSH] = {"  remote shell", NULL, "ssh -o BatchMode=yes",
                "run as CMD HOST COMMAND-LINE, as ssh is (any wrapper will do)"},
    [FF_PER_TASK] = {"  daemons", CHOICES("per node", "per task"), "per node",
                     "one daemon per allocated node, or one per Slurm task (srun)"},
    [FF_NODES] = {"Nodes", NULL, "8", "node daemons to start on this machine (1-4096)"},
    [FF_SLOTS] = {"Slots per node", NULL, "2", "executor slots of each node"},
    [FF_MIX] = {"Heterogeneity", CHOICES("none", "C1", "C2", "C3", "C4", "C5", "custom"), "none",
                "paper 001 Table 2: nodes of 1 to 24 cores scaled to N; or a custom speed list"},
    [FF_SPEEDS] = {"Speeds", NULL, "1,0.5", "speed factors in (0,1], cycled over the nodes"},
    [FF_STEAL] = {"Stealing", CHOICES("adaptive", "random1", "none", "a2ws", "parsec", "daws",
                                      "daws+a2ws", "lw", "ctws"),
                  "adaptive",
                  "adaptive: sqrt(N) victims, steal half; random1; none; or a --policy preset"},
    [FF_NEIGHBOURS] = {"  victims per try", NULL, "",
                       "victims asked per steal attempt (empty: ceil(sqrt N))"},
    [FF_POLL_MAX] = {"  back-off bound ms", NULL, "", "longest wait between failed steals "
                                                      "(empty: 50000)"},
    [FF_PLACEMENT] = {"Placement", CHOICES("ws", "mlb", "mdl", "rlds", "flds", "auto"), "ws",
                      "ws: data ignored; mlb mdl rlds flds: Algorithm 1; auto: switches"},
    [FF_THRESHOLD] = {"  threshold t", NULL, "", "Algorithm 1's ratio threshold (empty: default)"},
    [FF_SOURCE] = {"Workload", CHOICES("generator", "file"), "generator",
                   "generate a workload now, or read a file (jackdaw-workload(5))"},
    [FF_SHAPE] = {"  shape", CHOICES("bot", "fanin", "fanout", "pipeline", "allpairs",
                                     "imagestack"),
                  "bot", "bag, fan-in, fan-out, pipelines (paper 002); all-pairs, image stacking"},
    [FF_TASKS] = {"  tasks", NULL, "2000", "number of tasks"},
    [FF_PARAM] = {"  degree", NULL, "", "the shape's parameter"},
    [FF_KIND] = {"  task kind", CHOICES("sleep", "noop"), "sleep",
                 "sleep: a duration at speed 1, longer on slower nodes; noop: nothing"},
    [FF_DURATION] = {"  duration s", NULL, "0.01-0.05",
                     "seconds at speed 1.0: D, or A-B drawn uniformly"},
    [FF_OUTPUT] = {"  output bytes", NULL, "0", "bytes each task writes: B, or A-B"},
    [FF_FILE_BYTES] = {"  input file bytes", NULL, "", "bytes of each input file: B, or A-B"},
    [FF_SEED] = {"  seed", NULL, "1", "the same seed gives the same workload"},
    [FF_FILE] = {"  file", NULL, "", "path of a workload file (JSON Lines)"},
    [FF_BANDWIDTH] = {"Network bandwidth", NULL, "",
                      "emulated per-node link, e.g. 1Gbit or 100MB (empty: no emulation)"},
    [FF_LATENCY] = {"Network latency", NULL, "",
                    "emulated one-way latency, e.g. 100us (empty: none)"},
    [FF_MODE] = {"Submission", CHOICES("hashed", "one", "roundrobin", "data"), "hashed",
                 "where tasks start: metadata owner, node 0, i mod N, first input's node"},
    [FF_LAUNCH] = {"", NULL, "", "Enter: start daemons and collector, submit, watch live"},
};

static bool is_choice(enum form_field k)
{
    return specs[k].choices != NULL;
}

static int nchoices(enum form_field k)
{
    int n = 0;
    while (specs[k].choices && specs[k].choices[n])
        n++;
    return n;
}

const char *form_label(enum form_field k)
{
    return (unsigned)k < FF_COUNT ? specs[k].label : "";
}

const char *form_value(const struct form *f, enum form_field k)
{
    if ((unsigned)k >= FF_COUNT)
        return "";
    if (is_choice(k))
        return specs[k].choices[f->choice[k]];
    return f->text[k];
}

static enum gen_shape shape_of(const struct form *f)
{
    return (enum gen_shape)f->choice[FF_SHAPE];
}

/* The parameter field's meaning changes with the shape. */
static const char *param_label(const struct form *f)
{
    switch (shape_of(f)) {
    case GEN_FANIN:
    case GEN_FANOUT: return "  degree";
    case GEN_PIPELINE: return "  pipe size";
    case GEN_ALLPAIRS: return "  files per set";
    case GEN_IMAGESTACK: return "  locality";
    default: return "  -";
    }
}

/* Switching shape puts in that shape's paper values, so the form never keeps a degree
 * where a locality is meant. */
static void shape_defaults(struct form *f)
{
    const char *param = "", *file_bytes = "";
    switch (shape_of(f)) {
    case GEN_FANIN:
    case GEN_FANOUT: param = "4"; break;
    case GEN_PIPELINE: param = "4"; break;
    case GEN_ALLPAIRS: param = "20"; file_bytes = "1000000"; break;
    case GEN_IMAGESTACK: param = "1.38"; file_bytes = "2000000"; break;
    default: break;
    }
    snprintf(f->text[FF_PARAM], FORM_TEXT_MAX, "%s", param);
    snprintf(f->text[FF_FILE_BYTES], FORM_TEXT_MAX, "%s", file_bytes);
}

void form_init(struct form *f)
{
    memset(f, 0, sizeof *f);
    f->error_field = -1;
    for (int k = 0; k < FF_COUNT; k++) {
        f->row[k] = -1;
        form_set(f, (enum form_field)k, specs[k].initial);
    }
    shape_defaults(f);
    /* Most launches are local: the cursor starts on the node count, "Cluster on" is
     * one line up. */
    f->cur = FF_NODES;
}

bool form_visible(const struct form *f, enum form_field k)
{
    bool gen = f->choice[FF_SOURCE] == 0;
    enum gen_shape shape = shape_of(f);
    enum form_where where = (enum form_where)f->choice[FF_WHERE];
    switch (k) {
    case FF_HOSTFILE:
    case FF_RSH: return where == FORM_HOSTFILE;
    case FF_PER_TASK: return where == FORM_SLURM;
    case FF_NODES:
    case FF_SLOTS:
    case FF_MIX: return where == FORM_LOCAL;
    case FF_SPEEDS: return where == FORM_LOCAL && f->choice[FF_MIX] == MIX_CUSTOM;
    case FF_NEIGHBOURS:
    case FF_POLL_MAX:
        /* Victims per try and the back-off bound are the random-victim thieves'
         * (adaptive, random1, parsec, daws): none, A2WS (its own victims and poll
         * bounds), LW and CTWS take neither. */
        switch (f->choice[FF_STEAL]) {
        case 0: case 1: case 4: case 5: return true;
        default: return false;
        }
    case FF_THRESHOLD: return f->choice[FF_PLACEMENT] != 0;
    case FF_SHAPE:
    case FF_KIND:
    case FF_OUTPUT:
    case FF_SEED: return gen;
    case FF_TASKS: return gen && shape != GEN_ALLPAIRS;
    case FF_PARAM: return gen && shape != GEN_BOT;
    case FF_DURATION: return gen && f->choice[FF_KIND] == 0;
    case FF_FILE_BYTES: return gen && (shape == GEN_ALLPAIRS || shape == GEN_IMAGESTACK);
    case FF_FILE: return !gen;
    default: return (unsigned)k < FF_COUNT;
    }
}

int form_set(struct form *f, enum form_field k, const char *value)
{
    if ((unsigned)k >= FF_COUNT || !value)
        return -EINVAL;
    if (is_choice(k)) {
        for (int i = 0; specs[k].choices[i]; i++) {
            if (strcasecmp(specs[k].choices[i], value) == 0) {
                bool changed = f->choice[k] != i;
                f->choice[k] = i;
                if (k == FF_SHAPE && changed)
                    shape_defaults(f);
                return 0;
            }
        }
        return -EINVAL;
    }
    if (strlen(value) >= FORM_TEXT_MAX)
        return -EINVAL;
    snprintf(f->text[k], FORM_TEXT_MAX, "%s", value);
    return 0;
}

static int step_field(const struct form *f, int from, int dir)
{
    for (int k = from + dir; k >= 0 && k < FF_COUNT; k += dir)
        if (form_visible(f, (enum form_field)k))
            return k;
    return from;
}

static void cycle_choice(struct form *f, enum form_field k, int dir)
{
    int n = nchoices(k);
    if (n == 0)
        return;
    f->choice[k] = (f->choice[k] + dir + n) % n;
    if (k == FF_SHAPE)
        shape_defaults(f);
}

enum form_result form_handle(struct form *f, enum action action, int key)
{
    enum form_field k = (enum form_field)f->cur;
    bool text = !is_choice(k) && k != FF_LAUNCH;
    /* A space in a text field is a character (paths may hold one), not a choice. */
    if (text && key == ' ')
        action = ACT_NONE;
    switch (action) {
    case ACT_FORM_NEXT: f->cur = step_field(f, f->cur, 1); return FORM_CONTINUE;
    case ACT_FORM_PREV: f->cur = step_field(f, f->cur, -1); return FORM_CONTINUE;
    case ACT_FORM_CHOICE_NEXT: cycle_choice(f, k, 1); return FORM_CONTINUE;
    case ACT_FORM_CHOICE_PREV: cycle_choice(f, k, -1); return FORM_CONTINUE;
    case ACT_FORM_ERASE:
        if (text && f->text[k][0])
            f->text[k][strlen(f->text[k]) - 1] = '\0';
        return FORM_CONTINUE;
    case ACT_FORM_CLEAR:
        if (text)
            f->text[k][0] = '\0';
        return FORM_CONTINUE;
    case ACT_FORM_SUBMIT:
        /* Enter on a field moves on, as in a paper form; F5 or Enter on Launch submits. */
        if (k == FF_LAUNCH || key == KEY_F(5))
            return FORM_SUBMIT;
        f->cur = step_field(f, f->cur, 1);
        return FORM_CONTINUE;
    case ACT_FORM_LEAVE: return FORM_LEAVE;
    default: break;
    }
    if (key < 0x20 || key > 0x7e)
        return FORM_CONTINUE;
    if (text) {
        size_t len = strlen(f->text[k]);
        if (len + 1 < FORM_TEXT_MAX) {
            f->text[k][len] = (char)key;
            f->text[k][len + 1] = '\0';
        }
    } else if (is_choice(k)) {
        /* A letter picks the next choice that starts with it. */
        int n = nchoices(k);
        for (int d = 1; d <= n; d++) {
            int i = (f->choice[k] + d) % n;
            if (tolower((unsigned char)specs[k].choices[i][0]) == tolower(key)) {
                f->choice[k] = i;
                if (k == FF_SHAPE)
                    shape_defaults(f);
                break;
            }
        }
    }
    return FORM_CONTINUE;
}

/* ---- checks ---------------------------------------------------------------------------- */

static int refuse(struct form *f, enum form_field k, char **cause, const char *why)
{
    const char *label = k == FF_PARAM ? param_label(f) : specs[k].label;
    while (*label == ' ')
        label++;
    snprintf(f->error, sizeof f->error, "%s: %s", label, why);
    f->error_field = (int)k;
    f->cur = (int)k;
    *cause = xstrdup(f->error);
    return -EINVAL;
}

static bool parse_u64(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (!text[0] || text[0] == '-' || !isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *text, double lo, double *out)
{
    char *end;
    if (!text[0])
        return false;
    double v = strtod(text, &end);
    if (*end || !isfinite(v) || !(v >= lo))
        return false;
    *out = v;
    return true;
}

static void add_word(struct form_plan *p, const char *flag, const char *value)
{
    if (p->nwords + 2 > (int)(sizeof p->words / sizeof p->words[0]))
        return;
    p->words[p->nwords++] = flag;
    p->words[p->nwords++] = value;
}

/* A cluster on other hosts: the hostfile is read now, so that a bad line is shown on
 * its field with its file:line, before anything starts. */
static int plan_remote(struct form *f, struct form_plan *p, char **cause)
{
    p->where = (enum form_where)f->choice[FF_WHERE];
    if (p->where == FORM_SLURM) {
        if (!getenv("SLURM_JOB_ID"))
            return refuse(f, FF_WHERE, cause,
                          "not inside a Slurm allocation (start the console under salloc)");
        p->per_task = f->choice[FF_PER_TASK] == 1;
        return 0;
    }
    if (!f->text[FF_HOSTFILE][0])
        return refuse(f, FF_HOSTFILE, cause, "the path of a hostfile");
    if (!f->text[FF_RSH][0])
        return refuse(f, FF_RSH, cause, "a remote shell command, e.g. ssh -o BatchMode=yes");
    struct hostfile hf;
    char *why = NULL;
    if (hostfile_load(&hf, f->text[FF_HOSTFILE], &why) < 0) {
        int rc = refuse(f, FF_HOSTFILE, cause, why ? why : "not a hostfile");
        free(why);
        return rc;
    }
    p->nodes = hf.count;
    hostfile_fini(&hf);
    p->hostfile = f->text[FF_HOSTFILE];
    p->rsh = f->text[FF_RSH];
    return 0;
}

static int plan_cluster(struct form *f, struct form_plan *p, char **cause)
{
    uint64_t v;
    if (f->choice[FF_WHERE] != FORM_LOCAL)
        return plan_remote(f, p, cause);
    if (!parse_u64(f->text[FF_NODES], 1, LAUNCH_MAX_NODES, &v))
        return refuse(f, FF_NODES, cause, "a whole number from 1 to 4096");
    p->nodes = (uint32_t)v;
    if (!parse_u64(f->text[FF_SLOTS], 1, 4096, &v))
        return refuse(f, FF_SLOTS, cause, "a whole number from 1 to 4096");
    p->slots = (uint32_t)v;
    p->speeds[0] = '\0';
    p->mix = MIX_NONE;
    if (f->choice[FF_MIX] == MIX_CUSTOM) {
        if (strlen(f->text[FF_SPEEDS]) >= sizeof p->speeds)
            return refuse(f, FF_SPEEDS, cause, "list too long");
        double *check = xmalloc(p->nodes * sizeof *check);
        char *why = NULL;
        int rc = launcher_parse_speeds(f->text[FF_SPEEDS], check, p->nodes, &why);
        free(check);
        if (rc < 0) {
            /* The parser names the flag; the form names the field. */
            const char *msg = why && strstr(why, ": ") ? strstr(why, ": ") + 2 : why;
            rc = refuse(f, FF_SPEEDS, cause, msg ? msg : "bad list");
            free(why);
            return rc;
        }
        snprintf(p->speeds, sizeof p->speeds, "%s", f->text[FF_SPEEDS]);
    } else if (f->choice[FF_MIX] != MIX_NONE) {
        p->mix = (enum mix_preset)f->choice[FF_MIX];
        mix_speed_list(p->mix, p->nodes, p->speeds, sizeof p->speeds);
    }
    return 0;
}

static int plan_policy(struct form *f, struct form_plan *p, char **cause)
{
    double d;
    uint64_t v;
    /* The first three are --steal modes; the rest name --policy presets (paper 001's
     * A2WS, paper 004's PaRSEC policies, DAWS, the hybrid, and paper 001's baselines). */
    add_word(p, f->choice[FF_STEAL] <= 2 ? "--steal" : "--policy", form_value(f, FF_STEAL));
    if (form_visible(f, FF_NEIGHBOURS) && f->text[FF_NEIGHBOURS][0]) {
        if (!parse_u64(f->text[FF_NEIGHBOURS], 1, LAUNCH_MAX_NODES, &v))
            return refuse(f, FF_NEIGHBOURS, cause, "a whole number of victims, at least 1");
        add_word(p, "--neighbours", f->text[FF_NEIGHBOURS]);
    }
    if (form_visible(f, FF_POLL_MAX) && f->text[FF_POLL_MAX][0]) {
        if (!parse_double(f->text[FF_POLL_MAX], 0, &d) || !(d > 0))
            return refuse(f, FF_POLL_MAX, cause, "milliseconds > 0");
        add_word(p, "--poll-max-ms", f->text[FF_POLL_MAX]);
    }
    /* ws is every preset's default too: only a choice overrides a preset's placement. */
    if (f->choice[FF_PLACEMENT] != 0)
        add_word(p, "--placement", form_value(f, FF_PLACEMENT));
    if (form_visible(f, FF_THRESHOLD) && f->text[FF_THRESHOLD][0]) {
        if (!parse_double(f->text[FF_THRESHOLD], 0, &d))
            return refuse(f, FF_THRESHOLD, cause, "a number >= 0");
        add_word(p, "--threshold", f->text[FF_THRESHOLD]);
    }
    char *why = NULL;
    if (f->text[FF_BANDWIDTH][0]) {
        double bps;
        if (bucket_parse_rate(f->text[FF_BANDWIDTH], &bps, &why) < 0) {
            int rc = refuse(f, FF_BANDWIDTH, cause, why ? why : "a rate like 1Gbit");
            free(why);
            return rc;
        }
        add_word(p, "--bandwidth", f->text[FF_BANDWIDTH]);
    }
    if (f->text[FF_LATENCY][0]) {
        int64_t ns;
        if (bucket_parse_duration(f->text[FF_LATENCY], &ns, &why) < 0) {
            int rc = refuse(f, FF_LATENCY, cause, why ? why : "a duration like 100us");
            free(why);
            return rc;
        }
        add_word(p, "--latency", f->text[FF_LATENCY]);
    }
    return 0;
}

static int plan_workload(struct form *f, struct form_plan *p, char **cause)
{
    p->generate = f->choice[FF_SOURCE] == 0;
    if (!p->generate) {
        if (!f->text[FF_FILE][0])
            return refuse(f, FF_FILE, cause, "the path of a workload file");
        p->file = f->text[FF_FILE];
        return 0;
    }
    struct gen_params *g = &p->gen;
    gen_params_init(g);
    g->shape = shape_of(f);
    g->kind = f->choice[FF_KIND] == 0 ? TASK_SLEEP : TASK_NOOP;
    uint64_t v;
    double d;
    if (g->shape != GEN_ALLPAIRS) {
        if (!parse_u64(f->text[FF_TASKS], 1, 100000000, &v))
            return refuse(f, FF_TASKS, cause, "a whole number from 1 to 10^8");
        g->tasks = (uint32_t)v;
    }
    switch (g->shape) {
    case GEN_FANIN:
    case GEN_FANOUT:
    case GEN_PIPELINE:
        if (!parse_u64(f->text[FF_PARAM], 1, 1000000, &v))
            return refuse(f, FF_PARAM, cause, "a whole number, at least 1");
        if (g->shape == GEN_PIPELINE)
            g->pipe_size = (uint32_t)v;
        else
            g->degree = (uint32_t)v;
        break;
    case GEN_ALLPAIRS:
        if (!parse_u64(f->text[FF_PARAM], 1, 10000, &v))
            return refuse(f, FF_PARAM, cause, "a whole number of files, 1 to 10000");
        g->set_size = (uint32_t)v;
        break;
    case GEN_IMAGESTACK:
        if (!parse_double(f->text[FF_PARAM], 1, &d) || d > g->tasks)
            return refuse(f, FF_PARAM, cause, "tasks per file, from 1 to the task count");
        g->locality = d;
        break;
    default: break;
    }
    char *why = NULL;
    struct { enum form_field k; bool integer; struct gen_range *r; bool used; } ranges[] = {
        {FF_DURATION, false, &g->duration, g->kind == TASK_SLEEP},
        {FF_OUTPUT, true, &g->output_bytes, true},
        {FF_FILE_BYTES, true, &g->file_bytes, form_visible(f, FF_FILE_BYTES)},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        if (!ranges[i].used)
            continue;
        if (gen_range_parse(f->text[ranges[i].k], ranges[i].integer, ranges[i].r, &why) < 0) {
            int rc = refuse(f, ranges[i].k, cause, why ? why : "N or A-B");
            free(why);
            return rc;
        }
    }
    if (!parse_u64(f->text[FF_SEED], 0, UINT64_MAX, &v))
        return refuse(f, FF_SEED, cause, "a whole number");
    g->seed = v;
    if (gen_check(g, &why) < 0) {
        int rc = refuse(f, FF_SHAPE, cause, why ? why : "inconsistent parameters");
        free(why);
        return rc;
    }
    return 0;
}

int form_plan(struct form *f, struct form_plan *p, char **cause)
{
    memset(p, 0, sizeof *p);
    f->error[0] = '\0';
    f->error_field = -1;
    int rc = plan_cluster(f, p, cause);
    if (rc == 0)
        rc = plan_policy(f, p, cause);
    if (rc == 0)
        rc = plan_workload(f, p, cause);
    if (rc < 0)
        return rc;
    int m = submit_mode_parse(form_value(f, FF_MODE));
    p->mode = m < 0 ? SUBMIT_HASHED : (enum submit_mode)m;
    char wl[96];
    if (p->generate)
        snprintf(wl, sizeof wl, "%s of %llu %s tasks", gen_shape_name(p->gen.shape),
                 (unsigned long long)gen_task_count(&p->gen),
                 p->gen.kind == TASK_SLEEP ? "sleep" : "noop");
    else
        snprintf(wl, sizeof wl, "%s", p->file);
    char where[96];
    if (p->where == FORM_HOSTFILE)
        snprintf(where, sizeof where, "%u hosts of %s", p->nodes, p->hostfile);
    else if (p->where == FORM_SLURM)
        snprintf(where, sizeof where, "Slurm job %s, a node per %s", getenv("SLURM_JOB_ID"),
                 p->per_task ? "task" : "node");
    else
        snprintf(where, sizeof where, "%u nodes x %u slots%s%s", p->nodes, p->slots,
                 p->mix != MIX_NONE ? ", mix " : "", p->mix != MIX_NONE ? mix_name(p->mix) : "");
    snprintf(p->summary, sizeof p->summary, "%s, steal %s, placement %s; %s", where,
             form_value(f, FF_STEAL), form_value(f, FF_PLACEMENT), wl);
    return 0;
}

/* ---- drawing --------------------------------------------------------------------------- */

static void mix_line(const struct form *f, char *buf, size_t len)
{
    uint64_t nodes;
    int c = f->choice[FF_MIX];
    if (c == MIX_NONE || c == MIX_CUSTOM ||
        !parse_u64(f->text[FF_NODES], 1, LAUNCH_MAX_NODES, &nodes)) {
        buf[0] = '\0';
        return;
    }
    static const uint32_t kinds[6] = {1, 2, 4, 8, 16, 24};
    int n = snprintf(buf, len, "%s over %llu nodes (paper: %u):", mix_name((enum mix_preset)c),
                     (unsigned long long)nodes, mix_preset_nodes((enum mix_preset)c));
    for (int i = 0; i < 6 && n > 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, " %ux%u",
                      mix_count((enum mix_preset)c, (uint32_t)nodes, kinds[i]), kinds[i]);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " cores, speed = cores/24");
}

/* The first choice of field k to draw so that choice `chosen` fits in `width` columns
 * with as many before it as fit too. */
static int choice_window(enum form_field k, int chosen, int width)
{
    int used = (int)strlen(specs[k].choices[chosen]) + 2, first = chosen;
    while (first > 0 && used + (int)strlen(specs[k].choices[first - 1]) + 2 <= width) {
        first--;
        used += (int)strlen(specs[k].choices[first]) + 2;
    }
    /* All of them fit from the start: no scrolling. */
    int all = 0;
    for (int c = 0; specs[k].choices[c]; c++)
        all += (int)strlen(specs[k].choices[c]) + 2;
    return all <= width + 4 ? 0 : first;
}

void form_draw(struct form *f, int rows, int cols)
{
    for (int k = 0; k < FF_COUNT; k++)
        f->row[k] = -1;
    attrset(draw_attr(STYLE_HEADING));
    mvhline(0, 0, ' ', cols);
    attrset(A_NORMAL);
    draw_text(0, 1, cols - 1, STYLE_HEADING,
              "jackdaw console: launch a cluster   (Enter on Launch or F5 starts it; F1 help)");
    int top = 1, bottom = rows - 3; /* field lines: [top, bottom) */
    int visible[FF_COUNT], nvis = 0, cur_at = 0;
    for (int k = 0; k < FF_COUNT; k++) {
        if (!form_visible(f, (enum form_field)k))
            continue;
        if (k == f->cur)
            cur_at = nvis;
        visible[nvis++] = k;
    }
    int lines = bottom - top;
    if (lines < 1)
        lines = 1;
    if (cur_at < f->scroll)
        f->scroll = cur_at;
    if (cur_at >= f->scroll + lines)
        f->scroll = cur_at - lines + 1;
    if (f->scroll > nvis - lines)
        f->scroll = nvis - lines > 0 ? nvis - lines : 0;
    int cursor_y = -1, cursor_x = 0;
    for (int i = f->scroll; i < nvis && i - f->scroll < lines; i++) {
        enum form_field k = (enum form_field)visible[i];
        int y = top + i - f->scroll;
        bool on = (int)k == f->cur;
        f->row[k] = y;
        if (k == FF_LAUNCH) {
            draw_text(y, 24, cols - 24, on ? STYLE_SELECTED : STYLE_TITLE, "[ Launch ]");
            if (on) {
                cursor_y = y;
                cursor_x = 25;
            }
            continue;
        }
        const char *label = k == FF_PARAM ? param_label(f) : specs[k].label;
        enum draw_style ls = on ? STYLE_SELECTED : f->error_field == (int)k ? STYLE_ERROR
                                                                             : STYLE_LABEL;
        draw_textf(y, 1, 22, ls, "%-21s", label);
        int x = 24;
        if (is_choice(k)) {
            /* On a narrow screen the row scrolls so that the chosen one is always shown,
             * with < and > saying more is there. */
            int n = nchoices(k), chosen_at = f->choice[k], avail = cols - x - 1;
            int first = choice_window(k, chosen_at, avail - 4);
            if (first > 0)
                x += draw_text(y, x, cols - x, STYLE_DIM, "<");
            int c = first;
            for (; c < n; c++) {
                int w = (int)strlen(specs[k].choices[c]) + 2;
                if (x + w > cols - 2 && c > chosen_at)
                    break;
                bool chosen = c == chosen_at;
                char buf[40];
                snprintf(buf, sizeof buf, chosen ? "[%s]" : " %s ", specs[k].choices[c]);
                x += draw_text(y, x, cols - x, chosen ? (on ? STYLE_SELECTED : STYLE_TITLE)
                                                      : STYLE_DIM, buf);
            }
            if (c < n)
                draw_text(y, x, cols - x, STYLE_DIM, ">");
            if (on) {
                cursor_y = y;
                cursor_x = 24;
            }
        } else {
            int w = cols - x - 1;
            const char *t = f->text[k];
            int len = (int)strlen(t);
            /* A long path shows its end, where the typing happens. */
            const char *shown = len > w - 1 && w > 1 ? t + (len - (w - 1)) : t;
            int n = draw_text(y, x, w, on ? STYLE_INPUT : STYLE_NORMAL, shown);
            if (!t[0] && !on)
                draw_text(y, x, w, STYLE_DIM, "(default)");
            if (on) {
                for (int pad = n; pad < 20 && x + pad < cols - 1; pad++)
                    draw_text(y, x + pad, 1, STYLE_INPUT, " ");
                cursor_y = y;
                cursor_x = x + n;
            }
        }
    }
    if (f->scroll > 0)
        draw_text(top, cols - 8, 8, STYLE_DIM, " (more^)");
    if (f->scroll + lines < nvis)
        draw_text(bottom - 1, cols - 8, 8, STYLE_DIM, " (more v)");
    /* Below the fields: the current field's help or the error, then the mix. */
    if (f->error[0])
        draw_text(rows - 3, 1, cols - 1, STYLE_ERROR, f->error);
    else
        draw_text(rows - 3, 1, cols - 1, STYLE_DIM, specs[f->cur].hint);
    char mix[200];
    mix_line(f, mix, sizeof mix);
    draw_text(rows - 2, 1, cols - 1, STYLE_LABEL, mix);
    if (cursor_y >= 0)
        move(cursor_y, cursor_x);
}

bool form_click(struct form *f, int y)
{
    for (int k = 0; k < FF_COUNT; k++) {
        if (f->row[k] == y && y >= 0) {
            f->cur = k;
            return true;
        }
    }
    return false;
}
