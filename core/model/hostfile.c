/*
 * hostfile — see hostfile.h.  A hand-written file read by a person who will fix it:
 * every error names the line and the word, and nothing is guessed (an unknown key is an
 * error, not ignored, so that "slot=4" does not silently launch with the default).
 */
#include "core/model/hostfile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

int hostfile_is_address(const char *text)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, text, buf) == 1 || inet_pton(AF_INET6, text, buf) == 1;
}

void hostfile_fini(struct hostfile *h)
{
    free(h->path);
    free(h->hosts);
    memset(h, 0, sizeof *h);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* A printable copy of a word for a message: bounded, control bytes shown as '?'. */
static char *shown(const char *w, size_t len)
{
    size_t n = len > 60 ? 60 : len;
    char *s = xmalloc(n + 4);
    for (size_t i = 0; i < n; i++)
        s[i] = (unsigned char)w[i] < 0x20 || (unsigned char)w[i] >= 0x7f ? '?' : w[i];
    strcpy(s + n, len > n ? "..." : "");
    return s;
}

/* A whole number in [lo, hi] spelled with digits only. */
static bool whole(const char *v, size_t len, unsigned long lo, unsigned long hi,
                  unsigned long *out)
{
    if (len == 0 || len > 9)
        return false;
    unsigned long x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        x = x * 10 + (unsigned long)(v[i] - '0');
    }
    *out = x;
    return x >= lo && x <= hi;
}

static bool real(const char *v, size_t len, double *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, v, len);
    buf[len] = '\0';
    char *end;
    double x = strtod(buf, &end);
    *out = x;
    return *end == '\0' && x > 0 && x <= 1;
}

/* One option word "key=value" into e; NULL or the complaint (owned). */
static char *option(struct hostfile_entry *e, const char *w, size_t len)
{
    const char *eq = memchr(w, '=', len);
    char *word = shown(w, len);
    char *bad = NULL;
    if (!eq) {
        bad = xasprintf("'%s' is not KEY=VALUE (slots=, speed=, addr=, port=); one host per "
                        "line",
                        word);
        free(word);
        return bad;
    }
    size_t klen = (size_t)(eq - w);
    const char *v = eq + 1;
    size_t vlen = len - klen - 1;
    unsigned long n;
    if (klen == 5 && memcmp(w, "slots", 5) == 0) {
        if (e->slots)
            bad = xasprintf("slots given twice");
        else if (!whole(v, vlen, 1, 100000, &n))
            bad = xasprintf("'%s': slots is a whole number from 1 to 100000", word);
        else
            e->slots = (uint32_t)n;
    } else if (klen == 5 && memcmp(w, "speed", 5) == 0) {
        if (!real(v, vlen, &e->speed))
            bad = xasprintf("'%s': speed is a number in (0, 1]", word);
    } else if (klen == 4 && memcmp(w, "addr", 4) == 0) {
        if (vlen == 0 || vlen >= sizeof e->addr) {
            bad = xasprintf("'%s': addr is a numeric IPv4 or IPv6 address", word);
        } else {
            memcpy(e->addr, v, vlen);
            e->addr[vlen] = '\0';
            if (!hostfile_is_address(e->addr))
                bad = xasprintf("'%s': addr is a numeric IPv4 or IPv6 address (a name goes "
                                "first on the line)",
                                word);
        }
    } else if (klen == 4 && memcmp(w, "port", 4) == 0) {
        if (!whole(v, vlen, 1, 65535, &n))
            bad = xasprintf("'%s': port is a whole number from 1 to 65535", word);
        else
            e->port = (int)n;
    } else {
        bad = xasprintf("unknown option '%s' (slots=, speed=, addr=, port=)", word);
    }
    free(word);
    return bad;
}

/* Parses one line (no newline) into e; NULL or the complaint (owned).  *empty when the
 * line holds no host. */
