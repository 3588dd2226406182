/*
 * fuzz_hosts — libFuzzer harness for the two parsers of a many-host launch's outside
 * bytes: the hostfile (a user's file, core/model/hostfile.c) and the lines the launcher
 * reads back from each host's agent (another host's bytes, core/client/agent.c).  The
 * first byte picks which (even: the hostfile, so a seed starting "0"; odd: an agent line,
 * "1"); the rest is the input.  Built by `make fuzz`, replayed over
 * tests/fuzz/corpus/hosts by `make fuzz-replay` (README.md).
 *
 * Besides memory safety it checks their promises: an accepted hostfile has 1 to
 * HOSTFILE_MAX_HOSTS hosts, each with a printable host name that is not an option, a
 * numeric address or none, a port, slots and speed in range, lines in increasing order,
 * and no two hosts of one address on one port; a refused one comes with a cause naming
 * the file, bounded however long the line it quotes.  An agent line is ignored, or
 * parsed with every field in range (the id a node's, below 4096, or the collector's),
 * or refused with a bounded cause.
 */
#include <stdio.h>

#include "core/client/agent.h"
#include "core/model/hostfile.h"
#include "tests/fuzz/fuzz.h"

static void hostfile_case(const uint8_t *data, size_t size)
{
    struct hostfile h;
    char *cause = NULL;
    if (hostfile_parse(&h, "hosts", (const char *)data, size, &cause) < 0) {
        check(cause && strncmp(cause, "hosts", 5) == 0 && strlen(cause) < 512);
        check(!h.hosts && h.count == 0);
        free(cause);
        return;
    }
    check(h.count >= 1 && h.count <= HOSTFILE_MAX_HOSTS);
    for (uint32_t i = 0; i < h.count; i++) {
        const struct hostfile_entry *e = &h.hosts[i];
        size_t n = strlen(e->name);
        check(n > 0 && n < HOSTFILE_NAME_MAX && e->name[0] != '-' && !strchr(e->name, '='));
        for (size_t k = 0; k < n; k++)
            check((unsigned char)e->name[k] > 0x20 && (unsigned char)e->name[k] < 0x7f &&
                  e->name[k] != '#');
        check(!e->addr[0] || hostfile_is_address(e->addr));
        check(e->port >= 0 && e->port <= 65535);
        check(e->slots <= 100000);
        check(e->speed > 0 && e->speed <= 1);
        check(i == 0 || e->line > h.hosts[i - 1].line);
        for (uint32_t j = 0; e->port && j < i; j++) {
            const struct hostfile_entry *o = &h.hosts[j];
            bool same = e->addr[0] || o->addr[0] ? strcmp(e->addr, o->addr) == 0
                                                : strcmp(e->name, o->name) == 0;
            check(!same || o->port != e->port);
        }
    }
    hostfile_fini(&h);
}

static void agent_case(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = '\0';
    struct agent_line al;
    char *cause = NULL;
    enum agent_line_kind kind = agent_parse_line(line, &al, &cause);
    switch (kind) {
    case AGENT_LINE_OTHER: check(!strstr(line, "jackdaw-agent ") && !cause); break;
    case AGENT_LINE_READY:
        check((al.id < 4096 || al.id == AGENT_ID_COLLECTOR) && hostfile_is_address(al.addr) &&
              al.port >= 1 &&
              al.port <= 65535 && al.slots >= 1 && al.slots <= 100000 && !cause);
        break;
    case AGENT_LINE_STARTED:
        check((al.id < 4096 || al.id == AGENT_ID_COLLECTOR) && al.pid >= 1 && !cause);
        break;
    case AGENT_LINE_BAD: check(cause && strlen(cause) < 256); break;
    default: check(0);
    }
    free(cause);
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_logs();
    if (size == 0)
        return 0;
    if (data[0] & 1)
        agent_case(data + 1, size - 1);
    else
        hostfile_case(data + 1, size - 1);
    return 0;
}
