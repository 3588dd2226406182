/*
 * text — bounding the outside strings we echo back to people.
 *
 * A workload's command, a task's output or an id can be arbitrarily long, and echoing it
 * whole turns one error line into megabytes on a terminal or in a report.  Everything
 * that quotes such a string in a message, a summary or a record cuts it here, the same
 * way everywhere: the first `max` bytes (never inside a UTF-8 sequence), then the marker
 * "… (N bytes)" giving the full length, so a reader knows it was cut and by how much.
 *
 * Owns nothing.  Called by the workload parser (core/model), the executor's errors
 * (core/runtime/exec_spawn.c), the client's failure summary (core/client/follow.c) and
 * the command line's suggestions (tools/cmd: text_edit_distance).
 */
#ifndef JACKDAW_TEXT_H
#define JACKDAW_TEXT_H

#include <stddef.h>

/* What a message shows of a quoted command, id or key before cutting it. */
#define TEXT_SHOWN 80

/*
 * Length of the prefix of s[0..len) that fits in max bytes without splitting a UTF-8
 * sequence: len itself when len <= max.
 */
size_t text_cut_len(const char *s, size_t len, size_t max);

/*
 * A fresh string (xalloc: aborts on out of memory): s[0..len) when len <= max, else its
 * first bytes (text_cut_len) followed by "… (LEN bytes)".  s need not be NUL-terminated
 * and may hold NULs (they end the copy early, as C strings would when printed).
 */
char *text_clip(const char *s, size_t len, size_t max);

/*
 * Edits between a and b: insertions, deletions, substitutions and swaps of two adjacent
 * bytes, each 1 (so "sumbit" is 1 from "submit"), for "did you mean" suggestions.
 * Strings longer than TEXT_EDIT_MAX give SIZE_MAX: a typo is short.
 */
#define TEXT_EDIT_MAX 64
size_t text_edit_distance(const char *a, const char *b);

#endif
