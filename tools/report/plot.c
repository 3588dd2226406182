/*
 * plot — see plot.h.  Every gnuplot run gets its own temporary directory holding the
 * data file, the script, gnuplot's output and its complaints, and the directory is
 * removed before returning; the finished chart is then copied to where it was asked for,
 * so the script only ever names paths we made.
 */
#include "tools/report/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "tools/report/csv.h"

extern char **environ;

struct plot *plot_create(const char *name, const char *title, enum plot_style style,
                         const char *xlabel, const char *ylabel, const char *xcol,
                         size_t ncols, const char *const *cols)
{
    struct plot *p = xcalloc(1, sizeof *p);
    p->name = xstrdup(name);
    p->title = xstrdup(title ? title : name);
    p->xlabel = xstrdup(xlabel ? xlabel : "");
    p->ylabel = xstrdup(ylabel ? ylabel : "");
    p->xcol = xstrdup(xcol ? xcol : "x");
    p->style = style;
    p->ncols = ncols;
    p->cols = xcalloc(ncols ? ncols : 1, sizeof *p->cols);
    for (size_t i = 0; i < ncols; i++)
        p->cols[i] = xstrdup(cols[i] ? cols[i] : "");
    p->ymin = p->ymax = NAN;
    return p;
}

void plot_destroy(struct plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ncols; i++)
        free(p->cols[i]);
    for (size_t i = 0; i < p->nrows; i++)
        free(p->labels[i]);
    free(p->cols);
    free(p->labels);
    free(p->x);
    free(p->v);
    free(p->name);
    free(p->title);
    free(p->xlabel);
    free(p->ylabel);
    free(p->xcol);
    free(p);
}

void plot_add_row(struct plot *p, const char *label, double x, const double *values)
{
    if (p->nrows == p->cap_rows) {
        p->cap_rows = p->cap_rows ? 2 * p->cap_rows : 64;
        p->labels = xrealloc(p->labels, p->cap_rows * sizeof *p->labels);
        p->x = xrealloc(p->x, p->cap_rows * sizeof *p->x);
        p->v = xrealloc(p->v, p->cap_rows * (p->ncols ? p->ncols : 1) * sizeof *p->v);
    }
    p->labels[p->nrows] = label ? xstrdup(label) : NULL;
    p->x[p->nrows] = x;
    memcpy(&p->v[p->nrows * p->ncols], values, p->ncols * sizeof *values);
    p->nrows++;
}

/* ---- CSV ------------------------------------------------------------------------------ */

int plot_write_csv(const struct plot *p, FILE *out)
{
    csv_cell(out, p->xcol);
    for (size_t c = 0; c < p->ncols; c++) {
        putc(',', out);
        csv_cell(out, p->cols[c]);
    }
    putc('\n', out);
    for (size_t r = 0; r < p->nrows; r++) {
        if (p->labels[r])
            csv_cell(out, p->labels[r]);
        else
            csv_num(out, p->x[r]);
        for (size_t c = 0; c < p->ncols; c++) {
            putc(',', out);
            csv_num(out, p->v[r * p->ncols + c]);
        }
        putc('\n', out);
    }
    return ferror(out) ? -EIO : 0;
}

int plot_save_csv(const struct plot *p, const char *path, char **cause)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        *cause = xasprintf("cannot write '%s': %s", path, strerror(e));
        return -e;
    }
    int rc = plot_write_csv(p, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        *cause = xasprintf("cannot write '%s': %s", path, strerror(-rc));
    return rc;
}

/* ---- running gnuplot ------------------------------------------------------------------ */

static const char *gnuplot_program(void)
{
    const char *g = getenv("JACKDAW_GNUPLOT");
    return g && *g ? g : "gnuplot";
}

/* Runs argv with stdin from /dev/null, stdout to out_fd (or /dev/null) and stderr to
 * err_path (or /dev/null).  Returns the exit status, or a negative errno when it could
 * not be started. */
