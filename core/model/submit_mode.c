/*
 * submit_mode — see submit_mode.h.
 */
#include "core/model/submit_mode.h"

#include <string.h>
#include <strings.h>

static const char *const names[] = {"hashed", "one", "roundrobin", "data"};
_Static_assert(sizeof names / sizeof names[0] == SUBMIT_DATA + 1, "a name for every mode");
_Static_assert(sizeof "roundrobin" - 1 == SUBMIT_MODE_NAME_MAX, "the longest name bounds them");

int submit_mode_parse(const char *name)
{
    for (int m = 0; m <= SUBMIT_DATA; m++)
        if (strcasecmp(name, names[m]) == 0)
            return m;
    return -1;
}

const char *submit_mode_name(enum submit_mode mode)
{
    return (unsigned)mode <= SUBMIT_DATA ? names[mode] : "unknown";
}

bool submit_mode_is_name(const char *name)
{
    for (int m = 0; m <= SUBMIT_DATA; m++)
        if (strcmp(name, names[m]) == 0)
            return true;
    return false;
}
