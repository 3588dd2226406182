/*
 * render_util — formats, sections and the helpers every renderer shares (see
 * render_internal.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tools/report/render.h"
#include "tools/report/render_internal.h"

const char *const report_sections[] = {
    "Run",
    "Summary",
    "How far from possible",
    "Utilization over time",
    "Per node",
    "Data",
    "Steals",
    "Steal audit",
    "Queue lengths over time",
    "Potential for work stealing",
    "Warnings",
    NULL,
};

const char *const compare_sections[] = {
    "Runs",
    "Figures side by side",
    "Utilization over time",
    "Efficiency and makespan",
    "Tasks per node",
    "Lost core-seconds",
    "Steal matrices",
    "Warnings",
    NULL,
};

static const char *const format_names[] = {
    [REPORT_FORMAT_MD] = "md",
    [REPORT_FORMAT_JSON] = "json",
    [REPORT_FORMAT_CSV] = "csv",
    [REPORT_FORMAT_HTML] = "html",
};

const char *report_format_name(enum report_format f)
{
    return (unsigned)f <= REPORT_FORMAT_HTML ? format_names[f] : "?";
}

int report_format_parse(const char *name, enum report_format *out)
{
    for (int f = REPORT_FORMAT_MD; f <= REPORT_FORMAT_HTML; f++)
        if (strcmp(name, format_names[f]) == 0) {
            *out = (enum report_format)f;
            return 0;
        }
    if (strcmp(name, "markdown") == 0) {
        *out = REPORT_FORMAT_MD;
        return 0;
    }
    return -EINVAL;
}

int report_format_from_path(const char *path, enum report_format *out)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return -EINVAL;
    if (strcasecmp(dot, ".htm") == 0 || strcasecmp(dot, ".html") == 0) {
        *out = REPORT_FORMAT_HTML;
        return 0;
    }
    return report_format_parse(dot + 1, out);
}

/* ---- numbers -------------------------------------------------------------------------- */

/* An integer with thousands separators (no locale: reports must read the same
 * everywhere). */
static const char *grouped(char buf[FIG_BUF], double v)
{
    char digits[40];
    snprintf(digits, sizeof digits, "%.0f", fabs(v));
    size_t len = strlen(digits), o = 0;
    if (v < 0 && strcmp(digits, "0") != 0)
        buf[o++] = '-';
    for (size_t i = 0; i < len && o + 2 < FIG_BUF; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

const char *fmt_seconds(char buf[FIG_BUF], double s)
{
    double a = fabs(s);
    if (!isfinite(s))
        snprintf(buf, FIG_BUF, "–");
    else if (a == 0)
        snprintf(buf, FIG_BUF, "0 s");
    else if (a < 0.001)
        snprintf(buf, FIG_BUF, "%.1f µs", s * 1e6);
    else if (a < 1)
        snprintf(buf, FIG_BUF, "%.2f ms", s * 1e3);
    else if (a < 100)
        snprintf(buf, FIG_BUF, "%.3f s", s);
    else
        snprintf(buf, FIG_BUF, "%.1f s", s);
    return buf;
}

const char *fmt_value(char buf[FIG_BUF], enum report_unit unit, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, FIG_BUF, "–");
        return buf;
    }
    switch (unit) {
    case RU_SECONDS:
        return fmt_seconds(buf, v);
    case RU_RATIO:
        snprintf(buf, FIG_BUF, "%.1f %%", 100 * v);
        return buf;
    case RU_PERCENT:
        snprintf(buf, FIG_BUF, "%.1f %%", v);
        return buf;
    case RU_COUNT:
        return grouped(buf, v);
    case RU_BYTES: {
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        double x = v;
        while (fabs(x) >= 1024 && u < 4) {
            x /= 1024;
            u++;
        }
        snprintf(buf, FIG_BUF, u ? "%.1f %s" : "%.0f %s", x, units[u]);
        return buf;
    }
    case RU_RATE: {
        char g[FIG_BUF];
        if (fabs(v) >= 100)
            snprintf(buf, FIG_BUF, "%s tasks/s", grouped(g, v));
        else
            snprintf(buf, FIG_BUF, "%.2f tasks/s", v);
        return buf;
    }
    case RU_NUMBER:
        snprintf(buf, FIG_BUF, "%.3g", v);
        return buf;
    }
    snprintf(buf, FIG_BUF, "%g", v);
    return buf;
}

