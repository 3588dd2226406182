/*
 * text — see text.h.
 */
#include "core/base/text.h"

#include <stdint.h>
#include <string.h>

#include "core/base/xalloc.h"

size_t text_cut_len(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    /* Back off continuation bytes (10xxxxxx) so that the cut falls before a lead byte:
     * Avro strings and JSON output must stay valid UTF-8. */
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

char *text_clip(const char *s, size_t len, size_t max)
{
    if (!s)
        return xstrdup("");
    if (len <= max)
        return xstrndup(s, len);
    size_t n = text_cut_len(s, len, max);
    return xasprintf("%.*s… (%zu bytes)", (int)n, s, len);
}

size_t text_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > TEXT_EDIT_MAX || m > TEXT_EDIT_MAX)
        return SIZE_MAX;
    /* The optimal-string-alignment table, three rows at a time (the swap looks two back). */
    size_t rows[3][TEXT_EDIT_MAX + 1];
    size_t *two = rows[0], *one = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++)
        one[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = one[j - 1] + cost;
            if (one[j] + 1 < best)
                best = one[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = two;
        two = one;
        one = cur;
        cur = t;
    }
    return one[m];
}
