/*
 * text — see text.h.
 */
#include "core/base/text.h"

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
