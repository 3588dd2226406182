/*
 * agent_line — the launcher's parser of the lines agents write (agent.h): another
 * host's bytes, so fuzzed (tests/fuzz/fuzz_hosts.c) and kept apart from the agent's
 * process handling, which the fuzzer need not link.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/client/agent.h"
#include "core/model/hostfile.h"

/* The value of "key=" among the words of `line`, copied into out; false when absent
 * or too long. */
static bool field(const char *line, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += klen) {
        if ((p == line || p[-1] == ' ') && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t len = strcspn(v, " ");
            if (len == 0 || len >= n)
                return false;
            memcpy(out, v, len);
            out[len] = '\0';
            return true;
        }
    }
    return false;
}

static bool field_uint(const char *line, const char *key, unsigned long lo, unsigned long hi,
                       unsigned long *v)
{
    char buf[16];
    if (!field(line, key, buf, sizeof buf))
        return false;
    *v = 0;
    for (const char *p = buf; *p; p++) {
        if (*p < '0' || *p > '9' || *v > hi)
            return false;
        *v = *v * 10 + (unsigned long)(*p - '0');
    }
    return *v >= lo && *v <= hi;
}

enum agent_line_kind agent_parse_line(const char *line, struct agent_line *out, char **cause)
{
    memset(out, 0, sizeof *out);
    const char *a = strstr(line, "jackdaw-agent ");
    if (!a)
        return AGENT_LINE_OTHER;
    a += strlen("jackdaw-agent ");
    unsigned long id = 0, port = 0, slots = 0, pid = 0;
    char idtext[16];
    bool collector = field(a, "id", idtext, sizeof idtext) && strcmp(idtext, "collector") == 0;
    bool ok = collector || field_uint(a, "id", 0, 4095, &id);
    enum agent_line_kind kind = AGENT_LINE_BAD;
    if (ok && strncmp(a, "ready ", 6) == 0) {
        ok = field(a, "addr", out->addr, sizeof out->addr) && hostfile_is_address(out->addr) &&
             field_uint(a, "port", 1, 65535, &port) && field_uint(a, "slots", 1, 100000, &slots);
        if (ok && !field(a, "host", out->host, sizeof out->host))
            out->host[0] = '\0';
        out->port = (int)port;
        out->slots = (uint32_t)slots;
        kind = AGENT_LINE_READY;
    } else if (ok && strncmp(a, "started ", 8) == 0) {
        ok = field_uint(a, "pid", 1, 0x7fffffff, &pid);
        out->pid = (int)pid;
        kind = AGENT_LINE_STARTED;
    } else {
        ok = false;
    }
    out->id = collector ? AGENT_ID_COLLECTOR : (uint32_t)id;
    if (!ok) {
        /* The line came from another host: shown bounded and printable. */
        char shown[121];
        size_t n = 0;
        for (const char *p = line; *p && n < sizeof shown - 1; p++)
            shown[n++] = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f ? '?' : *p;
        shown[n] = '\0';
        *cause = xasprintf("an agent line that is not right: '%s%s'", shown, *(line + n) ? "..." : "");
        return AGENT_LINE_BAD;
    }
    return kind;
}