static int run(char *const argv[], int out_fd, const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path ? err_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -rc;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool plot_gnuplot_available(char **version)
{
    /* Offline tool, one thread.  Asked again when $JACKDAW_GNUPLOT changes. */
    static int known = -1;
    static char *answer, *asked;
    const char *prog = gnuplot_program();
    if (known >= 0 && strcmp(asked, prog) != 0) {
        free(answer);
        free(asked);
        answer = asked = NULL;
        known = -1;
    }
    if (known < 0) {
        asked = xstrdup(prog);
        int fds[2];
        if (pipe(fds) < 0) {
            answer = xasprintf("cannot run %s: %s", prog, strerror(errno));
            known = 0;
        } else {
            char *argv[] = {(char *)prog, "--version", NULL};
            /* the read end must not stay open in the child, or EOF never comes */
            fcntl(fds[0], F_SETFD, FD_CLOEXEC);
            int rc = run(argv, fds[1], NULL);
            close(fds[1]);
            char line[256] = "";
            ssize_t got = read(fds[0], line, sizeof line - 1);
            close(fds[0]);
            line[got > 0 ? got : 0] = '\0';
            line[strcspn(line, "\r\n")] = '\0';
            if (rc == 0 && strncmp(line, "gnuplot", 7) == 0) {
                answer = xstrdup(line);
                known = 1;
            } else {
                answer = rc < 0 ? xasprintf("cannot run '%s': %s", prog, strerror(-rc))
                                : xasprintf("'%s --version' did not answer as gnuplot does "
                                            "(exit status %d)", prog, rc);
                known = 0;
            }
        }
    }
    if (version)
        *version = xstrdup(answer);
    return known == 1;
}

/* A gnuplot single-quoted string: only the quote itself needs doubling. */
static void gp_string(FILE *f, const char *s)
{
    putc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            putc('\'', f);
        if (*s == '\n' || *s == '\r')
            putc(' ', f);
        else
            putc(*s, f);
    }
    putc('\'', f);
}

/* gnuplot's data file: CSV with NaN spelt out and labels freed of double quotes and
 * commas (as ' and ;), which its CSV reading handles only in part. */
static void gp_label(FILE *f, const char *s)
{
    putc('"', f);
    for (; *s; s++)
        putc(*s == '"' ? '\'' : *s == ',' ? ';' : *s, f);
    putc('"', f);
}

static void write_gp_data(const struct plot *p, FILE *f)
{
    if (p->style == PLOT_STREAM) {
        for (size_t r = 0; r < p->nrows; r++)
            fprintf(f, "%.10g %.10g %.10g %.0f\n", p->x[r], p->v[r * p->ncols],
                    p->v[r * p->ncols + 1], p->v[r * p->ncols + 2]);
        return;
    }
    if (p->style == PLOT_HEATMAP) {
        for (size_t r = 0; r < p->nrows; r++)
            for (size_t c = 0; c < p->ncols; c++) {
                double v = p->v[r * p->ncols + c];
                fprintf(f, "%zu %zu %.10g\n", c, r, isfinite(v) ? v : 0.0);
            }
        return;
    }
    gp_label(f, p->xcol);
    for (size_t c = 0; c < p->ncols; c++) {
        putc(',', f);
        gp_label(f, p->cols[c]);
    }
    putc('\n', f);
    for (size_t r = 0; r < p->nrows; r++) {
        if (p->labels[r])
            gp_label(f, p->labels[r]);
        else
            fprintf(f, "%.10g", p->x[r]);
        for (size_t c = 0; c < p->ncols; c++) {
            double v = p->v[r * p->ncols + c];
            if (isfinite(v))
                fprintf(f, ",%.10g", v);
            else
                fputs(",NaN", f);
        }
        putc('\n', f);
    }
}

static void tics(FILE *f, const char *axis, char *const *labels, size_t n)
{
    fprintf(f, "set %s (", axis);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        gp_string(f, labels[i] ? labels[i] : "");
        fprintf(f, " %zu", i);
    }
    fputs(")\n", f);
}

/* Bar labels wider than a bar would overlap their neighbours. */
static bool long_labels(const struct plot *p)
{
    size_t room = p->nrows ? 80 / p->nrows : 80;
    for (size_t r = 0; r < p->nrows; r++)
        if (p->labels[r] && strlen(p->labels[r]) > room)
            return true;
    return false;
}

/*
 * Series colours: 20 distinct ones (gnuplot's default cycles after 8, so a chart of the
 * cluster and 8 nodes drew the cluster and node 7 alike): the first black, for the
 * cluster or the first configuration, then a categorical palette whose neighbours
 * differ in hue and lightness.
 */
static const char *const series_colours[] = {
    "#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a",
    "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
};

static void set_linetypes(FILE *f)
{
    size_t n = sizeof series_colours / sizeof series_colours[0];
    for (size_t i = 0; i < n; i++)
        fprintf(f, "set linetype %zu lc rgb '%s'\n", i + 1, series_colours[i]);
    fprintf(f, "set linetype cycle %zu\n", n);
}

