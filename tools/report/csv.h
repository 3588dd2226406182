/*
 * csv — the one RFC 4180 writer of the report tools: a cell quoted only when it must be,
 * a number as its shortest faithful text.
 *
 * Owns nothing; writes to the caller's stream.  Called by the CSV renderer
 * (render_csv.c) and by plot.c, which writes the data behind every chart, so that both
 * files quote alike.
 */
#ifndef JACKDAW_REPORT_CSV_H
#define JACKDAW_REPORT_CSV_H

#include <stdio.h>

/* Quoted, with its quotes doubled, when it holds a comma, a quote or a line break;
 * NULL writes an empty cell. */
void csv_cell(FILE *out, const char *s);
/* Empty for NaN and infinities: a spreadsheet reads an empty cell as missing. */
void csv_num(FILE *out, double v);

#endif
