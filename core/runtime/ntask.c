/*
 * ntask — a task as a node holds it (part.h): decoded from a SUBMIT, PUSH or grant
 * payload, freed when it ends or leaves.  Apart from node.c so that the parts' unit
 * tests link it without the daemon.
 */
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"

struct ntask *ntask_decode(struct rbuf *r)
{
    struct ntask *t = xcalloc(1, sizeof *t);
    if (proto_get_task(r, &t->spec) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

void ntask_free(struct ntask *t)
{
    if (!t)
        return;
    proto_task_fini(&t->spec);
    free(t);
}
