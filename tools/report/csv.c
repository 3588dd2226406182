/*
 * csv — see csv.h.
 */
#include "tools/report/csv.h"

#include <math.h>
#include <string.h>

void csv_cell(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

void csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.10g", v);
}
