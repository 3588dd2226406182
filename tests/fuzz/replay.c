/*
 * replay — main() for a fuzz harness built without libFuzzer (gcc, the normal and the
 * sanitizer builds): feeds every file of the directories given, in name order, to
 * LLVMFuzzerTestOneInput once, so that `make check` runs each corpus (tests/fuzz/corpus)
 * through its harness's checks.  A broken check aborts; each file's name goes to stderr
 * before it is replayed, so the last name printed is the culprit (the Makefile keeps
 * that output in a log and shows it on failure).  Exits 1 when a directory cannot be
 * read or holds no input, so that a corpus cannot silently go missing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads a whole file; NULL with errno set on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(buf, cap *= 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
        }
    }
    int err = ferror(f) ? EIO : 0;
    fclose(f);
    if (err || !buf) {
        free(buf);
        errno = err ? err : ENOMEM;
        return NULL;
    }
    *len = n;
    return buf;
}

static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open corpus '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names)
                abort();
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    int rc = 0;
    size_t done = 0;
    for (size_t i = 0; i < count; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(plen);
        snprintf(path, plen, "%s/%s", dir, names[i]);
        size_t len = 0;
        uint8_t *data = slurp(path, &len);
        if (!data) {
            fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(errno));
            rc = -1;
        } else {
            fprintf(stderr, "replay: %s\n", path);
            fflush(stderr);
            /* An exact-size copy, so that the sanitizers see a read past the input. */
            uint8_t *exact = malloc(len ? len : 1);
            memcpy(exact, data, len);
            LLVMFuzzerTestOneInput(exact, len);
            free(exact);
            free(data);
            done++;
        }
        free(path);
        free(names[i]);
    }
    free(names);
    if (done == 0) {
        fprintf(stderr, "replay: no input in '%s'\n", dir);
        return -1;
    }
    printf("replay: %zu inputs from %s\n", done, dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_dir(argv[i]) < 0)
            rc = 1;
    return rc;
}
