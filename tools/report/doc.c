/*
 * doc — one document, two syntaxes (see render_internal.h): the report and comparison
 * content is written once and comes out as Markdown or as HTML with the same sections,
 * tables and charts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "tools/report/render_internal.h"

/* An id for a section heading: lower case, words joined by '-'. */
static void anchor(FILE *out, const char *title)
{
    bool dash = false;
    for (const char *s = title; *s; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash)
                putc('-', out);
            putc(c, out);
            dash = false;
        } else {
            dash = true;
        }
    }
}

void doc_begin(struct doc *d, FILE *out, enum doc_kind kind, const struct chart_set *cs,
               const char *title)
{
    *d = (struct doc){.out = out, .kind = kind, .cs = cs};
    if (kind == DOC_HTML) {
        html_begin(out, title);
        fputs("<h1>", out);
        html_text(out, title);
        fputs("</h1>\n", out);
    } else {
        fputs("# ", out);
        md_cell(out, title);
        fputs("\n\n", out);
    }
}

void doc_section(struct doc *d, const char *title)
{
    if (d->kind == DOC_HTML) {
        if (d->in_section)
            fputs("</section>\n", d->out);
        fputs("<section id=\"", d->out);
        anchor(d->out, title);
        fputs("\">\n<h2>", d->out);
        html_text(d->out, title);
        fputs("</h2>\n", d->out);
    } else {
        fputs("## ", d->out);
        md_cell(d->out, title);
        fputs("\n\n", d->out);
    }
    d->in_section = true;
}

void doc_para(struct doc *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        return;
    if (d->kind == DOC_HTML) {
        fputs("<p>", d->out);
        html_text(d->out, s);
        fputs("</p>\n", d->out);
    } else {
        /* A paragraph is free text: only line starts could turn into syntax. */
        fputs(s, d->out);
        fputs("\n\n", d->out);
    }
    free(s);
}

void doc_table(struct doc *d, size_t ncols, const char *const *head, const bool *numeric)
{
    d->ncols = ncols;
    d->numeric = numeric;
    if (d->kind == DOC_HTML) {
        /* A table of names and values has no heading: no empty bar above it. */
        bool any = false;
        for (size_t c = 0; c < ncols; c++)
            any |= head[c] && head[c][0];
        if (!any) {
            fputs("<table>\n<tbody>\n", d->out);
            return;
        }
        fputs("<table>\n<thead><tr>", d->out);
        for (size_t c = 0; c < ncols; c++) {
            fputs("<th>", d->out);
            html_text(d->out, head[c]);
            fputs("</th>", d->out);
        }
        fputs("</tr></thead>\n<tbody>\n", d->out);
        return;
    }
    putc('|', d->out);
    for (size_t c = 0; c < ncols; c++) {
        putc(' ', d->out);
        md_cell(d->out, head[c]);
        fputs(" |", d->out);
    }
    fputs("\n|", d->out);
    for (size_t c = 0; c < ncols; c++)
        fputs(numeric && numeric[c] ? " ---: |" : " --- |", d->out);
    putc('\n', d->out);
}

void doc_row(struct doc *d, const char *const *cells)
{
    if (d->kind == DOC_HTML) {
        fputs("<tr>", d->out);
        for (size_t c = 0; c < d->ncols; c++) {
            fputs(d->numeric && d->numeric[c] ? "<td class=\"n\">" : "<td>", d->out);
            html_text(d->out, cells[c] ? cells[c] : "");
            fputs("</td>", d->out);
        }
        fputs("</tr>\n", d->out);
        return;
    }
    putc('|', d->out);
    for (size_t c = 0; c < d->ncols; c++) {
        putc(' ', d->out);
        md_cell(d->out, cells[c] ? cells[c] : "");
        fputs(" |", d->out);
    }
    putc('\n', d->out);
}

void doc_table_end(struct doc *d)
{
    fputs(d->kind == DOC_HTML ? "</tbody>\n</table>\n" : "\n", d->out);
    d->ncols = 0;
    d->numeric = NULL;
}

void doc_chart(struct doc *d, const char *name)
{
    if (d->kind == DOC_HTML)
        html_chart(d->out, d->cs, name);
    else
        md_chart(d->out, d->cs, name);
}

int doc_end(struct doc *d)
{
    if (d->kind == DOC_HTML) {
        if (d->in_section)
            fputs("</section>\n", d->out);
        html_end(d->out, d->footer);
    }
    fflush(d->out);
    return ferror(d->out) ? -EIO : 0;
}