static void write_script(const struct plot *p, const char *format, const char *data,
                         const char *out, FILE *f)
{
    bool many = p->nrows > 12 || p->ncols > 12;
    if (strcmp(format, "png") == 0)
        fputs("set terminal pngcairo size 1000,440 font 'Helvetica,11' background rgb "
              "'white'\n", f);
    else if (strcmp(format, "pdf") == 0)
        fputs("set terminal pdfcairo size 8in,3.6in font 'Helvetica,10'\n", f);
    else
        fputs("set terminal svg size 760,340 font 'Helvetica,11' background rgb 'white'\n", f);
    fputs("set output ", f);
    gp_string(f, out);
    fputs("\nset termoption noenhanced\nset title ", f);
    gp_string(f, p->title);
    fputs("\nset xlabel ", f);
    gp_string(f, p->xlabel);
    fputs("\nset ylabel ", f);
    gp_string(f, p->ylabel);
    fputs("\nset grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\n", f);
    if (isfinite(p->ymin) || isfinite(p->ymax)) {
        fputs("set yrange [", f);
        if (isfinite(p->ymin))
            fprintf(f, "%.10g", p->ymin);
        putc(':', f);
        if (isfinite(p->ymax))
            fprintf(f, "%.10g", p->ymax);
        fputs("]\n", f);
    }
    set_linetypes(f);
    switch (p->style) {
    case PLOT_LINES:
        fputs("set datafile separator comma\nset key outside right top\n", f);
        fputs("plot for [i=2:", f);
        fprintf(f, "%zu] ", p->ncols + 1);
        gp_string(f, data);
        fputs(" using 1:i with lines lw 2 title columnheader(i)\n", f);
        break;
    case PLOT_BARS:
    case PLOT_STACKED:
        fputs("set datafile separator comma\nset key outside right top\n"
              "set style data histograms\nset style fill solid 0.85 border -1\n"
              "set boxwidth 0.85\n", f);
        fputs(p->style == PLOT_STACKED ? "set style histogram rowstacked\n"
                                       : "set style histogram clustered gap 1\n", f);
        if (p->ncols == 1)
            fputs("unset key\n", f);
        if (many || long_labels(p))
            fputs("set xtics rotate by 30 right\nset bmargin 8\n", f);
        fputs("set yrange [0:*]\n", f);
        fprintf(f, "plot for [i=2:%zu] ", p->ncols + 1);
        gp_string(f, data);
        fputs(" using i:xtic(1) title columnheader(i)\n", f);
        break;
    case PLOT_STREAM: {
        /* One box per run, START to END, on its lane; coloured by node, failed runs red
         * (linetype 21, outside the nodes' cycle of 20). */
        fputs("unset key\nset linetype 21 lc rgb '#d00000'\nset linetype cycle 21\n"
              "set style fill solid 0.85 noborder\nset grid xtics\n", f);
        bool any = false;
        for (size_t r = 0; r < p->nrows; r++) {
            if (!p->labels[r])
                continue;
            fputs(any ? ", " : "set ytics (", f);
            gp_string(f, p->labels[r]);
            fprintf(f, " %.10g", p->x[r]);
            any = true;
        }
        if (any)
            fputs(")\n", f);
        fputs("set yrange [*:*] reverse\nplot ", f);
        gp_string(f, data);
        fputs(" using (($2+$3)/2):1:(($3-$2)/2):(0.42):($4 > 0 ? $4 : 21) with boxxyerror "
              "lc variable\n", f);
        break;
    }
    case PLOT_HEATMAP:
        fputs("unset key\nset palette defined (0 '#ffffff', 1 '#9ecae1', 2 '#08306b')\n"
              "set tics scale 0\n", f);
        tics(f, "xtics", p->cols, p->ncols);
        tics(f, "ytics", p->labels, p->nrows);
        /* Before the ranges, which stats would apply to the values as to x. */
        fputs("stats ", f);
        gp_string(f, data);
        fputs(" using 3 nooutput\nhalf = STATS_max > 0 ? STATS_max / 2.0 : 1\n", f);
        /* the first row on top, as in the tables */
        fprintf(f, "set xrange [-0.5:%zu.5]\nset yrange [%zu.5:-0.5]\n",
                p->ncols ? p->ncols - 1 : 0, p->nrows ? p->nrows - 1 : 0);
        /* "pixels": one rectangle per cell, crisp at any zoom (plain "image" embeds a
         * bitmap that browsers smooth into a blur).  Numbers white on the dark half of
         * the scale, black on the light half. */
        fputs("plot ", f);
        gp_string(f, data);
        fputs(" using 1:2:3 with image pixels", f);
        if (!many) {
            fputs(", ", f);
            gp_string(f, data);
            fputs(" using 1:2:($3 > half ? '' : sprintf('%g', $3)) with labels tc rgb "
                  "'black', ", f);
            gp_string(f, data);
            fputs(" using 1:2:($3 > half ? sprintf('%g', $3) : '') with labels tc rgb "
                  "'white'", f);
        }
        putc('\n', f);
        break;
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        buf = xgrow(buf, &cap, n + 65536 + 1, 1);
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

struct tmp {
    char dir[4096];
    char data[4200], script[4200], out[4200], err[4200];
};

static int tmp_make(struct tmp *t, const char *format, char **cause)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(t->dir, sizeof t->dir, "%s/jackdaw-plot.XXXXXX", base);
    if (!mkdtemp(t->dir)) {
        int e = errno;
        *cause = xasprintf("cannot make a temporary directory under '%s': %s", base,
                           strerror(e));
        return -e;
    }
    snprintf(t->data, sizeof t->data, "%s/data", t->dir);
    snprintf(t->script, sizeof t->script, "%s/plot.gp", t->dir);
    snprintf(t->out, sizeof t->out, "%s/out.%s", t->dir, format);
    snprintf(t->err, sizeof t->err, "%s/err", t->dir);
    return 0;
}

static void tmp_remove(struct tmp *t)
{
    unlink(t->data);
    unlink(t->script);
    unlink(t->out);
    unlink(t->err);
    rmdir(t->dir);
}

/* Runs gnuplot on p; the chart is left in t->out. */
static int render_tmp(const struct plot *p, const char *format, struct tmp *t, char **cause)
{
    if (!plot_gnuplot_available(NULL)) {
        char *why;
        plot_gnuplot_available(&why);
        *cause = xasprintf("gnuplot is not available (%s)", why);
        free(why);
        return -ENOENT;
    }
    int rc = tmp_make(t, format, cause);
    if (rc < 0)
        return rc;
    FILE *d = fopen(t->data, "w");
    FILE *s = d ? fopen(t->script, "w") : NULL;
    if (!d || !s) {
        rc = -errno;
        *cause = xasprintf("cannot write in '%s': %s", t->dir, strerror(-rc));
        if (d)
            fclose(d);
        return rc;
    }
    write_gp_data(p, d);
    write_script(p, format, t->data, t->out, s);
    bool bad = ferror(d) || ferror(s);
    bad |= fclose(d) != 0;
    bad |= fclose(s) != 0;
    if (bad) {
        *cause = xasprintf("cannot write the data of plot '%s' in '%s'", p->name, t->dir);
        return -EIO;
    }
    char *argv[] = {(char *)gnuplot_program(), t->script, NULL};
    rc = run(argv, -1, t->err);
    struct stat st;
    if (rc != 0 || stat(t->out, &st) < 0 || st.st_size == 0) {
        char *err = slurp(t->err, NULL);
        if (err)
            err[strcspn(err, "\n")] = '\0';
        *cause = rc < 0 ? xasprintf("cannot run gnuplot: %s", strerror(-rc))
                        : xasprintf("gnuplot failed on plot '%s' (exit status %d)%s%s",
                                    p->name, rc, err && *err ? ": " : "", err ? err : "");
        free(err);
        return -EIO;
    }
    return 0;
}

int plot_render(const struct plot *p, const char *format, const char *path, char **cause)
{
    if (strcmp(format, "svg") && strcmp(format, "png") && strcmp(format, "pdf")) {
        *cause = xasprintf("unknown plot format '%s' (svg, png or pdf)", format);
        return -EINVAL;
    }
    struct tmp t;
    memset(&t, 0, sizeof t);
    int rc = render_tmp(p, format, &t, cause);
    if (rc == 0) {
        size_t len;
        char *buf = slurp(t.out, &len);
        FILE *f = buf ? fopen(path, "wb") : NULL;
        if (!f) {
            rc = buf ? -errno : -EIO;
            *cause = xasprintf("cannot write '%s': %s", path, strerror(-rc));
        } else {
            bool bad = fwrite(buf, 1, len, f) != len;
            bad |= fclose(f) != 0;
            if (bad) {
                rc = -EIO;
                *cause = xasprintf("cannot write '%s': %s", path, strerror(EIO));
            }
        }
        free(buf);
    }
    if (t.dir[0])
        tmp_remove(&t);
    return rc;
}

int plot_render_svg(const struct plot *p, char **svg, char **cause)
{
    *svg = NULL;
    struct tmp t;
    memset(&t, 0, sizeof t);
    int rc = render_tmp(p, "svg", &t, cause);
    if (rc == 0) {
        char *buf = slurp(t.out, NULL);
        char *start = buf ? strstr(buf, "<svg") : NULL;
        if (!start) {
            *cause = xasprintf("gnuplot wrote no SVG for plot '%s'", p->name);
            rc = -EIO;
        } else {
            *svg = xstrdup(start);
        }
        free(buf);
    }
    if (t.dir[0])
        tmp_remove(&t);
    return rc;
}