static char *parse_line(struct hostfile_entry *e, const char *p, size_t len, bool *empty)
{
    const char *hash = memchr(p, '#', len);
    if (hash)
        len = (size_t)(hash - p);
    memset(e, 0, sizeof *e);
    e->speed = 1.0;
    size_t i = 0;
    int words = 0;
    while (i < len) {
        while (i < len && is_space(p[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !is_space(p[i]))
            i++;
        const char *w = p + start;
        size_t wlen = i - start;
        for (size_t k = 0; k < wlen; k++) {
            /* Names go into JSON and onto command lines: printable ASCII only. */
            if ((unsigned char)w[k] < 0x20 || (unsigned char)w[k] >= 0x7f) {
                char *word = shown(w, wlen);
                char *bad = xasprintf("'%s' holds a byte that is not printable ASCII", word);
                free(word);
                return bad;
            }
        }
        if (words++ == 0) {
            /* The host goes to a remote shell's command line: a leading '-' would be
             * taken for one of its options. */
            if (w[0] == '-' || memchr(w, '=', wlen)) {
                char *word = shown(w, wlen);
                char *bad = xasprintf("'%s' is not a host name (the host comes first, then "
                                      "KEY=VALUE options)",
                                      word);
                free(word);
                return bad;
            }
            if (wlen >= sizeof e->name) {
                char *word = shown(w, wlen);
                char *bad = xasprintf("host name '%s' is longer than %d bytes", word,
                                      HOSTFILE_NAME_MAX - 1);
                free(word);
                return bad;
            }
            memcpy(e->name, w, wlen);
            e->name[wlen] = '\0';
            continue;
        }
        char *bad = option(e, w, wlen);
        if (bad)
            return bad;
    }
    *empty = words == 0;
    return NULL;
}

int hostfile_parse(struct hostfile *h, const char *name, const char *text, size_t len,
                   char **cause)
{
    memset(h, 0, sizeof *h);
    h->path = xstrdup(name);
    size_t cap = 0;
    uint32_t line = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        line++;
        struct hostfile_entry e;
        bool empty = false;
        char *bad = memchr(text + at, '\0', end - at)
                        ? xstrdup("holds a NUL byte (not a text file?)")
                        : parse_line(&e, text + at, end - at, &empty);
        if (!bad && !empty && h->count == HOSTFILE_MAX_HOSTS)
            bad = xasprintf("more than %u hosts", HOSTFILE_MAX_HOSTS);
        /* Two daemons of one address cannot share a port. */
        for (uint32_t k = 0; !bad && !empty && e.port && k < h->count; k++) {
            const struct hostfile_entry *o = &h->hosts[k];
            bool same = e.addr[0] || o->addr[0] ? strcmp(e.addr, o->addr) == 0
                                                : strcmp(e.name, o->name) == 0;
            if (same && o->port == e.port)
                bad = xasprintf("%s port %d is taken by line %u already",
                                e.addr[0] ? e.addr : e.name, e.port, o->line);
        }
        if (bad) {
            *cause = xasprintf("%s:%u: %s", name, line, bad);
            free(bad);
            hostfile_fini(h);
            return -EINVAL;
        }
        if (!empty) {
            e.line = line;
            h->hosts = xgrow(h->hosts, &cap, h->count + 1, sizeof *h->hosts);
            h->hosts[h->count++] = e;
        }
        at = end + 1;
    }
    if (h->count == 0) {
        *cause = xasprintf("%s: no hosts (one per line: HOST [slots=N] [speed=F] [addr=A] "
                           "[port=P])",
                           name);
        hostfile_fini(h);
        return -EINVAL;
    }
    return 0;
}

int hostfile_load(struct hostfile *h, const char *path, char **cause)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen(path, "r");
    if (!f) {
        *cause = xasprintf("cannot open hostfile '%s': %s", path, strerror(errno));
        return -errno;
    }
    /* A hostfile is small; a big one is not a hostfile. */
    enum { MAX_BYTES = 4 << 20 };
    char *text = xmalloc(MAX_BYTES + 1);
    size_t len = fread(text, 1, MAX_BYTES + 1, f);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    int rc;
    if (err) {
        *cause = xasprintf("cannot read hostfile '%s': %s", path, strerror(err));
        rc = -err;
    } else if (len > MAX_BYTES) {
        *cause = xasprintf("hostfile '%s' is larger than %d MiB", path, MAX_BYTES >> 20);
        rc = -EFBIG;
    } else {
        rc = hostfile_parse(h, path, text, len, cause);
    }
    free(text);
    return rc;
}