const char *fmt_figure(char buf[FIG_BUF], enum report_figure f, double v)
{
    return fmt_value(buf, report_figure_info(f)->unit, v);
}

const char *fmt_task(char buf[FIG_BUF], uint64_t key)
{
    snprintf(buf, FIG_BUF, "%" PRIu32 ":%" PRIu32, (uint32_t)(key >> 32), (uint32_t)key);
    return buf;
}

const char *run_workload(const struct report_analysis *a)
{
    return a->workload_name ? a->workload_name : a->workload_path ? a->workload_path : "?";
}

/* ---- escaping ------------------------------------------------------------------------- */

void html_text(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: putc(*s, out);
        }
    }
}

void md_cell(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n' || *s == '\r')
            putc(' ', out);
        else
            putc(*s, out);
    }
}

/* ---- HTML page ------------------------------------------------------------------------ */

void html_begin(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    html_text(out, title);
    fputs("</title>\n<style>\n"
          "body { font-family: Helvetica, Arial, sans-serif; max-width: 62em; margin: 2em auto;"
          " padding: 0 1em; color: #222; line-height: 1.4; }\n"
          "h1 { font-size: 1.6em; border-bottom: 2px solid #08306b; padding-bottom: .2em; }\n"
          "h2 { font-size: 1.25em; color: #08306b; margin-top: 1.8em;"
          " border-bottom: 1px solid #ccc; }\n"
          "table { border-collapse: collapse; margin: .6em 0; font-size: .92em; display: block;"
          " max-width: 100%; overflow-x: auto; }\n"
          "th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }\n"
          "td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
          "th { background: #eef3f8; }\n"
          "svg { max-width: 100%; height: auto; display: block; margin: .8em 0; }\n"
          ".note { color: #666; font-size: .9em; }\n"
          "@media print { body { max-width: none; margin: 0; }"
          " section { page-break-inside: avoid; } a { color: inherit; } }\n"
          "</style>\n</head>\n<body>\n", out);
}

void html_end(FILE *out, const char *note)
{
    fputs("<p class=\"note\">", out);
    if (note)
        html_text(out, note);
    else
        fputs("Made by jackdaw from the trace alone; the definitions of every figure are in "
              "share/doc/report.md.", out);
    fputs("</p>\n</body>\n</html>\n", out);
}

void html_chart(FILE *out, const struct chart_set *cs, const char *name)
{
    const struct chart *c = charts_find(cs, name);
    if (!c)
        return;
    if (c->svg) {
        fputs("<figure>\n", out);
        fputs(c->svg, out);
        fputs("</figure>\n", out);
        return;
    }
    fputs("<p class=\"note\">No chart", out);
    if (cs && cs->note) {
        fputs(": ", out);
        html_text(out, cs->note);
    }
    fputs(".", out);
    if (c->csv) {
        fputs(" Its data: <a href=\"", out);
        const char *slash = strrchr(c->csv, '/');
        html_text(out, slash ? slash + 1 : c->csv);
        fputs("\">", out);
        html_text(out, slash ? slash + 1 : c->csv);
        fputs("</a>.", out);
    }
    fputs("</p>\n", out);
}

void md_chart(FILE *out, const struct chart_set *cs, const char *name)
{
    const struct chart *c = charts_find(cs, name);
    if (!c || (!c->file && !c->csv))
        return;
    if (c->file) {
        const char *slash = strrchr(c->file, '/');
        fprintf(out, "![%s](%s)\n\n", c->plot->title, slash ? slash + 1 : c->file);
    }
    if (c->csv) {
        const char *slash = strrchr(c->csv, '/');
        fprintf(out, "Data: [%s](%s)\n\n", slash ? slash + 1 : c->csv, slash ? slash + 1 : c->csv);
    }
}
